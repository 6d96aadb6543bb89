"""The derivation pipeline (DESIGN.md, layers): what each app that derives something from
the interaction log plugs in, and the one ordered list of them, `settings.MNEMO_LAYERS`.

A layer is an app folder with a `layer.py` defining a `Layer`; adding one is that folder
plus one line in MNEMO_LAYERS. Core imports no app: the list holds dotted paths, loaded
at runtime, so core reaches the layers without importing them.

Order (MNEMO_LAYERS)
====================
- Deriving: `prepare` then `write` run in list order, so a layer sees what the layers
  before it wrote in the same transaction (memories see the entity candidates of this
  batch; the log's index rows come first, so "processed" already counts this batch).
- Erasing runs in the reverse order: a layer erases before the layers it builds on, and
  the log (first in the list) goes last. Review sits right after the log because it holds
  copies of what every later layer proposed: it erases after their erasers removed their
  rows (an item whose target is gone goes too), and before the log removes the messages
  its items cite.
- Moving and restoring (entity merge and split) and the counts run in list order.

Deriving is claim → prepare → write (conversations.services.interactions_index):
`prepare` runs with no transaction open and holds no lock, so it may call slow providers
(an LLM, a remote embedder); `write` runs in the short transaction that re-locks the
claimed backlog rows and deletes them, so a crash anywhere loses and duplicates nothing."""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from django.conf import settings
from django.utils.module_loading import import_string

Counter = Callable[[Any], int]  # workspace -> how many


@dataclass(frozen=True, eq=False)
class Layer:
    name: str
    # interactions -> drafts. No transaction, no lock: the place for provider calls. The
    # interactions are those just claimed, oldest first, with `entity` loaded.
    prepare: Callable[[Sequence], Any] | None = None
    # (interactions, drafts) -> None, inside the claiming transaction. `interactions` are the
    # claimed ones still waiting (an erasure may have removed some since `prepare`): write
    # only what derives from them.
    write: Callable[[Sequence, Any], None] | None = None
    # interactions -> None, after the write committed, outside any transaction: idempotent
    # follow-up that a periodic task also covers (embedding the rows `write` created).
    after_write: Callable[[Sequence], None] | None = None
    # The log layer only: (workspace id, text) -> a subquery of the ids of its interactions
    # whose content contains `text` (case-insensitive), served by its own index: the review
    # queue's search in the items' source messages (issue 21 part 6).
    interactions_containing: Callable[[int, str], Any] | None = None
    # The log layer only: entity -> ids of its interactions, their processing locked
    # (core.concurrency rank 2), so no worker derives from them while they are erased.
    interactions_of: Callable[[Any], list[int]] | None = None
    # (entity, interaction ids) -> receipt lines {what: rows removed}, inside entity_erase.
    erase: Callable[[Any, list[int]], dict[str, int]] | None = None
    # (source, target) -> {what: moved ids}, recorded on the merge; restore(moved, source)
    # gets the merge's whole record and moves back the ids under its own keys.
    move: Callable[[Any, Any], dict[str, list[int]]] | None = None
    restore: Callable[[Mapping[str, list[int]], Any], None] | None = None
    # review.registry Kind objects this layer owns (core does not import review).
    review_kinds: Sequence[Any] = ()
    # label -> counter: background work still waiting (/status; all 0 = idle).
    pending: Mapping[str, Counter] = field(default_factory=dict)
    # label -> counter: the dashboard home page's numbers.
    counts: Mapping[str, Counter] = field(default_factory=dict)
    # kind -> core.search.SearchKind: what this layer offers to recall, served from its own
    # tables by its `search` module; context.retrieval composes recall from these.
    search_kinds: Mapping[str, Any] = field(default_factory=dict)
    # conversation -> None, in the worker once a closed conversation's summary is written:
    # work a finished conversation makes due (memory consolidation). Idempotent: a
    # conversation may be announced more than once.
    conversation_closed: Callable[[Any], None] | None = None
    # core.archive.tables.Table objects: this layer's rows in a workspace archive (export and
    # import, issue 19 part 6). A table listed here travels with every field it has.
    archive: Sequence[Any] = ()
    # workspace id -> {what: rows removed}, inside the transaction that starts a rebuild
    # (issue 19 part 5, conversations.rebuild): forget what this layer derived from the log
    # that no person decided, so running `write` over the log again derives it afresh.
    # What a person approved, edited, rejected or merged stays, and `write` must not
    # propose a rejected claim again. A layer without it is left alone by a rebuild.
    reset: Callable[[int], dict[str, int]] | None = None
    # (workspace id, after, limit) -> (last id handled or None when none are left, counts):
    # after a rebuild has read the log again, what this layer derives per conversation
    # rather than per message (summaries), in bounded steps past a cursor the rebuild keeps.
    # Idempotent; immutable rows are superseded, never edited.
    rederive: Callable[[int, int, int], tuple[int | None, dict[str, int]]] | None = None


