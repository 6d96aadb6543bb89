"""Memories from background processing against the real database: rule memories with
evidence spans, reinforcement across interactions (a retried batch counts once), a
contradiction from a later message, decision cues routed to entity candidates (and
graduation signal 4), procedures and censors from messages, episodes per segment with the
tail flushed when the conversation goes quiet, the optional LLM extractor through a local
OpenAI-protocol server, and erasure / merge / split covering memories."""

from __future__ import annotations

import json
from datetime import datetime, timedelta, timezone

import pytest

from conversations.models import Interaction
from conversations.services import InteractionItem, interactions_index, interactions_log
from entities.models import Entity
from entities.services import entity_create, entity_erase, entity_merge, entity_split
from memory.models import EpisodeCursor, Graduation, Memory, MemoryEvidence
from memory.services import (
    Draft,
    episodes_flush,
    interactions_prepare_memories,
    interactions_write_memories,
    memory_store,
)
from review.models import ReviewItem
from tests.openai_server import OpenAIServer, llm_pointed_at

pytestmark = pytest.mark.django_db

T0 = datetime(2023, 5, 8, 13, 56, tzinfo=timezone.utc)


def say(workspace, *lines, sender="caroline", thread="t1", start=T0):
    items = [InteractionItem(channel="chat", channel_id=sender, sender_name=sender.title(), content=line,
                             thread=thread, occurred_at=start + timedelta(seconds=10 * i))
             for i, line in enumerate(lines)]
    results = interactions_log(workspace=workspace, items=items)
    ids = [r.id for r in results]
    interactions_index(interaction_ids=ids, batch_size=len(ids) + 64)
    return ids


def rule_memories(**filters):
    return Memory.objects.filter(source__startswith="rule:", **filters).exclude(rule="episode.segment")


def test_a_rule_memory_names_the_speaker_and_quotes_its_span(workspace):
    [iid] = say(workspace, "Honestly, I love hiking in the mountains.")
    memory = rule_memories(type="preference").get()
    assert memory.text.startswith("Caroline") and "hiking" in memory.text
    assert memory.status == "active" and memory.certainty == "extracted" and memory.rule.startswith("preference.")
    assert memory.subject.name == "Caroline" and memory.embedding is not None
    evidence = memory.evidence.get()
    content = Interaction.objects.get(pk=iid).content
    assert evidence.interaction_id == iid and content[evidence.start:evidence.end] == evidence.quote
    assert "love hiking" in evidence.quote


def test_relative_time_is_resolved_against_when_it_was_said(workspace):
    say(workspace, "I went to the LGBTQ support group yesterday.")
    memory = rule_memories(type="episodic").get()
    assert "7 May 2023" in memory.text and memory.event_first.isoformat() == "2023-05-07"


def test_saying_it_again_reinforces_and_a_retry_counts_once(workspace):
    [first] = say(workspace, "I love hiking.")
    [second] = say(workspace, "I love hiking.", start=T0 + timedelta(days=3))
    memory = rule_memories(type="preference").get()
    assert memory.reinforcement_count == 1
    assert set(memory.evidence.values_list("interaction_id", flat=True)) == {first, second}
    retried = list(Interaction.objects.filter(pk=second).select_related("entity"))
    interactions_write_memories(retried, interactions_prepare_memories(retried))
    memory.refresh_from_db()
    assert memory.reinforcement_count == 1 and rule_memories(type="preference").count() == 1


def test_a_later_contradiction_is_proposed_for_review(workspace):
    say(workspace, "I love pineapple on pizza.")
    say(workspace, "I hate pineapple on pizza.", start=T0 + timedelta(days=30))
    old, new = rule_memories(type="preference").order_by("id")
    assert old.status == "active"
    assert new.status == "candidate" and new.conflicts_with_id == old.pk


def test_decision_cues_become_entity_candidates_not_memories(workspace):
    say(workspace, "Decision: we use PostgreSQL for the billing service.")
    decision = Entity.objects.get(kind="decision")
    assert decision.status == "candidate" and decision.evidence.count() == 1
    assert not Memory.objects.filter(text__icontains="PostgreSQL", source__startswith="rule:").exclude(
        rule="episode.segment").exists()


