"""The sync client against a live server: every covered operation answers its model, and
every refusal arrives as the exception its status names, carrying the error envelope."""

from __future__ import annotations

from datetime import datetime, timezone

import pytest

from conversations.models import Interaction
from memory.models import Memory
from mnemo_client import (
    Conflict,
    ConnectionFailed,
    InvalidRequest,
    Mnemo,
    NotFound,
    PayloadTooLarge,
    PermissionDenied,
    RateLimited,
    RetryPolicy,
    Unauthorized,
    models,
)
from tests.client.conftest import NO_RETRY, process

pytestmark = pytest.mark.django_db(transaction=True)

T0 = datetime(2026, 3, 2, 9, 30, tzinfo=timezone.utc)


def chat(n: int, thread: str = "t1") -> list[dict]:
    return [{"channel": "slack", "channel_id": "U042", "sender_name": "Ana", "thread": thread,
             "content": f"message {i} about the staging database", "external_id": f"{thread}:{i}",
             "occurred_at": T0.replace(minute=i % 60).isoformat()} for i in range(n)]


# --- service -----------------------------------------------------------------------------------

def test_health_and_status_answer_their_models(mnemo, workspace):
    assert mnemo.health().status == "ok"
    status = mnemo.status()
    assert isinstance(status, models.StatusOut)
    assert status.workspace.slug == workspace.slug
    assert isinstance(status.idle, bool)


def test_the_url_may_name_the_api_or_the_site(server, key):
    for url in (server, server + "/", server + "/api/v1", server + "/api/v1/"):
        with Mnemo(url, key) as client:
            assert client.url == server + "/api/v1/"
            assert client.health().status == "ok"


def test_the_environment_gives_url_and_key(server, key, monkeypatch):
    monkeypatch.setenv("MNEMO_URL", server)
    monkeypatch.setenv("MNEMO_API_KEY", key)
    with Mnemo() as client:
        assert client.status().idle in (True, False)


# --- interactions ------------------------------------------------------------------------------

def test_log_creates_then_answers_duplicate_for_the_same_external_id(mnemo, workspace):
    first = mnemo.log("Deploys freeze on Fridays.", channel="slack", channel_id="U042", sender_name="Ana",
                      external_id="slack:1", occurred_at=T0, metadata={"run_id": "r1"})
    assert first.status == "created" and first.id and first.conversation_id
    again = mnemo.log("Deploys freeze on Fridays.", channel="slack", channel_id="U042", external_id="slack:1")
    assert (again.status, again.id) == ("duplicate", first.id)
    row = Interaction.objects.get(pk=first.id)
    assert (row.workspace_id, row.metadata, row.occurred_at) == (workspace.pk, {"run_id": "r1"}, T0)


def test_get_and_list_interactions(mnemo):
    logged = mnemo.log("Ping from the CLI", channel="cli", channel_id="me", thread="x")
    one = mnemo.get_interaction(logged.id)
    assert (one.id, one.content, one.channel, one.thread) == (logged.id, "Ping from the CLI", "cli", "x")
    page = mnemo.list_interactions(channel="cli", limit=5)
    assert page.count == 1 and [i.id for i in page.items] == [logged.id]
    assert mnemo.list_interactions(channel="email").count == 0


def test_a_batch_larger_than_a_chunk_keeps_input_order_and_indexes(mnemo, workspace):
    progress = []
    result = mnemo.log_batch(chat(7), chunk_size=3, on_progress=lambda totals: progress.append(totals.created))
    assert (result.created, result.duplicate, result.rejected) == (7, 0, 0)
    assert [r.index for r in result.results] == list(range(7))
    assert [r.external_id for r in result.results] == [f"t1:{i}" for i in range(7)]
    assert progress == [3, 6, 7]
    assert Interaction.objects.filter(workspace=workspace).count() == 7


def test_sending_a_batch_again_stores_nothing_twice(mnemo, workspace):
    first = mnemo.log_batch(chat(4))
    again = mnemo.log_batch([models.InteractionIn(**item) for item in chat(4)])
    assert (again.created, again.duplicate) == (0, 4)
    assert [r.id for r in again.results] == [r.id for r in first.results]
    assert Interaction.objects.filter(workspace=workspace).count() == 4


