"""The memory layer under a rebuild from the log (issue 19 part 5, conversations.rebuild).

`memories_forget_derived` is the layer's `reset`: it removes the memories the rules and the
LLM derived from messages that no person decided, so the layer's `write` run over the log
again derives them afresh. It keeps:
- what a person decided: approved, edited (both versions: the edit and the original it
  supersedes), rejected, merged, invalidated, graduated, kept both;
- what a person decided about them: a graduation or a duplicate pair no longer pending;
- what did not come from the log's rules or model: remembered through the API, working
  memory, consolidated patterns, learned censors;
- whatever a kept memory points at (the version it supersedes, the memory it duplicates or
  contradicts), so the history a decision made stays whole.

A decision survives the new derivation because `write` recognises "the same claim" the
way memory_store does — type and normalised text (rules.text_hash) — from the same
messages: a kept memory that is still open takes the repeated claim as a confirmation it
already counted (its evidence is known), and a closed one (rejected, the original of an
edit, merged away) suppresses it (`closed_claims`)."""

from __future__ import annotations

from django.db.models import Q

from memory.models import DuplicatePair, DuplicateStatus, EpisodeCursor, Graduation, GraduationStatus, Memory
from review.services import review_items_forget

DERIVED = Q(source__startswith="rule:") | Q(source__startswith="model:")
# The review kinds whose targets are memories or rows about them (memory/review.py).
MEMORY_KINDS = ("memory", "conflict", "graduation", "low_effectiveness", "duplicate")
_POINTERS = ("supersedes_id", "duplicate_of_id", "conflicts_with_id")


def _kept(workspace_id: int) -> set[int]:
    rows = Memory.objects.filter(workspace_id=workspace_id)
    kept = set(rows.filter(~DERIVED | Q(decided_by__isnull=False)).values_list("pk", flat=True))
    kept |= set(Graduation.objects.filter(workspace_id=workspace_id).exclude(status=GraduationStatus.PENDING)
                .values_list("memory_id", flat=True))
    for keep, drop in (DuplicatePair.objects.filter(workspace_id=workspace_id)
                       .filter(status__in=[DuplicateStatus.MERGED, DuplicateStatus.NOT_DUPLICATES])
                       .values_list("keep_id", "drop_id")):
        kept |= {keep, drop}
    frontier = kept
    while frontier:
        linked = {pk for row in rows.filter(pk__in=frontier).values_list(*_POINTERS) for pk in row if pk}
        frontier = linked - kept
        kept |= frontier
    return kept


def memories_forget_derived(workspace_id: int) -> dict[str, int]:
    doomed = set(Memory.objects.filter(workspace_id=workspace_id).filter(DERIVED).values_list("pk", flat=True))
    doomed -= _kept(workspace_id)
    # Doomed memories point at each other (versions, duplicates); nothing kept points at one.
    Memory.objects.filter(pk__in=doomed).update(supersedes=None, duplicate_of=None, conflicts_with=None,
                                                consolidated_into=None)
    removed = Memory.objects.filter(pk__in=doomed).delete()[1].get(Memory._meta.label, 0) if doomed else 0
    # Episodes are cut again from each conversation's start.
    EpisodeCursor.objects.filter(conversation__workspace_id=workspace_id).delete()
    items = review_items_forget(workspace_id=workspace_id, kinds=MEMORY_KINDS)
    return {"memories": removed, "memory review items": items}
