"""What an entity's erasure, merge and split do to the log (the conversations layer's
hooks, conversations/layer.py): entities.services calls them through core.layers and
never touches these tables itself.

Erasure deletes the entity's interactions (their embeddings and search vectors live in
the same rows or cascade), every summary of a conversation they were part of, and the
entity's conversations left empty; conversations that keep other people's messages are
re-counted. A merge re-points the source's interactions and conversations at the target;
a split moves exactly those back. Both run inside entities' transaction, which set
mnemo.erasure or mnemo.relink for the log's immutability triggers (migration 0003)."""

from __future__ import annotations

from collections.abc import Mapping

from conversations.models import (Conversation, ConversationSummary, Interaction, InteractionBacklog, InteractionIndex,
                                  InteractionKinds)
from conversations.services import conversations_recount


def interactions_of(entity) -> list[int]:
    """The entity's interactions, with their backlog rows locked (core.concurrency rank 2):
    waits for a worker writing what it derived from them, and keeps others from claiming
    them until the erasure commits."""
    ids = list(Interaction.objects.filter(entity_id=entity.pk).order_by("pk").values_list("pk", flat=True))
    list(InteractionBacklog.objects.select_for_update().filter(interaction_id__in=ids)
         .order_by("interaction_id").values_list("interaction_id", flat=True))
    return ids


def _deleted(queryset) -> int:
    return queryset.delete()[1].get(queryset.model._meta.label, 0)


def log_erase(entity, interaction_ids: list[int]) -> dict[str, int]:
    touched = set(Interaction.objects.filter(pk__in=interaction_ids).values_list("conversation_id", flat=True))
    touched |= set(Conversation.objects.filter(entity_id=entity.pk).values_list("pk", flat=True))
    receipt: dict[str, int] = {}
    Conversation.objects.filter(pk__in=touched).update(current_summary=None)
    # Version chains point backwards (PROTECT); unhook them before deleting the versions.
    ConversationSummary.objects.filter(conversation_id__in=touched).update(supersedes=None)
    receipt["summaries"] = _deleted(ConversationSummary.objects.filter(conversation_id__in=touched))
    receipt["interaction_embeddings"] = InteractionIndex.objects.filter(interaction_id__in=interaction_ids).count()
    receipt["interaction_kinds"] = InteractionKinds.objects.filter(interaction_id__in=interaction_ids).count()
    receipt["interactions"] = _deleted(Interaction.objects.filter(pk__in=interaction_ids))
    # Conversations left with other people's messages stay (re-counted, to be re-summarised);
    # the entity's own conversations left empty go.
    remaining = conversations_recount(conversation_ids=touched, without_entity=entity)
    receipt["conversations"] = _deleted(Conversation.objects.filter(pk__in=touched).exclude(pk__in=remaining))
    return receipt


_MOVED = {"interactions": Interaction, "conversations": Conversation}


def log_move(source, target) -> dict[str, list[int]]:
    moved = {}
    for name, model in _MOVED.items():
        ids = list(model.objects.filter(entity_id=source.pk).values_list("pk", flat=True))
        model.objects.filter(pk__in=ids).update(entity_id=target.pk)
        moved[name] = ids
    # The interactions' kinds follow their interactions (InteractionKinds.entity).
    InteractionKinds.objects.filter(pk__in=moved["interactions"]).update(entity_id=target.pk)
    return moved


def log_restore(moved: Mapping[str, list[int]], source) -> None:
    for name, model in _MOVED.items():
        if moved.get(name):
            model.objects.filter(pk__in=moved[name]).update(entity_id=source.pk)
    if moved.get("interactions"):
        InteractionKinds.objects.filter(pk__in=moved["interactions"]).update(entity_id=source.pk)