def test_the_entity_extractor_proposing_a_stated_fact_proposes_graduation(workspace):
    said = "Decision: we use PostgreSQL for the billing service."
    say(workspace, said)
    decision = Entity.objects.get(kind="decision")
    stored = memory_store(workspace_id=workspace.pk, draft=Draft(type="fact", text=decision.name, certainty="verbatim"))
    say(workspace, said, start=T0 + timedelta(days=1))
    assert Graduation.objects.filter(memory=stored.memory, signal="extractor", status="pending").exists()


def test_a_procedure_in_a_message_becomes_a_procedure_memory(workspace):
    say(workspace, "To deploy the site:\n1. run the tests\n2. build the image\n3. push to production")
    memory = Memory.objects.get(type="procedure")
    assert memory.procedure.steps == ["run the tests", "build the image", "push to production"]
    assert memory.source.startswith("rule:procedure")


def test_a_warning_in_a_message_becomes_a_censor(workspace):
    say(workspace, "Never deploy on Friday afternoons again.")
    memory = Memory.objects.get(type="censor")
    assert "deploy on Friday afternoons" in memory.censor.trigger and memory.censor.action == "warn"


def test_episodes_per_segment_and_the_quiet_tail_is_flushed(workspace, settings):
    settings.MNEMO_EPISODE_TURNS = 3
    lines = ["We adopted a puppy last week!", "Her name is Luna and she is a beagle.", "She chewed my running shoes.",
             "I am training for the Boston marathon in April.", "My knee hurts after long runs."]
    ids = say(workspace, *lines)
    [episode] = Memory.objects.filter(rule="episode.segment")
    assert episode.type == "episodic" and episode.conversation_id is not None
    assert "8 May 2023" in episode.text and "Caroline" in episode.text
    # Embedded before the writing transaction: the worker foresaw the episode this batch completes.
    assert episode.embedding is not None
    assert set(episode.evidence.values_list("interaction_id", flat=True)) <= set(ids[:3])
    assert EpisodeCursor.objects.get().last_interaction_id == ids[2]
    assert episodes_flush(quiet_minutes=0) == 1
    tail = Memory.objects.filter(rule="episode.segment").order_by("-id").first()
    assert set(tail.evidence.values_list("interaction_id", flat=True)) <= set(ids[3:])
    assert tail.embedding is not None
    assert episodes_flush(quiet_minutes=0) == 0  # nothing left to cut


def _logged(workspace, lines):
    items = [InteractionItem(channel="chat", channel_id="caroline", sender_name="Caroline", content=line,
                             thread="t1", occurred_at=T0 + timedelta(seconds=10 * i)) for i, line in enumerate(lines)]
    return [r.id for r in interactions_log(workspace=workspace, items=items)]


def _episodes_cited():
    return [sorted(m.evidence.values_list("interaction_id", flat=True))
            for m in Memory.objects.filter(rule="episode.segment").order_by("pk")]


LINES = ["We adopted a puppy named Luna last week.", "Luna is a beagle with long floppy ears.",
         "She chewed my running shoes on Monday.", "I am training for the Boston marathon.",
         "My knee hurts after the long runs lately.", "The physio gave me stretches for it."]


def test_a_turn_processed_late_is_not_left_out_of_its_episode(workspace, settings):
    """Episodes are runs of consecutive turns whatever order the worker processes them in."""
    settings.MNEMO_EPISODE_TURNS = 3
    ids = _logged(workspace, LINES)
    interactions_index(interaction_ids=ids[:2] + ids[3:5], batch_size=4)  # the third turn waits
    assert _episodes_cited() == []  # no episode may skip it
    interactions_index(interaction_ids=[ids[2], ids[5]], batch_size=2)
    assert _episodes_cited() == [ids[:3], ids[3:]]


def test_a_tail_is_flushed_only_once_nothing_after_it_waits(workspace, settings):
    """Where the last episode ends does not depend on how far the worker got when the flush ran."""
    settings.MNEMO_EPISODE_TURNS = 3
    ids = _logged(workspace, LINES[:5])
    interactions_index(interaction_ids=ids[:4], batch_size=4)
    assert _episodes_cited() == [ids[:3]]
    assert episodes_flush(quiet_minutes=0) == 0  # the fifth turn is not processed yet
    interactions_index(interaction_ids=[ids[4]], batch_size=1)
    assert episodes_flush(quiet_minutes=0) == 1
    assert _episodes_cited() == [ids[:3], ids[3:5]]