def layers() -> tuple[Layer, ...]:
    """The layers in pipeline order. Read from settings on every call (cached per list),
    so override_settings(MNEMO_LAYERS=...) takes effect in tests."""
    return _load(tuple(settings.MNEMO_LAYERS))


@functools.lru_cache(maxsize=8)
def _load(paths: tuple[str, ...]) -> tuple[Layer, ...]:
    loaded = tuple(import_string(path) for path in paths)
    names = [layer.name for layer in loaded]
    if len(set(names)) != len(names):
        raise ValueError(f"MNEMO_LAYERS names a layer twice: {names}")
    return loaded


def interactions_of(entity) -> list[int]:
    return [pk for layer in layers() if layer.interactions_of for pk in layer.interactions_of(entity)]


def interactions_containing(workspace_id: int, text: str):
    """The log layer's subquery of the workspace's interactions containing `text`, or None
    when no layer in the pipeline keeps the log."""
    return next((layer.interactions_containing(workspace_id, text) for layer in layers()
                 if layer.interactions_containing), None)


def erase(entity, interaction_ids: list[int]) -> dict[str, int]:
    """Every layer's eraser, in the reverse of the pipeline order (module docstring)."""
    receipt: dict[str, int] = {}
    for layer in reversed(layers()):
        if layer.erase:
            receipt.update(layer.erase(entity, interaction_ids))
    return receipt


def move(source, target) -> dict[str, list[int]]:
    moved: dict[str, list[int]] = {}
    for layer in layers():
        if layer.move:
            moved.update(layer.move(source, target))
    return moved


def restore(moved: Mapping[str, list[int]], source) -> None:
    for layer in layers():
        if layer.restore:
            layer.restore(moved, source)


def pending_counts(workspace) -> dict[str, int]:
    found = {label: counter for layer in layers() for label, counter in layer.pending.items()}
    return {label: int(found[label](workspace)) for label in sorted(found)}


def workspace_counts(workspace) -> dict[str, int]:
    return {label: int(counter(workspace)) for layer in layers() for label, counter in layer.counts.items()}


def conversation_closed(conversation) -> None:
    for layer in layers():
        if layer.conversation_closed:
            layer.conversation_closed(conversation)


def search_kinds() -> dict[str, Any]:
    """Every layer's search kinds, in pipeline order (a kind named twice is an error)."""
    found: dict[str, Any] = {}
    for layer in layers():
        for name, kind in layer.search_kinds.items():
            if name in found:
                raise ValueError(f"search kind {name!r} is offered by two layers")
            found[name] = kind
    return found


def rebuildable() -> tuple[Layer, ...]:
    """The layers a rebuild re-derives (those with a `reset`), in pipeline order."""
    return tuple(layer for layer in layers() if layer.reset)


def review_kinds() -> list[Any]:
    return [kind for layer in layers() for kind in layer.review_kinds]
