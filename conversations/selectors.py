"""Reads for interactions, conversations and summaries."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from datetime import datetime

from django.contrib.postgres.search import SearchQuery
from django.db.models import Exists, Expression, F, OuterRef, Q, QuerySet
from django.db.models.functions import Coalesce

from conversations.models import (
    Conversation,
    ConversationStatus,
    ConversationSummary,
    Interaction,
    InteractionBacklog,
    RebuildJob,
)
from core.models import Workspace


def interactions_unprocessed_count(workspace: Workspace) -> int:
    return InteractionBacklog.objects.filter(workspace=workspace).count()


def summaries_due_count(workspace: Workspace) -> int:
    return conversations_needing_summary(workspace=workspace).count()


def interaction_count(workspace: Workspace) -> int:
    return Interaction.objects.filter(workspace=workspace).count()


def conversation_count(workspace: Workspace) -> int:
    return Conversation.objects.filter(workspace=workspace).count()


def conversations_needing_summary(*, workspace: Workspace | None = None) -> QuerySet[Conversation]:
    """Idle or closed conversations whose current summary (if any) does not cover their
    latest interaction."""
    qs = Conversation.objects.filter(status__in=[ConversationStatus.IDLE, ConversationStatus.CLOSED]).filter(
        Q(current_summary__isnull=True) | Q(current_summary__source_last_id__lt=F("last_interaction_pk"))
    )
    return qs.filter(workspace=workspace) if workspace is not None else qs


def interaction_list(
    *,
    workspace: Workspace,
    entity: int | None = None,
    channel: str | None = None,
    conversation: int | None = None,
    since: datetime | None = None,
    until: datetime | None = None,
    q: str | None = None,
) -> QuerySet[Interaction]:
    qs = Interaction.objects.filter(workspace=workspace).select_related("index")
    if entity is not None:
        qs = qs.filter(entity_id=entity)
    if channel:
        qs = qs.filter(channel=channel)
    if conversation is not None:
        qs = qs.filter(conversation_id=conversation)
    if since is not None:
        qs = qs.filter(occurred_at__gte=since)
    if until is not None:
        qs = qs.filter(occurred_at__lt=until)
    if q:
        qs = qs.filter(search=SearchQuery(q, config="english", search_type="websearch"))
    return qs.order_by("-occurred_at", "-id")


def interaction_ids_containing(workspace_id: int, text: str) -> QuerySet[Interaction]:
    """The ids (a subquery) of the workspace's interactions whose content contains `text`,
    case-insensitive, anywhere in a word: UPPER(content) LIKE, which the trigram index
    interaction_content_trgm serves (three characters or more)."""
    return Interaction.objects.filter(workspace_id=workspace_id, content__icontains=text).values("pk")


def interaction_contents(*, interaction_ids: list[int]) -> Iterator[str]:
    """The texts of these interactions, streamed (an erasure reads every message of a person)."""
    return Interaction.objects.filter(pk__in=interaction_ids).values_list("content", flat=True).iterator()


def interaction_get(*, workspace: Workspace, interaction_id: int, channel: str | None = None) -> Interaction:
    qs = Interaction.objects.filter(workspace=workspace).select_related("index")
    if channel:
        qs = qs.filter(channel=channel)
    return qs.get(pk=interaction_id)


def conversation_list(
    *, workspace: Workspace, channel: str | None = None, status: str | None = None, entity: int | None = None
) -> QuerySet[Conversation]:
    qs = Conversation.objects.filter(workspace=workspace).select_related("entity", "current_summary")
    if channel:
        qs = qs.filter(channel=channel)
    if status:
        qs = qs.filter(status=status)
    if entity is not None:
        qs = qs.filter(entity_id=entity)
    return qs.order_by(F("last_interaction_at").desc(nulls_last=True), "-id")


def conversation_get(*, workspace: Workspace, conversation_id: int, channel: str | None = None) -> Conversation:
    qs = Conversation.objects.select_related("entity", "current_summary")
    if channel:
        qs = qs.filter(channel=channel)
    return qs.get(workspace=workspace, pk=conversation_id)


def summary_chain(*, conversation: Conversation) -> list[ConversationSummary]:
    """Every summary of the conversation, oldest first; the last one is current."""
    return list(ConversationSummary.objects.filter(conversation=conversation).order_by("created_at", "id"))


def recent_interactions(*, conversation: Conversation, limit: int) -> list[Interaction]:
    """The conversation's last `limit` interactions, oldest first."""
    latest = list(
        Interaction.objects.filter(conversation=conversation).select_related("index").order_by("-occurred_at", "-id")[:limit]
    )
    return latest[::-1]