def test_a_batch_rejects_only_its_bad_items_naming_why(mnemo, workspace):
    items = chat(2) + [{"channel": "slack", "channel_id": "U042", "content": "key AKIAIOSFODNN7EXAMPLE",
                        "external_id": "t1:secret"}, {"channel": "slack", "content": "no sender"}]
    result = mnemo.log_batch(items)
    assert (result.created, result.rejected) == (2, 2)
    secret, invalid = result.results[2], result.results[3]
    assert secret.status == "rejected" and secret.error.code == "secret_detected" and secret.error.rule
    assert invalid.error.code == "validation_error" and "channel_id" in invalid.error.field
    assert Interaction.objects.filter(workspace=workspace).count() == 2


def test_an_empty_batch_sends_nothing(mnemo):
    assert mnemo.log_batch([]).results == []


def test_iterate_walks_every_page(mnemo):
    mnemo.log_batch(chat(11))
    seen = list(mnemo.iterate("interactions", page_size=4, channel="slack"))
    assert len(seen) == 11 and len({i.id for i in seen}) == 11
    assert all(isinstance(i, models.InteractionOut) for i in seen)
    assert list(mnemo.iterate("interactions", channel="email")) == []


def test_iterate_refuses_what_is_not_a_list(mnemo):
    with pytest.raises(ValueError, match="cannot iterate"):
        list(mnemo.iterate("keys"))
    with pytest.raises(ValueError, match="page_size"):
        list(mnemo.iterate("memories", page_size=500))


# --- recall and packs --------------------------------------------------------------------------

def test_recall_finds_a_logged_message_with_its_source(mnemo):
    logged = mnemo.log("The staging database moved to eu-west-3 on Monday.", channel="slack", channel_id="U042",
                       external_id="slack:move")
    process()
    answer = mnemo.recall("Where is the staging database now?", limit=3)
    assert answer.results
    sources = [s for r in answer.results for s in r.sources]
    assert (logged.id, "slack:move") in {(s.interaction_id, s.external_id) for s in sources}


def test_context_returns_a_pack_within_budget_that_can_be_fetched_again(mnemo):
    mnemo.remember("Ana prefers tea over coffee.", type="preference")
    process()
    pack = mnemo.context("What does Ana drink?", budget_tokens=300)
    assert isinstance(pack, models.PackOut)
    assert pack.tokens_used <= pack.budget_tokens == 300
    assert "tea" in pack.text
    again = mnemo.get_pack(str(pack.pack_id))
    assert (again.pack_id, again.text) == (pack.pack_id, pack.text)


# --- memories and entities ---------------------------------------------------------------------

def test_remember_list_and_get_a_memory(mnemo, workspace):
    stored = mnemo.remember("The on-call rotation changes on Mondays.", importance=0.8)
    assert stored.outcome == "created" and stored.memory.type == "fact"
    again = mnemo.remember("The on-call rotation changes on Mondays.")
    assert (again.outcome, again.memory.id) == ("reinforced", stored.memory.id)
    page = mnemo.list_memories(type="fact")
    assert [m.id for m in page.items] == [stored.memory.id]
    detail = mnemo.get_memory(stored.memory.id)
    assert detail.text == "The on-call rotation changes on Mondays." and detail.importance == 0.8
    assert [m.id for m in mnemo.iterate("memories", type="fact")] == [stored.memory.id]
    assert Memory.objects.get(pk=stored.memory.id).workspace_id == workspace.pk


def test_entities_are_searched_and_read(mnemo):
    logged = mnemo.log("hello", channel="slack", channel_id="U042", sender_name="Ana Lima")
    found = mnemo.search_entities("Ana Lima")
    assert logged.entity_id in [e.id for e in found.items]
    entity = mnemo.get_entity(logged.entity_id)
    assert entity.name == "Ana Lima"
    assert ("slack", "U042") in {(i.channel, i.channel_id) for i in entity.identities}
    assert [e.id for e in mnemo.iterate("entities", q="Ana Lima")] == [e.id for e in found.items]


# --- decisions, censors, procedures ------------------------------------------------------------

def test_a_decision_and_its_outcome_once(mnemo):
    recorded = mnemo.record_decision("Use PostgreSQL for the queue", options=["PostgreSQL", "Redis"],
                                     chosen="PostgreSQL", confidence=0.7)
    decision = recorded.decision
    assert decision.confidence == 0.7 and decision.outcome is None
    done = mnemo.record_outcome(decision.id, "success", result="No outage in a month")
    assert done.outcome == "success"
    assert mnemo.get_decision(decision.id).outcome_result == "No outage in a month"
    assert [d.id for d in mnemo.list_decisions(outcome="success").items] == [decision.id]
    with pytest.raises(Conflict) as caught:
        mnemo.record_outcome(decision.id, "failure")
    assert caught.value.status == 409


