"""Memories under entity merges and erasure (the memory layer's hooks, memory/layer.py).

A merge moves the memories about the source entity to the target and a split moves
exactly those back. Erasing a person removes every memory about them and every memory
that quotes one of their erased messages (an episode or a fact drawn from them would
otherwise keep their words), with the working-memory items and graduation proposals that
point at those memories, and the text webhook deliveries copied from them."""

from __future__ import annotations

from collections.abc import Mapping

from django.db.models import Q

from memory.models import Graduation, Memory, MemoryEvidence, WorkingMemoryItem
from webhooks.services import deliveries_erase


def memories_move(source, target) -> dict[str, list[int]]:
    ids = list(Memory.objects.filter(subject=source).values_list("pk", flat=True))
    Memory.objects.filter(pk__in=ids).update(subject=target)
    return {"memories": ids}


def memories_restore(moved: Mapping[str, list[int]], source) -> None:
    Memory.objects.filter(pk__in=moved.get("memories", [])).update(subject=source)


def memories_erase(entity, interaction_ids: list[int]) -> dict[str, int]:
    quoting = MemoryEvidence.objects.filter(interaction_id__in=interaction_ids).values("memory_id")
    doomed = set(Memory.objects.filter(Q(subject=entity) | Q(pk__in=quoting)).values_list("pk", flat=True))
    # Versions and duplicates point at each other; a version of a doomed memory goes too.
    while True:
        linked = set(Memory.objects.filter(Q(supersedes_id__in=doomed) | Q(duplicate_of_id__in=doomed)
                                           | Q(conflicts_with_id__in=doomed)).values_list("pk", flat=True)) - doomed
        if not linked:
            break
        doomed |= linked
    WorkingMemoryItem.objects.filter(ref_memory_id__in=doomed).delete()
    Graduation.objects.filter(memory_id__in=doomed).delete()
    Memory.objects.filter(pk__in=doomed).update(supersedes=None, duplicate_of=None, conflicts_with=None)
    # memory.activated events sent about them copied their text.
    deliveries_erase(workspace_id=entity.workspace_id, key="memory_id", ids=doomed)
    return {"memories": Memory.objects.filter(pk__in=doomed).delete()[1].get("memory.Memory", 0)}