def test_system_messages_make_no_memories(workspace):
    interactions_log(workspace=workspace, items=[InteractionItem(channel="chat", channel_id="bot", content="I love hiking.",
                                                                 direction="system", occurred_at=T0)])
    interactions_index(interaction_ids=list(Interaction.objects.values_list("pk", flat=True)))
    assert not Memory.objects.exists()


@pytest.fixture(scope="module")
def llm_server():
    server = OpenAIServer()
    yield server
    server.close()


@pytest.fixture
def llm(llm_server, settings):
    llm_server.replies.clear()
    llm_server.requests.clear()
    yield from llm_pointed_at(llm_server, settings)


def test_the_llm_extractor_adds_inferred_candidates_and_rules_still_run(workspace, llm):
    content = "I love hiking. Work has been brutal since the merger, I barely sleep."
    [iid] = interactions_log(workspace=workspace, items=[InteractionItem(
        channel="chat", channel_id="caroline", sender_name="Caroline", content=content, occurred_at=T0)])[0:1]
    llm.chat(json.dumps({"memories": [
        {"interaction_id": iid.id, "type": "fact", "text": "Caroline has been sleeping badly since a merger at work.",
         "confidence": 0.7, "quote": "Work has been brutal since the merger, I barely sleep.",
         "reason": "says  she barely sleeps since the merger"},
        {"interaction_id": iid.id, "type": "fact", "text": "Caroline hates her boss.", "confidence": 0.9,
         "quote": "my boss is awful"},  # not in the message: dropped
        {"interaction_id": 999999, "type": "fact", "text": "Someone else.", "confidence": 0.9, "quote": "I love"},
    ]}))
    interactions_index(interaction_ids=[iid.id])
    inferred = Memory.objects.get(certainty="inferred")
    assert inferred.status == "candidate" and inferred.model == "test-model" and inferred.prompt_version == "memories-v2"
    # Its reason reaches the review card (review.why): "proposed by the language model …: “…”".
    item = ReviewItem.objects.get(kind="memory", target_id=inferred.pk)
    assert item.proposal["reason"] == "says she barely sleeps since the merger"
    assert inferred.evidence.get().quote.startswith("Work has been brutal")
    assert rule_memories(type="preference").exists()
    assert Memory.objects.filter(certainty="inferred").count() == 1
    assert llm.requests and "I love hiking" in llm.requests[0]["json"]["messages"][1]["content"]


def test_an_llm_failure_leaves_the_rules(workspace, llm):
    llm.chat("not json at all", status=500)
    say(workspace, "I love hiking.")
    assert rule_memories(type="preference").count() == 1 and not Memory.objects.filter(certainty="inferred").exists()


def test_erasure_removes_memories_about_the_person_and_quoting_them(workspace):
    say(workspace, "I love hiking.", "I work at Acme.", sender="caroline")
    say(workspace, "I love painting.", sender="melanie", start=T0 + timedelta(minutes=1))
    memory_store(workspace_id=workspace.pk, draft=Draft(type="fact", text="The office is in Lisbon.", certainty="verbatim"))
    caroline = Entity.objects.get(name="Caroline")
    quoting = set(MemoryEvidence.objects.filter(interaction__entity=caroline).values_list("memory_id", flat=True))
    assert quoting
    receipt = entity_erase(entity=caroline)
    assert receipt["memories"] >= len(quoting)
    assert not Memory.objects.filter(pk__in=quoting).exists() and not Memory.objects.filter(subject=caroline).exists()
    assert Memory.objects.filter(text="The office is in Lisbon.").exists()
    assert Memory.objects.filter(subject__name="Melanie").exists()


def test_merge_and_split_move_memories(workspace):
    say(workspace, "I love hiking.", sender="caro")
    source = Entity.objects.get(name="Caro")
    target = entity_create(workspace=workspace, kind="person", name="Caroline Ellis")
    merge = entity_merge(source=source, target=target)
    assert Memory.objects.filter(subject=target, type="preference").count() == 1
    entity_split(merge=merge)
    assert Memory.objects.filter(subject=source, type="preference").count() == 1