def test_censors_check_and_procedures_match(mnemo):
    mnemo.remember(type="censor", censor={"trigger": "drop the production database", "action": "block",
                                          "reason": "irreversible"})
    verdict = mnemo.check_censors("drop the production database now")
    assert verdict.verdict == "block" and verdict.matches[0].reason == "irreversible"
    assert mnemo.check_censors("water the plants").verdict == "allow"
    mnemo.remember(type="procedure", procedure={"name": "Rotate the API keys",
                                                "steps": ["create a new key", "deploy it", "revoke the old key"]})
    process()
    matches = mnemo.match_procedures("rotate the API keys", limit=3)
    assert matches and matches[0].name == "Rotate the API keys"


# --- working memory, scratchpads, gaps ---------------------------------------------------------

def test_working_memory_keeps_its_capacity(mnemo):
    items = [{"content": f"fact {i}", "attention": i / 10} for i in range(4)]
    answer = mnemo.set_working_memory("session-1", items, capacity=3, task="triage")
    assert answer.capacity == 3 and len(answer.items) == 3 and len(answer.evicted) == 1
    assert answer.evicted[0].content == "fact 0"
    assert [i.content for i in mnemo.get_working_memory("session-1").items] == [i.content for i in answer.items]


def test_a_scratchpad_keeps_its_state_and_refuses_a_stale_write(mnemo):
    state = {"step": 2, "todo": ["a", "b"], "ratio": 0.5, "none": None}
    first = mnemo.put_scratchpad("task 1 ü", state)
    assert (first.task, first.state) == ("task 1 ü", state)
    checkpoint = mnemo.checkpoint_scratchpad("task 1 ü", label="before")
    second = mnemo.put_scratchpad("task 1 ü", [1, 2, 3], expected_version=first.version)
    assert second.version > first.version and mnemo.get_scratchpad("task 1 ü").state == [1, 2, 3]
    with pytest.raises(Conflict):
        mnemo.put_scratchpad("task 1 ü", {"late": True}, expected_version=first.version)
    restored = mnemo.restore_scratchpad("task 1 ü", checkpoint_id=checkpoint.id)
    assert restored.state == state


def test_a_name_with_a_slash_is_refused_before_sending(mnemo):
    # The server could only answer "no such endpoint": the slash splits the path.
    with pytest.raises(InvalidRequest) as caught:
        mnemo.put_scratchpad("a/b", {})
    assert caught.value.status is None and caught.value.details["errors"][0]["loc"] == ["task"]


def test_gaps_are_reported_and_listed(mnemo):
    gap = mnemo.report_gap("export invoices as PDF", category="feature", reason="no PDF tool")
    assert gap.frequency == 1 and gap.status == "detected"
    again = mnemo.report_gap("export invoices as PDF")
    assert again.id == gap.id and again.frequency == 2
    assert [g.id for g in mnemo.list_gaps(category="feature").items] == [gap.id]
    assert [g.id for g in mnemo.iterate("gaps")] == [gap.id]


# --- refusals ----------------------------------------------------------------------------------

def test_an_outsiders_key_gets_not_found_for_this_workspaces_ids(mnemo, outsider):
    logged = mnemo.log("mine", channel="cli", channel_id="me")
    memory = mnemo.remember("mine too").memory
    decision = mnemo.record_decision("mine", confidence=0.5).decision
    mnemo.put_scratchpad("mine", {"a": 1})
    mnemo.set_working_memory("mine", [{"content": "x"}])
    calls = [lambda: outsider.get_interaction(logged.id), lambda: outsider.get_memory(memory.id),
             lambda: outsider.get_entity(logged.entity_id), lambda: outsider.get_decision(decision.id),
             lambda: outsider.record_outcome(decision.id, "success"), lambda: outsider.get_scratchpad("mine"),
             lambda: outsider.get_working_memory("mine"), lambda: outsider.recall("mine", entity=logged.entity_id),
             lambda: outsider.remember("about them", entity=logged.entity_id)]
    for attempt in calls:
        with pytest.raises(NotFound) as caught:
            attempt()
        assert caught.value.status == 404 and caught.value.code == "not_found"
        assert caught.value.envelope == {"error": {"code": "not_found", "message": caught.value.message,
                                                   "details": caught.value.details}}
    assert outsider.list_interactions().count == 0 and outsider.list_memories().count == 0


