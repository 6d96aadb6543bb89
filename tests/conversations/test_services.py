"""The log's immutability in the database, conversation grouping and lifecycle, summaries
and their chain, and background processing (embeddings) — against the real PostgreSQL."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone as dt_timezone

import pytest
from django.db import DatabaseError, connection, transaction

from conversations import services
from conversations.models import Conversation, ConversationSummary, Interaction, InteractionIndex
from conversations.services import InteractionItem
from core import layers

pytestmark = pytest.mark.django_db

T0 = datetime(2023, 5, 8, 13, 56, tzinfo=dt_timezone.utc)


def log(workspace, *items: InteractionItem):
    return services.interactions_log(workspace=workspace, items=list(items))


def say(speaker: str, text: str, at: datetime, thread: str = "conv-26", **kw) -> InteractionItem:
    return InteractionItem(channel="chat", channel_id=speaker, sender_name=speaker, content=text, occurred_at=at,
                           thread=thread, **kw)


def chat(workspace, start: datetime, lines: list[tuple[str, str]], gap=timedelta(seconds=40), thread="conv-26"):
    items = [say(speaker, text, start + gap * i, thread=thread) for i, (speaker, text) in enumerate(lines)]
    return log(workspace, *items)


SESSION = [
    ("Caroline", "Hey Mel! Good to see you! How have you been?"),
    ("Melanie", "Hey Caroline! I'm swamped with the kids and work. What's up with you?"),
    ("Caroline", "I went to an LGBTQ support group yesterday and it was so powerful."),
    ("Melanie", "Wow, that's great! What happened there?"),
    ("Caroline", "The transgender stories were inspiring. I'm going to keep going every week."),
    ("Melanie", "I painted a lake sunrise last year, it helps me relax."),
    ("Caroline", "Will you show me the painting next time?"),
]


# --- immutability, enforced by PostgreSQL ---------------------------------------------------

def test_a_raw_update_of_an_interaction_fails(workspace):
    [result] = log(workspace, say("Ada", "original words", T0))
    with pytest.raises(DatabaseError, match="immutable"), transaction.atomic(), connection.cursor() as cursor:
        cursor.execute("UPDATE conversations_interaction SET content = 'rewritten' WHERE id = %s", [result.id])
    assert Interaction.objects.get(pk=result.id).content == "original words"


def test_a_raw_delete_of_an_interaction_fails(workspace):
    [result] = log(workspace, say("Ada", "keep me", T0))
    with pytest.raises(DatabaseError, match="immutable"), transaction.atomic(), connection.cursor() as cursor:
        cursor.execute("DELETE FROM conversations_interaction WHERE id = %s", [result.id])
    assert Interaction.objects.filter(pk=result.id).exists()


def test_only_the_erasure_setting_lets_a_delete_through(workspace):
    result, other = log(workspace, say("Ada", "erase me", T0), say("Bob", "not me", T0))
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute("SET LOCAL mnemo.erasure = 'on'")
        cursor.execute("DELETE FROM conversations_interaction WHERE id = %s", [result.id])
        assert not Interaction.objects.filter(pk=result.id).exists()
        cursor.execute("SET LOCAL mnemo.erasure = 'off'")
        with pytest.raises(DatabaseError, match="immutable"), transaction.atomic():
            cursor.execute("DELETE FROM conversations_interaction WHERE id = %s", [other.id])
        transaction.set_rollback(True)
    assert Interaction.objects.filter(pk=result.id).exists()  # the erasure was rolled back


def test_a_summary_cannot_be_edited(workspace):
    chat(workspace, T0, SESSION)
    conversation = Conversation.objects.get()
    services.conversation_set_status(conversation=conversation, status="idle", reason="test")
    summary = services.conversation_summarise(conversation_id=conversation.pk)
    with pytest.raises(DatabaseError, match="immutable"), transaction.atomic(), connection.cursor() as cursor:
        cursor.execute("UPDATE conversations_conversationsummary SET text = 'revised' WHERE id = %s", [summary.pk])
    with pytest.raises(DatabaseError, match="immutable"), transaction.atomic(), connection.cursor() as cursor:
        cursor.execute("DELETE FROM conversations_conversationsummary WHERE id = %s", [summary.pk])


# --- grouping ----------------------------------------------------------------------------------

def test_a_thread_groups_every_participant_into_one_conversation(workspace):
    results = chat(workspace, T0, SESSION)
    assert len({r.conversation_id for r in results}) == 1
    assert len({r.entity_id for r in results}) == 2
    conversation = Conversation.objects.get()
    assert conversation.interaction_count == len(SESSION)
    assert conversation.first_interaction_at == T0
    assert conversation.last_interaction_at == T0 + timedelta(seconds=40) * (len(SESSION) - 1)
    assert conversation.last_interaction_pk == max(r.id for r in results)


def test_without_a_thread_each_sender_handle_is_its_own_conversation(workspace):
    a = log(workspace, say("Ada", "hi", T0, thread=""), say("Ada", "again", T0 + timedelta(seconds=5), thread=""))
    b = log(workspace, say("Bob", "hello", T0, thread=""))
    assert a[0].conversation_id == a[1].conversation_id != b[0].conversation_id


def test_a_message_days_later_starts_a_new_conversation_and_closes_the_old(workspace):
    first = chat(workspace, T0, SESSION)
    later = chat(workspace, T0 + timedelta(days=3), SESSION[:2])
    assert later[0].conversation_id != first[0].conversation_id
    old = Conversation.objects.get(pk=first[0].conversation_id)
    assert old.status == "closed" and "new message" in old.status_reason
    assert Conversation.objects.get(pk=later[0].conversation_id).status == "active"


def test_one_batch_spanning_two_sittings_counts_both_conversations(workspace):
    first = [say(s, t, T0 + timedelta(seconds=40) * i) for i, (s, t) in enumerate(SESSION)]
    later = [say(s, t, T0 + timedelta(days=2, seconds=40 * i)) for i, (s, t) in enumerate(SESSION[:3])]
    results = log(workspace, *first, *later)
    old, new = (Conversation.objects.get(pk=results[0].conversation_id),
                Conversation.objects.get(pk=results[-1].conversation_id))
    assert old.pk != new.pk and old.status == "closed" and new.status == "active"
    for conversation, items in ((old, results[:len(SESSION)]), (new, results[len(SESSION):])):
        assert conversation.interaction_count == len(items)
        assert conversation.last_interaction_pk == max(r.id for r in items)
        assert conversation.last_interaction_at == max(Interaction.objects.get(pk=r.id).occurred_at for r in items)
    assert services.conversation_summarise(conversation_id=old.pk).source_count == len(SESSION)


def test_a_short_pause_keeps_the_conversation(workspace):
    first = chat(workspace, T0, SESSION)
    more = chat(workspace, T0 + timedelta(minutes=20), SESSION[:1])
    assert more[0].conversation_id == first[0].conversation_id


def test_a_late_message_joins_the_open_conversation(workspace):
    first = chat(workspace, T0, SESSION)
    [late] = log(workspace, say("Melanie", "(sent earlier, arrived late)", T0 + timedelta(seconds=10)))
    assert late.conversation_id == first[0].conversation_id
    assert Conversation.objects.get().first_interaction_at == T0


# --- lifecycle: the sweep and summaries -------------------------------------------------------------

def test_the_sweep_moves_a_quiet_conversation_to_idle_then_closed(workspace):
    chat(workspace, T0, SESSION)
    last = T0 + timedelta(seconds=40) * (len(SESSION) - 1)
    assert services.conversations_sweep(now=last + timedelta(minutes=1)) == []
    assert Conversation.objects.get().status == "active"
    changed = services.conversations_sweep(now=last + timedelta(hours=2))
    conversation = Conversation.objects.get()
    assert changed == [conversation.pk] and conversation.status == "idle"
    assert services.conversations_sweep(now=last + timedelta(days=3)) == [conversation.pk]
    assert Conversation.objects.get().status == "closed"


def test_an_idle_conversation_resumes_on_a_new_message(workspace):
    chat(workspace, T0, SESSION)
    conversation = Conversation.objects.get()
    services.conversation_set_status(conversation=conversation, status="idle", reason="test")
    chat(workspace, T0 + timedelta(hours=2), SESSION[:1])
    conversation.refresh_from_db()
    assert conversation.status == "active" and conversation.interaction_count == len(SESSION) + 1


def test_summaries_form_a_chain_and_the_newest_is_current(workspace):
    chat(workspace, T0, SESSION)
    conversation = Conversation.objects.get()
    services.conversation_set_status(conversation=conversation, status="idle", reason="test")
    first = services.conversation_summarise(conversation_id=conversation.pk)
    assert first.source_count == len(SESSION) and first.supersedes is None and first.made_by == "extractive"
    assert "Caroline" in first.text and "Melanie" in first.text
    assert services.conversation_summarise(conversation_id=conversation.pk) is None  # up to date: idempotent

    chat(workspace, T0 + timedelta(hours=1), [("Caroline", "I adopted a puppy named Oscar this morning!")])
    services.conversation_set_status(conversation=Conversation.objects.get(), status="idle", reason="test")
    second = services.conversation_summarise(conversation_id=conversation.pk)
    assert second.supersedes == first and second.source_count == len(SESSION) + 1
    assert second.source_first_id == first.source_first_id
    assert second.source_last_id == Interaction.objects.order_by("-id").first().pk
    conversation.refresh_from_db()
    assert conversation.current_summary == second
    assert list(ConversationSummary.objects.filter(conversation=conversation).order_by("id")) == [first, second]


def test_a_summary_names_pending_actions_and_a_tone(workspace):
    chat(workspace, T0, SESSION)
    summary = services.conversation_summarise(conversation_id=Conversation.objects.get().pk)
    kinds = {a["kind"] for a in summary.pending_actions}
    assert "commitment" in kinds  # "I'm going to keep going every week."
    assert "question" in kinds  # "Will you show me the painting next time?" went unanswered
    assert set(summary.tone) >= {"formality", "technical_level", "sentiment", "pace"}


def test_status_counts_summaries_due(workspace):
    chat(workspace, T0, SESSION)
    conversation = Conversation.objects.get()
    assert layers.pending_counts(workspace)["conversation summaries"] == 0  # still active
    services.conversation_set_status(conversation=conversation, status="idle", reason="test")
    assert layers.pending_counts(workspace)["conversation summaries"] == 1
    services.conversation_summarise(conversation_id=conversation.pk)
    assert layers.pending_counts(workspace)["conversation summaries"] == 0


# --- background processing --------------------------------------------------------------------------

def test_processing_embeds_each_interaction_once(workspace):
    results = chat(workspace, T0, SESSION)
    ids = [r.id for r in results]
    assert layers.pending_counts(workspace)["interactions"] == len(SESSION)
    assert services.interactions_index(interaction_ids=ids) == len(SESSION)
    assert services.interactions_index(interaction_ids=ids) == 0  # idempotent
    assert layers.pending_counts(workspace)["interactions"] == 0
    row = InteractionIndex.objects.get(interaction_id=ids[2])
    assert len(row.embedding) == 384 and row.model == "all-MiniLM-L6-v2"


def test_the_embedding_index_answers_nearest_neighbours(workspace):
    from pgvector.django import CosineDistance

    from core.providers import get_embedder

    results = chat(workspace, T0, SESSION)
    services.interactions_index(interaction_ids=[r.id for r in results])
    [query] = get_embedder().embed(["support group for trans people"])
    nearest = (InteractionIndex.objects.filter(workspace=workspace)
               .order_by(CosineDistance("embedding", query)).values_list("interaction__content", flat=True).first())
    assert "support group" in nearest


# --- with an LLM configured (a local server speaking the OpenAI protocol) ------------------------------

@pytest.fixture
def llm_server(settings):
    from tests.openai_server import OpenAIServer, llm_pointed_at

    server = OpenAIServer()
    yield from llm_pointed_at(server, settings)
    server.close()


def test_an_llm_summary_is_used_when_configured_and_valid(workspace, llm_server):
    import json

    results = chat(workspace, T0, SESSION)
    conversation = Conversation.objects.get()
    llm_server.chat(json.dumps({
        "summary": "Conversation between Caroline and Melanie on 8 May 2023 (7 messages). Caroline found a support group.",
        "tone": {"formality": 0.2, "technical_level": 0.0, "sentiment": 0.7},
        "pending_actions": [{"kind": "question", "text": "Will you show me the painting next time?",
                             "speaker": "Caroline", "interaction_id": results[-1].id}],
        "salient_interaction_ids": [results[2].id],
    }))
    summary = services.conversation_summarise(conversation_id=conversation.pk)
    assert summary.made_by == "llm:summary-v1"
    assert "support group" in summary.text
    assert summary.pending_actions[0]["interaction_id"] == results[-1].id
    assert llm_server.requests and llm_server.requests[0]["path"] == "/v1/chat/completions"


def test_an_llm_failure_falls_back_to_the_extractive_summary(workspace, llm_server):
    chat(workspace, T0, SESSION)
    llm_server.error(503)
    summary = services.conversation_summarise(conversation_id=Conversation.objects.get().pk)
    assert summary.made_by == "extractive" and "Caroline" in summary.text


def test_the_sweep_follows_the_llm_on_whether_a_conversation_paused(workspace, llm_server):
    import json

    from conversations.idle import judge_idle

    chat(workspace, T0, SESSION)
    last = T0 + timedelta(seconds=40) * (len(SESSION) - 1)
    now = last + timedelta(minutes=10)
    conversation = Conversation.objects.get()
    times = [datetime.fromisoformat(t) for t in conversation.recent_times]
    assert judge_idle(times, now, "").state == "idle"  # the rule alone would call it idle
    llm_server.chat(json.dumps({"state": "active", "idle_after_minutes": 30, "reason": "she is fetching the photo"}))
    assert services.conversations_sweep(now=now) == []
    assert Conversation.objects.get().status == "active"

    llm_server.chat(json.dumps({"state": "idle", "idle_after_minutes": 30, "reason": "they stopped"}))
    assert services.conversations_sweep(now=last + timedelta(minutes=45)) == [conversation.pk]
    conversation.refresh_from_db()
    assert conversation.status == "idle" and conversation.status_reason.endswith("(llm:idle-v1)")
    assert len(llm_server.requests) == 2


def test_interactions_whose_task_was_lost_are_processed_by_the_drain(workspace):
    from django.utils import timezone

    from conversations.models import InteractionBacklog

    results = chat(workspace, T0, SESSION)
    assert services.interactions_backlog_drain() == 0  # fresh: their own tasks will do it
    InteractionBacklog.objects.update(created_at=timezone.now() - timedelta(minutes=5))
    assert services.interactions_backlog_drain() == len(results)
    assert InteractionBacklog.objects.count() == 0
    assert InteractionIndex.objects.count() == len(results)


def test_the_sweep_reads_last_messages_in_one_query_however_many_conversations(workspace):
    from django.test.utils import CaptureQueriesContext

    for n in range(6):
        log(workspace, say(f"user{n}", "Thanks, bye!", T0, thread=f"t{n}"))
    with CaptureQueriesContext(connection) as queries:
        changed = services.conversations_sweep(now=T0 + timedelta(hours=1))
    assert len(changed) == 6
    reads = [q["sql"] for q in queries.captured_queries if 'FROM "conversations_interaction"' in q["sql"]]
    assert len(reads) == 1


def test_the_embedding_reads_who_said_it():
    from conversations.services import embedding_text

    assert embedding_text("I went to the support group.", "Caroline") == "Caroline: I went to the support group."
    assert embedding_text("deploy done", "") == "deploy done"
