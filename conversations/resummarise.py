"""Conversation summaries under a rebuild from the log (issue 19 part 5, the log layer's
`rederive`, run by conversations.rebuild once the messages are read again).

Seed 002: a summary is never edited, only superseded. So a rebuild does not reset
summaries; for each conversation with a current summary it derives the summary again —
over the same ranges the worker summarised (each range's messages, the previous range's
summary carried forward, as conversation_summarise does) with today's summariser (the
rules, or the LLM and its prompt) — and only where the result differs from the current
summary writes a new version that supersedes it: the same range, `revision` + 1. Equal
derivations write nothing, so a second rebuild adds no version. Messages past the current
summary are left to the worker, which summarises them when the conversation is due.

Bounded: a call handles at most `limit` conversations after a cursor (the rebuild keeps it,
so a killed rebuild goes on from there). Each new version is inserted in a short
transaction that checks nobody summarised the conversation meanwhile; the summariser
(possibly an LLM) runs with no transaction open."""

from __future__ import annotations

import json
from dataclasses import asdict

from django.conf import settings
from django.db import IntegrityError, transaction
from django.utils import timezone

from conversations.models import Conversation, ConversationSummary, Interaction
from conversations.services import summary_compose
from core.services import SYSTEM, audit_record


def _ranges(current: ConversationSummary) -> list[int]:
    """The last message of each range the worker summarised up to the current summary."""
    ends = set(ConversationSummary.objects.filter(conversation_id=current.conversation_id, revision=0,
                                                  source_last_id__lte=current.source_last_id)
               .values_list("source_last_id", flat=True))
    return sorted(ends | {current.source_last_id})


def summary_derive(current: ConversationSummary) -> tuple[dict, int] | None:
    """What the current summary's ranges give today: (the summary's fields, source count),
    or None when its messages are gone."""
    previous, after, count, draft, made_by = None, 0, 0, None, ""
    for last in _ranges(current):
        chunk = list(Interaction.objects.filter(conversation_id=current.conversation_id, pk__gt=after, pk__lte=last)
                     .order_by("occurred_at", "id")[:settings.MNEMO_SUMMARY_MAX_TURNS])
        after = last
        if not chunk:
            continue
        draft, made_by = summary_compose(chunk, previous=previous)
        previous, count = draft.text, count + len(chunk)
    if draft is None:
        return None
    return {"text": draft.text, "tone": draft.tone, "pending_actions": [asdict(a) for a in draft.pending_actions],
            "made_by": made_by}, count


def _same(current: ConversationSummary, fields: dict) -> bool:
    """Field by field, the JSON ones as stored (tuples become lists)."""
    def stored(value):
        return json.dumps(value, sort_keys=True, default=str)

    return all(stored(getattr(current, name)) == stored(value) for name, value in fields.items())


def summaries_rederive(workspace_id: int, after: int, limit: int) -> tuple[int | None, dict[str, int]]:
    """The log layer's `rederive` (core.layers): conversations of the workspace past
    `after` (by id), at most `limit`. Returns (the last conversation id handled, or None
    when there were none left; counts)."""
    conversations = list(Conversation.objects.filter(workspace_id=workspace_id, pk__gt=after,
                                                     current_summary__isnull=False)
                         .select_related("current_summary").order_by("pk")[:limit])
    if not conversations:
        return None, {}
    written = 0
    for conversation in conversations:
        current = conversation.current_summary
        derived = summary_derive(current)
        if derived is not None and not _same(current, derived[0]):
            written += _supersede(current, *derived)
    return conversations[-1].pk, {"conversation summaries": len(conversations), "summaries superseded": written}


def _supersede(current: ConversationSummary, fields: dict, count: int) -> int:
    with transaction.atomic():
        locked = Conversation.objects.select_for_update(no_key=True).get(pk=current.conversation_id)
        if locked.current_summary_id != current.pk:
            return 0  # summarised meanwhile: that summary stands
        try:
            with transaction.atomic():
                summary = ConversationSummary.objects.create(
                    workspace_id=locked.workspace_id, conversation=locked, source_first_id=current.source_first_id,
                    source_last_id=current.source_last_id, source_count=count, supersedes=current,
                    revision=current.revision + 1, **fields)
        except IntegrityError:
            return 0
        locked.current_summary, locked.updated_at = summary, timezone.now()
        locked.save(update_fields=["current_summary", "updated_at"])
        audit_record(workspace=locked.workspace, actor=SYSTEM, verb="conversation.summarise", target=summary, data={
            "conversation": locked.pk, "source_count": count, "made_by": summary.made_by, "supersedes": current.pk,
            "revision": summary.revision, "reason": "rebuild"})
    return 1