def conversation_channels(*, workspace: Workspace) -> list[str]:
    return list(
        Conversation.objects.filter(workspace=workspace).order_by("channel").values_list("channel", flat=True).distinct()
    )


def conversation_log(*, conversation: Conversation) -> QuerySet[Interaction]:
    """The conversation's interactions in the order they happened."""
    return Interaction.objects.filter(conversation=conversation).order_by("occurred_at", "id")


def entity_conversation_keys(*, workspace: Workspace, entity_ids: Iterable[int]) -> dict[int, set[str]]:
    """entity id -> the conversation keys (thread or handle, per channel) it wrote in, for
    these entities only (their messages through interaction_ws_entity, not the whole log)."""
    rows = (Interaction.objects.filter(workspace=workspace, entity_id__in=list(entity_ids))
            .values_list("entity_id", "conversation__channel", "conversation__key").distinct())
    keys: dict[int, set[str]] = {}
    for entity_id, channel, key in rows:
        keys.setdefault(entity_id, set()).add(f"{channel}:{key}")
    return keys


def _not_reached() -> Exists:
    # A rebuild reading the log again (conversations.rebuild) has not reached the messages
    # past its cursor yet: for the layers it rebuilds they are not processed, embedded or not
    # (a rebuild of `memories` alone keeps the embeddings).
    return Exists(RebuildJob.objects.filter(workspace_id=OuterRef("workspace_id"), status__in=RebuildJob.UNFINISHED,
                                            phase=RebuildJob.Phase.DERIVE, cursor__lt=OuterRef("pk"),
                                            high_water__gte=OuterRef("pk")))


def interactions_after(*, conversation_id: int, after_id: int) -> list[Interaction]:
    """The conversation's interactions past `after_id`, in the order they were logged, each
    with `processed`: whether background processing has reached it (embedded, and not past
    the cursor of a rebuild reading the log again). One statement."""
    return list(Interaction.objects.filter(conversation_id=conversation_id, pk__gt=after_id)
                .annotate(processed=Q(index__isnull=False) & ~_not_reached())
                .select_related("entity").order_by("id"))


def conversations_quiet_past(*, cut: Expression, quiet_since: datetime) -> QuerySet[Conversation]:
    """Conversations with turns past `cut` (an expression giving, per conversation, the last
    interaction id a later layer has dealt with; OuterRef("pk") is the conversation) that went
    quiet: not active any more, or nothing logged since `quiet_since`."""
    # A workspace being rebuilt is cut again from the start (conversations.rebuild): its
    # tails wait for the rebuild, which would otherwise find them cut already.
    return (Conversation.objects.filter(last_interaction_pk__isnull=False)
            .exclude(workspace_id__in=rebuilding_workspace_ids())
            .annotate(cut=Coalesce(cut, 0)).filter(last_interaction_pk__gt=F("cut"))
            .filter(~Q(status=ConversationStatus.ACTIVE) | Q(updated_at__lt=quiet_since)))


def rebuilding_workspace_ids() -> QuerySet:
    """The workspaces with an unfinished rebuild, as a subquery: the worker derives nothing
    new for them until it is done (conversations.rebuild)."""
    return RebuildJob.objects.filter(status__in=RebuildJob.UNFINISHED).values("workspace_id")


def interactions_before(*, conversation_id: int, before_id: int, limit: int) -> list[Interaction]:
    """The `limit` interactions of the conversation just before `before_id`, oldest first
    (what a rule reads back for context, e.g. the request a refusal answers)."""
    rows = Interaction.objects.filter(conversation_id=conversation_id, pk__lt=before_id).order_by("-pk")[:limit]
    return list(reversed(rows))
