"""Decision memory over the API against the real PostgreSQL and the bundled embedding
model: recording answers similar past decisions with their outcomes, thoughts append,
an outcome is reviewed once, calibration matches hand-computed numbers, and another
workspace sees nothing."""

from __future__ import annotations

import pytest

from core.models import AuditEvent
from core.providers import ProviderError
from entities import decisions
from entities.models import DecisionRecord, DecisionThought, Entity
from tests.helpers import ApiClient, assert_error

pytestmark = pytest.mark.django_db


def decide(api, description: str, confidence: float = 0.7, **extra) -> dict:
    response = api.post("/decisions", {"description": description, "confidence": confidence, **extra})
    assert response.status_code == 201, response.content
    return response.json()


def review(workspace, description: str, confidence: float, outcome: str | None) -> DecisionRecord:
    record = decisions.decision_record(workspace=workspace, description=description, confidence=confidence)
    if outcome:
        decisions.decision_record_outcome(decision=record, outcome=outcome)
    return record


@pytest.fixture
def read_api(workspace, make_key):
    _, key = make_key(workspace, scopes="read", name="reader")
    return ApiClient(key)


# --- recording -----------------------------------------------------------------------------------

def test_recording_a_decision_creates_a_decision_entity_with_its_record(api, workspace):
    body = decide(api, "Use Redis for the session store", 0.8, options=["Redis", "Postgres"], chosen="Redis")
    decision = body["decision"]
    assert (decision["description"], decision["options"], decision["chosen"]) == (
        "Use Redis for the session store", ["Redis", "Postgres"], "Redis")
    assert decision["confidence"] == 0.8 and decision["outcome"] is None and body["similar"] == []
    entity = Entity.objects.get(pk=decision["id"])
    assert (entity.workspace, entity.kind, entity.name) == (workspace, "decision", "Use Redis for the session store")
    record = DecisionRecord.objects.get(pk=decision["id"])
    assert len(record.embedding) == 384 and sum(x * x for x in record.embedding) == pytest.approx(1, abs=1e-4)
    assert AuditEvent.objects.filter(verb="decision.record", target_id=str(entity.pk)).count() == 1
    listed = api.get("/entities", kind="decision").json()["items"]
    assert [e["id"] for e in listed] == [entity.pk]


def test_a_long_description_is_kept_whole_but_the_entity_name_is_cut_at_300(api):
    description = "Migrate the billing service to the new queue " + "because of throughput " * 30
    body = decide(api, description)
    assert body["decision"]["description"] == description.strip()
    name = Entity.objects.get(pk=body["decision"]["id"]).name
    assert len(name) == 300 and description.startswith(name)


def test_similar_past_decisions_come_nearest_first_with_their_outcomes(api, workspace, other_workspace):
    cache = review(workspace, "Use Postgres as a cache", 0.9, "success")
    designer = review(workspace, "Hire a designer", 0.6, None)
    review(other_workspace, "Use PostgreSQL for the cache layer", 0.5, "failure")
    body = decide(api, "Use PostgreSQL for the cache layer")
    similar = body["similar"]
    assert [s["id"] for s in similar] == [cache.pk, designer.pk]
    assert similar[0]["outcome"] == "success" and similar[1]["outcome"] is None
    assert 1 >= similar[0]["similarity"] > similar[1]["similarity"] >= -1
    assert similar[0]["similarity"] > 0.6


def test_at_most_five_similar_decisions_are_answered(api, workspace):
    for n in range(6):
        review(workspace, f"Pick database option number {n}", 0.5, None)
    assert len(decide(api, "Pick a database")["similar"]) == 5


def test_when_the_embedding_model_is_down_nothing_is_recorded(api, monkeypatch):
    class Down:
        def embed(self, texts):
            raise ProviderError("model unavailable", retryable=True)

    monkeypatch.setattr(decisions, "get_embedder", lambda: Down())
    error = assert_error(api.post("/decisions", {"description": "Adopt Kafka", "confidence": 0.5}), 503,
                         "embedder_unavailable")
    assert error["details"] == {"retryable": True}
    assert not Entity.objects.exists() and not DecisionRecord.objects.exists()


