"""The LLM summariser and idle judge against a local server speaking the OpenAI protocol:
a good answer is used and says so; a bad answer or a failing server falls back to the
deterministic version, which says so too."""

from __future__ import annotations

import json
from datetime import datetime, timedelta, timezone

import pytest

from conversations.idle import judge_idle
from conversations.llm import IDLE_PROMPT_VERSION, SUMMARY_PROMPT_VERSION, llm_judge_idle, llm_summarise
from conversations.summarise import PendingAction, Turn, summarise
from core.providers.llm import LLMClient
from tests.openai_server import OpenAIServer

START = datetime(2024, 3, 12, 9, 0, tzinfo=timezone.utc)
LINES = [
    ("Ana", "Can you check why the nightly export failed?"),
    ("Ben", "Sure. The disk on db-2 filled up at 02:10."),
    ("Ana", "Ugh. Can we add an alert for that?"),
    ("Ben", "I'll add a disk alert at 80% today."),
    ("Ana", "Thanks! Will the export rerun tonight?"),
]
TURNS = [Turn(id=10 + i, speaker=s, direction="inbound" if s == "Ana" else "outbound", content=c,
              occurred_at=START + i * timedelta(minutes=2)) for i, (s, c) in enumerate(LINES)]
GOOD_SUMMARY = {
    "summary": "Conversation between Ana and Ben on 12 March 2024 (5 messages). The nightly export failed because "
               "the disk on db-2 filled up at 02:10. Ben will add a disk alert at 80%.",
    "tone": {"formality": 0.4, "technical_level": 0.7, "sentiment": -0.2},
    "pending_actions": [
        {"kind": "commitment", "text": "I'll add a disk alert at 80% today.", "speaker": "Ben", "interaction_id": 13},
        {"kind": "question", "text": "Will the export rerun tonight?", "speaker": "Ana", "interaction_id": 14},
    ],
    "salient_interaction_ids": [13, 11],
}


@pytest.fixture(scope="module")
def shared_server():
    # One server for the module: shutting one down takes half a second.
    s = OpenAIServer()
    yield s
    s.close()


@pytest.fixture
def server(shared_server):
    shared_server.replies.clear()
    shared_server.requests.clear()
    return shared_server


@pytest.fixture
def client(server):
    return LLMClient(base_url=server.url, model="m", sleep=lambda s: None, retries=0)


# --- summaries -----------------------------------------------------------------------------

def test_a_valid_answer_becomes_the_summary(server, client):
    server.chat(json.dumps(GOOD_SUMMARY))
    draft, provenance = llm_summarise(client, TURNS)
    assert provenance == f"llm:{SUMMARY_PROMPT_VERSION}" == "llm:summary-v1"
    assert draft.text == GOOD_SUMMARY["summary"]
    # Pace is arithmetic on the timestamps, never the model's guess.
    assert draft.tone == {"formality": 0.4, "technical_level": 0.7, "sentiment": -0.2, "pace": "steady",
                          "messages_per_hour": 30.0}
    assert draft.pending_actions == [
        PendingAction("commitment", "I'll add a disk alert at 80% today.", "Ben", 13),
        PendingAction("question", "Will the export rerun tonight?", "Ana", 14),
    ]
    assert draft.salient_turn_ids == [11, 13]


def test_the_prompt_carries_the_transcript_the_limit_and_the_previous_summary(server, client):
    server.chat(json.dumps(GOOD_SUMMARY))
    llm_summarise(client, TURNS, previous_summary="Earlier: Ana set up the export job.", max_chars=900)
    messages = server.requests[0]["json"]["messages"]
    assert messages[0]["role"] == "system" and "pending_actions" in messages[0]["content"]
    user = messages[1]["content"]
    assert "Character limit for summary: 900" in user
    assert "Earlier: Ana set up the export job." in user
    assert json.dumps({"id": 11, "at": "2024-03-12T09:02:00+00:00", "speaker": "Ben", "direction": "outbound",
                       "text": "Sure. The disk on db-2 filled up at 02:10."}) in user


def test_a_summary_over_the_limit_is_cut_at_a_sentence_boundary(server, client):
    server.chat(json.dumps(GOOD_SUMMARY))
    draft, provenance = llm_summarise(client, TURNS, max_chars=150)
    assert provenance.startswith("llm:")
    assert draft.text == ("Conversation between Ana and Ben on 12 March 2024 (5 messages). "
                          "The nightly export failed because the disk on db-2 filled up at 02:10.")


def test_without_salient_ids_the_summary_draws_on_every_message(server, client):
    server.chat(json.dumps({k: v for k, v in GOOD_SUMMARY.items() if k != "salient_interaction_ids"}))
    draft, _ = llm_summarise(client, TURNS)
    assert draft.salient_turn_ids == [10, 11, 12, 13, 14]


def broken(**changes):
    answer = json.loads(json.dumps(GOOD_SUMMARY))
    for path, value in changes.items():
        target = answer
        *parents, key = path.split("__")
        for parent in parents:
            target = target[int(parent)] if isinstance(target, list) else target[parent]
        if value is ...:
            del target[key]
        else:
            target[key] = value
    return answer


