"""The kind registry (DESIGN.md, review): each layer declares the kinds of review item it
owns (`Layer.review_kinds`, core.layers), with the handlers that change its own rows. The queue calls these handlers and never
writes another app's tables itself.

A kind describes a target when an item opens (what the queue shows is copied then), loads
it again when a person decides (raising `Gone` when it no longer waits for a decision),
and approves, rejects, edits-then-approves, merges or — for conflicts — keeps both."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from core import layers
from core.services import Actor


class Gone(Exception):
    """The target was decided, changed or removed outside the queue."""


@dataclass
class Description:
    """What the queue shows for a target, copied onto the item when it opens."""

    text: str
    item_type: str = ""
    source_interaction_id: int | None = None
    span: tuple[int, int] | None = None
    entity_id: int | None = None
    rule: str = ""
    prompt_version: str = ""
    confidence: float = 0.5
    proposal: dict = field(default_factory=dict)


def waiting(rows, target_id: int, label: str, *, pending: str = "candidate", state=lambda row: row.status):
    """The row that still waits for a decision, for a kind's `load`; `Gone` otherwise."""
    row = rows.filter(pk=target_id).first()
    if row is None:
        raise Gone(f"the {label} no longer exists")
    if state(row) != pending:
        raise Gone(f"the {label} is {state(row)} now")
    return row


# approve(target, actor, note, changes) -> result; changes is {} for a plain approval.
Approve = Callable[[Any, Actor, str, dict], dict]
Reject = Callable[[Any, Actor, str], dict]
Merge = Callable[[Any, int, Actor, str], dict]
# (target, limit) -> existing items like it, most similar first, only those similar enough
# to be worth merging: {"id", "text", "status", "type", "what" (memory, entity…),
# "score" (0–1), "basis" (what the score measures: "meaning", "wording", "name")}.
Similar = Callable[[Any, int], list[dict]]


@dataclass(frozen=True)
class Kind:
    name: str
    label: str
    load: Callable[[int, int], Any]  # (workspace_id, target_id) -> target, or raises Gone
    describe: Callable[[Any], Description]
    approve: Approve
    reject: Reject
    # Field -> what it means to the reviewer; an edit may change only these.
    edit_fields: dict[str, str] = field(default_factory=dict)
    merge: Merge | None = None
    # What a merge does, in a sentence the confirmation shows before it is sent.
    merge_effect: str = ""
    both: Reject | None = None  # conflicts: both true at different times
    similar: Similar | None = None
    approve_label: str = "Approve"
    reject_label: str = "Reject"
    # Audit verbs an owner writes when its trust policy approves without a person.
    auto_verbs: tuple[str, ...] = ()
    # (workspace_id or None) -> [(workspace_id, pending targets)], for review_backfill.
    pending: Callable[[int | None], list[tuple[int, list]]] | None = None
    # Set-based bulk decisions: (workspace, target ids, actor, approve, note) -> {decided id:
    # result}. Targets it leaves out go through approve/reject one by one.
    decide_many: Callable[[Any, list[int], Actor, bool, str], dict[int, dict]] | None = None
    # target ids -> those that still exist (an erasure removes the items of the others, whose
    # copied text may quote the erased person).
    alive: Callable[[list[int]], set[int]] | None = None
    # target -> everything a side-by-side view needs (conflicts: both versions, evidence).
    details: Callable[[Any], dict] | None = None
    # Rule (or rule family) -> what it looks for, in plain words: the card's "why"
    # (review.why). The owner keeps these sentences next to its rules.
    rules: Mapping[str, str] = field(default_factory=dict)
    # item -> (URL name, id) of the page the item is about (its memory, entity, gap), for
    # the card's "open" link and the `o` key; the queue reverses it with the workspace slug
    # and `<URL name>_id` (memory_id, entity_id, gap_id).
    page: Callable[[Any], tuple[str, int] | None] | None = None


    # Templates call callables, so they ask these instead of the handlers themselves.
    @property
    def mergeable(self) -> bool:
        return self.merge is not None

    @property
    def two_sided(self) -> bool:
        return self.both is not None

    @property
    def searchable(self) -> bool:
        return self.similar is not None


def kinds() -> dict[str, Kind]:
    """Every layer's kinds, by name, in pipeline order."""
    return {kind.name: kind for kind in layers.review_kinds()}


def kind_get(name: str) -> Kind:
    return kinds()[name]