# --- thoughts and the outcome -------------------------------------------------------------------------

def test_thoughts_are_appended_in_order_and_shown_with_the_decision(api):
    decision_id = decide(api, "Choose a cache layer")["decision"]["id"]
    first = api.post(f"/decisions/{decision_id}/thoughts", {"text": "Redis is fast but one more system to run."})
    second = api.post(f"/decisions/{decision_id}/thoughts", {"text": "Postgres is already there."})
    assert first.status_code == second.status_code == 201
    assert first.json()["decision_id"] == decision_id
    detail = api.get(f"/decisions/{decision_id}").json()
    assert [t["text"] for t in detail["thoughts"]] == ["Redis is fast but one more system to run.",
                                                       "Postgres is already there."]
    assert AuditEvent.objects.filter(verb="decision.thought").count() == 2


def test_an_outcome_is_recorded_once_and_a_second_is_a_conflict_naming_the_first(api):
    decision_id = decide(api, "Ship the beta on Friday")["decision"]["id"]
    response = api.post(f"/decisions/{decision_id}/outcome", {"outcome": "partial", "result": "Shipped, two bugs."})
    assert response.status_code == 200, response.content
    assert (response.json()["outcome"], response.json()["outcome_result"]) == ("partial", "Shipped, two bugs.")
    assert response.json()["outcome_at"]
    error = assert_error(api.post(f"/decisions/{decision_id}/outcome", {"outcome": "success"}), 409, "conflict")
    assert "partial" in error["message"] and error["details"]["outcome"] == "partial"
    record = DecisionRecord.objects.get(pk=decision_id)
    assert (record.outcome, record.outcome_result) == ("partial", "Shipped, two bugs.")
    assert AuditEvent.objects.filter(verb="decision.outcome").count() == 1


# --- lists and calibration --------------------------------------------------------------------------------

def test_the_list_is_newest_first_and_filters_by_outcome(api, workspace):
    won = review(workspace, "Use Postgres as a cache", 0.9, "success")
    open_one = review(workspace, "Hire a designer", 0.6, None)
    lost = review(workspace, "Rewrite it in Rust", 0.8, "failure")
    page = api.get("/decisions").json()
    assert page["count"] == 3 and [d["id"] for d in page["items"]] == [lost.pk, open_one.pk, won.pk]
    assert [d["id"] for d in api.get("/decisions", outcome="pending").json()["items"]] == [open_one.pk]
    assert [d["id"] for d in api.get("/decisions", outcome="failure").json()["items"]] == [lost.pk]
    assert api.get("/decisions", limit=1).json()["items"][0]["id"] == lost.pk
    assert_error(api.get("/decisions", outcome="meh"), 422, "validation_error")


def test_calibration_matches_the_hand_computed_report(api, workspace, other_workspace):
    for n, (confidence, outcome) in enumerate([(0.9, "success"), (0.9, "failure"), (0.7, "partial"),
                                               (0.5, "success"), (0.2, "failure"), (1.0, "success")]):
        review(workspace, f"Decision {n}", confidence, outcome)
    review(workspace, "Not reviewed yet", 0.1, None)
    review(other_workspace, "Someone else's", 0.1, "success")
    response = api.get("/decisions/calibration")
    assert response.status_code == 200, response.content
    report = response.json()
    assert report["count"] == 6
    assert report["brier"] == pytest.approx(1.15 / 6)  # squared errors .01 + .81 + .04 + .25 + .04 + 0
    assert report["overconfidence"] == pytest.approx(0.7 - 3.5 / 6)
    assert [(b["from"], b["to"], b["count"]) for b in report["bins"]] == [
        (0.0, 0.2, 0), (0.2, 0.4, 1), (0.4, 0.6, 1), (0.6, 0.8, 1), (0.8, 1.0, 3)]
    assert report["bins"][0]["success_rate"] is None
    assert report["bins"][4]["mean_confidence"] == pytest.approx(2.8 / 3)
    assert report["bins"][4]["success_rate"] == pytest.approx(2 / 3)
    assert len(api.get("/decisions/calibration", bins=2).json()["bins"]) == 2
    assert_error(api.get("/decisions/calibration", bins=0), 422, "validation_error")