@pytest.mark.parametrize("answer", [
    broken(summary=...),
    broken(summary="   "),
    broken(summary=42),
    broken(summary="One very long sentence without any end " * 40),
    broken(tone="casual"),
    broken(tone__formality=1.5),
    broken(tone__sentiment=-3),
    broken(tone__technical_level=True),
    broken(tone__formality="high"),
    broken(tone__sentiment=...),
    broken(pending_actions=...),
    broken(pending_actions="none"),
    broken(pending_actions__0__kind="todo"),
    broken(pending_actions__0__text=""),
    broken(pending_actions__0__interaction_id=99),
    broken(pending_actions__0__interaction_id="13"),
    broken(pending_actions__0__speaker="Ana"),
    broken(salient_interaction_ids=[11, 99]),
    broken(salient_interaction_ids="11"),
], ids=lambda a: json.dumps(a)[:60])
def test_an_invalid_answer_falls_back_to_the_extractive_summary(server, client, answer):
    server.chat(json.dumps(answer))
    draft, provenance = llm_summarise(client, TURNS, max_chars=600)
    assert provenance == "extractive"
    assert draft == summarise(TURNS, max_chars=600)


@pytest.mark.parametrize("status", [500, 503, 429, 400, 401])
def test_a_failing_server_falls_back_to_the_extractive_summary(server, client, status):
    server.error(status)
    draft, provenance = llm_summarise(client, TURNS)
    assert provenance == "extractive"
    assert draft == summarise(TURNS)


def test_an_answer_that_is_not_json_falls_back(server, client):
    server.chat("The conversation was about a disk.")
    assert llm_summarise(client, TURNS)[1] == "extractive"


def test_a_transcript_too_long_for_the_model_is_summarised_extractively_without_asking(server, client):
    long_turns = [Turn(id=i, speaker="Ana", direction="inbound", content=f"Line {i} of the incident log. " * 150,
                       occurred_at=START + i * timedelta(seconds=5)) for i in range(20)]
    draft, provenance = llm_summarise(client, long_turns)
    assert provenance == "extractive" and draft == summarise(long_turns)
    assert server.requests == []


def test_no_turns_is_an_error_and_asks_nothing(server, client):
    with pytest.raises(ValueError):
        llm_summarise(client, [])
    assert server.requests == []


# --- idle ------------------------------------------------------------------------------------

TIMES = [t.occurred_at for t in TURNS]


def test_a_valid_verdict_is_used(server, client):
    server.chat(json.dumps({"state": "idle", "reason": "Ana asked a question and Ben went quiet.",
                            "idle_after_minutes": 5}))
    verdict, provenance = llm_judge_idle(client, TIMES, TIMES[-1] + timedelta(minutes=6), LINES[-1][1], TURNS)
    assert provenance == f"llm:{IDLE_PROMPT_VERSION}" == "llm:idle-v1"
    assert (verdict.state, verdict.reason, verdict.idle_after) == (
        "idle", "Ana asked a question and Ben went quiet.", timedelta(minutes=5))
    facts = json.loads(server.requests[0]["json"]["messages"][1]["content"])
    assert facts["minutes_since_last_message"] == 6.0
    assert facts["recent_gaps_minutes"] == [2.0, 2.0, 2.0, 2.0]
    assert facts["rule_of_thumb"]["state"] == "active"
    assert [m["id"] for m in facts["recent_messages"]] == [10, 11, 12, 13, 14]


@pytest.mark.parametrize("answer", [
    {"state": "paused", "reason": "quiet", "idle_after_minutes": 5},
    {"state": "idle", "reason": "", "idle_after_minutes": 5},
    {"state": "idle", "reason": ["quiet"], "idle_after_minutes": 5},
    {"state": "idle", "reason": "quiet"},
    {"state": "idle", "reason": "quiet", "idle_after_minutes": "5"},
    {"state": "idle", "reason": "quiet", "idle_after_minutes": True},
    {"state": "idle", "reason": "quiet", "idle_after_minutes": 0.2},
    {"state": "idle", "reason": "quiet", "idle_after_minutes": 100_000},
    # contradicts itself: six minutes of silence against a ten-minute threshold
    {"state": "idle", "reason": "quiet", "idle_after_minutes": 10},
    {"state": "active", "reason": "still going", "idle_after_minutes": 3},
], ids=lambda a: json.dumps(a)[:60])
def test_an_invalid_verdict_falls_back_to_the_heuristic(server, client, answer):
    server.chat(json.dumps(answer))
    now = TIMES[-1] + timedelta(minutes=6)
    verdict, provenance = llm_judge_idle(client, TIMES, now, LINES[-1][1], TURNS)
    assert provenance == "heuristic"
    assert verdict == judge_idle(TIMES, now, LINES[-1][1])


@pytest.mark.parametrize("status", [500, 400])
def test_a_failing_server_falls_back_to_the_heuristic(server, client, status):
    server.error(status)
    now = TIMES[-1] + timedelta(hours=2)
    verdict, provenance = llm_judge_idle(client, TIMES, now, LINES[-1][1], TURNS)
    assert provenance == "heuristic"
    assert verdict.state == "idle" and verdict == judge_idle(TIMES, now, LINES[-1][1])


def test_no_times_is_an_error_and_asks_nothing(server, client):
    with pytest.raises(ValueError):
        llm_judge_idle(client, [], START, "", [])
    assert server.requests == []