def test_a_read_key_cannot_write(reader, workspace):
    writes = [lambda: reader.log("x", channel="cli", channel_id="me"), lambda: reader.remember("x"),
              lambda: reader.log_batch(chat(1)), lambda: reader.record_decision("x", confidence=0.5),
              lambda: reader.put_scratchpad("t", {}), lambda: reader.report_gap("x"),
              lambda: reader.check_censors("x")]
    for attempt in writes:
        with pytest.raises(PermissionDenied) as caught:
            attempt()
        assert caught.value.status == 403 and caught.value.details == {"required_scope": "write"}
    assert Interaction.objects.filter(workspace=workspace).count() == 0
    assert reader.recall("anything").results == []


def test_no_key_or_a_wrong_key_is_unauthorized(server, monkeypatch):
    monkeypatch.delenv("MNEMO_API_KEY", raising=False)
    for key in (None, "mn_nope_nope"):
        with Mnemo(server, key, retry=NO_RETRY) as client:
            assert client.health().status == "ok"
            with pytest.raises(Unauthorized) as caught:
                client.status()
            assert caught.value.code == "unauthorized" and "API key" in caught.value.message


@pytest.mark.parametrize("attempt, field", [
    (lambda c: c.context("q", budget_tokens=10), "budget_tokens"),
    (lambda c: c.recall(""), "query"),
    (lambda c: c.log("x", channel="Not A Channel!", channel_id="me"), "channel"),
    (lambda c: c.remember("x", confidence=7), "confidence"),
    (lambda c: c.list_memories(limit=1000), "limit"),
    (lambda c: c.report_gap("x" * 301), "description"),
])
def test_bad_input_is_invalid_request_naming_the_field(mnemo, attempt, field):
    with pytest.raises(InvalidRequest) as caught:
        attempt(mnemo)
    error = caught.value
    assert (error.status, error.code) == (422, "validation_error")
    assert any(field in err["loc"] for err in error.details["errors"]), error.details


def test_a_secret_is_refused_naming_the_rule_and_nothing_is_stored(mnemo, workspace):
    with pytest.raises(InvalidRequest) as caught:
        mnemo.log("my key is AKIAIOSFODNN7EXAMPLE", channel="cli", channel_id="me")
    assert caught.value.code == "secret_detected" and caught.value.details["rule"]
    assert "AKIAIOSFODNN7EXAMPLE" not in str(caught.value.envelope)
    assert Interaction.objects.filter(workspace=workspace).count() == 0


def test_arguments_of_the_wrong_type_are_refused_before_sending(mnemo, workspace):
    with pytest.raises(InvalidRequest) as caught:
        mnemo.remember("x", type="rumour")
    assert caught.value.status is None and caught.value.code == "validation_error"
    assert caught.value.details["errors"][0]["loc"] == ["type"]
    assert Memory.objects.filter(workspace=workspace).count() == 0


def test_an_unknown_id_is_not_found(mnemo):
    with pytest.raises(NotFound):
        mnemo.get_memory(987654)
    with pytest.raises(NotFound):
        mnemo.get_scratchpad("never-written")


def test_the_rate_limit_arrives_as_rate_limited_with_its_wait(server, key, settings):
    settings.MNEMO_RATE_LIMIT_PER_KEY = "2/h"
    with Mnemo(server, key, retry=NO_RETRY) as client:
        client.status()
        client.status()
        with pytest.raises(RateLimited) as caught:
            client.status()
    error = caught.value
    assert (error.status, error.code) == (429, "rate_limited")
    assert error.retry_after == error.details["retry_after"] >= 1


def test_a_wait_longer_than_the_policy_allows_is_not_slept(server, key, settings):
    settings.MNEMO_RATE_LIMIT_PER_KEY = "1/h"
    slept = []
    # The server asks for at least 1 s (core.ratelimit): always longer than this policy allows.
    with Mnemo(server, key, retry=RetryPolicy(max_retries=5, max_retry_after=0.5)) as client:
        client._sleep = slept.append
        client.status()
        with pytest.raises(RateLimited):
            client.status()
    assert slept == []


def test_an_unreachable_server_is_connection_failed(unused_port):
    slept = []
    with Mnemo(f"http://127.0.0.1:{unused_port}", "k", retry=RetryPolicy(max_retries=2)) as client:
        client._sleep = slept.append
        with pytest.raises(ConnectionFailed):
            client.status()
    assert len(slept) == 2



def test_a_body_over_the_servers_limit_is_payload_too_large(mnemo, settings, workspace):
    settings.DATA_UPLOAD_MAX_MEMORY_SIZE = 2000
    with pytest.raises(PayloadTooLarge) as caught:
        mnemo.log_batch(chat(30))
    assert caught.value.status == 413
    assert Interaction.objects.filter(workspace=workspace).count() == 0