# --- bad input, scopes and other workspaces ---------------------------------------------------------------

@pytest.mark.parametrize("payload", [
    {"description": "Pick a queue", "confidence": 1.5},
    {"description": "Pick a queue", "confidence": -0.1},
    {"description": "", "confidence": 0.5},
    {"description": "   ", "confidence": 0.5},
    {"description": "x" * 5001, "confidence": 0.5},
    {"description": "Pick a queue"},
    {"description": "Pick a queue", "confidence": 0.5, "options": [f"option {n}" for n in range(21)]},
    {"description": "Pick a queue", "confidence": 0.5, "surprise": 1},
])
def test_bad_decisions_are_refused_and_nothing_is_stored(api, payload):
    assert_error(api.post("/decisions", payload), 422)
    assert not DecisionRecord.objects.exists() and not Entity.objects.exists()


def test_bad_outcomes_and_thoughts_are_refused(api):
    decision_id = decide(api, "Pick a queue")["decision"]["id"]
    assert_error(api.post(f"/decisions/{decision_id}/outcome", {"outcome": "meh"}), 422, "validation_error")
    assert_error(api.post(f"/decisions/{decision_id}/thoughts", {"text": ""}), 422, "validation_error")
    assert_error(api.post(f"/decisions/{decision_id}/thoughts", {"text": "  "}), 422, "validation_error")
    assert DecisionRecord.objects.get(pk=decision_id).outcome == "" and not DecisionThought.objects.exists()


def test_another_workspace_gets_404_for_every_decision_and_sees_none(api, outsider_api):
    decision_id = decide(api, "Use Postgres as a cache")["decision"]["id"]
    api.post(f"/decisions/{decision_id}/outcome", {"outcome": "success"})
    assert_error(outsider_api.get(f"/decisions/{decision_id}"), 404, "not_found")
    assert_error(outsider_api.post(f"/decisions/{decision_id}/thoughts", {"text": "mine now"}), 404, "not_found")
    assert_error(outsider_api.post(f"/decisions/{decision_id}/outcome", {"outcome": "failure"}), 404, "not_found")
    assert outsider_api.get("/decisions").json() == {"items": [], "count": 0}
    assert outsider_api.get("/decisions/calibration").json()["count"] == 0
    assert decide(outsider_api, "Use PostgreSQL for the cache layer")["similar"] == []
    assert not DecisionThought.objects.exists() and DecisionRecord.objects.get(pk=decision_id).outcome == "success"


def test_a_read_only_key_reads_but_cannot_write(api, read_api):
    decision_id = decide(api, "Pick a queue")["decision"]["id"]
    assert_error(read_api.post("/decisions", {"description": "Pick a cache", "confidence": 0.5}), 403, "forbidden")
    assert_error(read_api.post(f"/decisions/{decision_id}/thoughts", {"text": "hmm"}), 403, "forbidden")
    assert_error(read_api.post(f"/decisions/{decision_id}/outcome", {"outcome": "success"}), 403, "forbidden")
    assert read_api.get(f"/decisions/{decision_id}").status_code == 200
    assert read_api.get("/decisions").json()["count"] == 1
    assert read_api.get("/decisions/calibration").status_code == 200
    assert DecisionRecord.objects.count() == 1 and not DecisionThought.objects.exists()


def test_without_a_key_every_decision_route_is_401(anon_api):
    for response in (anon_api.get("/decisions"), anon_api.get("/decisions/calibration"), anon_api.get("/decisions/1"),
                     anon_api.post("/decisions", {"description": "x", "confidence": 0.5}),
                     anon_api.post("/decisions/1/thoughts", {"text": "x"}),
                     anon_api.post("/decisions/1/outcome", {"outcome": "success"})):
        assert_error(response, 401, "unauthorized")
