"""Learning from failures (issue 19 part 4): a failed decision, a procedure retired for low
effectiveness and a failed episode propose censor candidates with their provenance; an
episode with an outcome counts a use of the procedure it matches; the `absolute` censor
action blocks without override."""

from __future__ import annotations

import numpy as np
import pytest

from core.models import JobRun
from core.services import SYSTEM
from entities import decisions
from memory import tasks
from memory.models import Censor, Memory, Procedure
from memory.services import (
    censors_learn_from_decisions,
    episodes_learn,
    procedure_create,
    procedure_outcome,
)
from review.models import ReviewItem
from tests.helpers import assert_error

pytestmark = pytest.mark.django_db


def learned(kind: str) -> list[Memory]:
    return list(Memory.objects.filter(type="censor", source=f"learned_from_{kind}").order_by("pk"))


# --- failed decisions -----------------------------------------------------------------------------

def test_a_failed_decision_proposes_a_censor_candidate_once(workspace):
    censors_learn_from_decisions()  # the first pass starts the cursor: history is not replayed
    record = decisions.decision_record(workspace=workspace, description="Cache sessions in Redis", confidence=0.8,
                                       options=["Redis", "Postgres"], chosen="Redis")
    decisions.decision_record_outcome(decision=record, outcome="failure", result="evictions lost sessions")
    counts = censors_learn_from_decisions()
    assert counts == {"events": 1, "censors": 1, "refused": 0}
    [censor] = learned("decision")
    assert censor.status == "candidate" and censor.certainty == "inferred"
    assert censor.metadata["learned_from"] == {"kind": "decision", "id": record.pk}
    assert "Redis" in censor.text and "evictions lost sessions" in censor.text
    assert Censor.objects.get(pk=censor.pk).trigger == "Redis"
    item = ReviewItem.objects.get(kind="memory", target_id=censor.pk)
    assert item.proposal["learned_from"] == {"kind": "decision", "id": record.pk}
    assert item.rule == "censor.learned_from_decision"
    assert censors_learn_from_decisions()["events"] == 0  # the cursor moved
    assert len(learned("decision")) == 1


def test_a_successful_decision_teaches_no_censor(workspace):
    censors_learn_from_decisions()
    record = decisions.decision_record(workspace=workspace, description="Use Postgres for sessions", confidence=0.7)
    decisions.decision_record_outcome(decision=record, outcome="success")
    assert censors_learn_from_decisions()["censors"] == 0 and not learned("decision")


def test_a_decision_failing_again_through_a_replayed_event_proposes_nothing_twice(workspace):
    from memory.models import ScanCursor

    censors_learn_from_decisions()
    start = ScanCursor.objects.get(name="failures").position
    record = decisions.decision_record(workspace=workspace, description="Deploy on Fridays", confidence=0.9)
    decisions.decision_record_outcome(decision=record, outcome="failure")
    censors_learn_from_decisions()
    ScanCursor.objects.filter(name="failures").update(position=start)  # a killed run, re-read
    censors_learn_from_decisions()
    assert len(learned("decision")) == 1


# --- a procedure retired ---------------------------------------------------------------------------

def failing(workspace) -> Procedure:
    procedure = procedure_create(workspace_id=workspace.pk, name="Restart the cache",
                                 steps=["stop it", "wipe it", "start it"]).memory.procedure
    for _ in range(5):
        procedure = procedure_outcome(procedure=procedure, outcome="failure", actor=SYSTEM)
    return procedure


def test_retiring_a_procedure_proposes_a_censor_from_it(api, workspace):
    procedure = failing(workspace)
    item = ReviewItem.objects.get(kind="low_effectiveness", target_id=procedure.pk)
    body = api.post(f"/candidates/{item.pk}/promote", {"note": "it never works"}).json()
    assert body["status"] == "approved" and body["result"]["retired"] is True
    [censor] = learned("procedure")
    assert body["result"]["censor"] == censor.pk
    assert censor.metadata["learned_from"] == {"kind": "procedure", "id": procedure.pk}
    assert Censor.objects.get(pk=censor.pk).trigger == "Restart the cache"
    assert "worked 0 of 5 times" in censor.text
    assert ReviewItem.objects.filter(kind="memory", target_id=censor.pk, status="pending").exists()


def test_keeping_a_failing_procedure_teaches_nothing(api, workspace):
    procedure = failing(workspace)
    item = ReviewItem.objects.get(kind="low_effectiveness", target_id=procedure.pk)
    api.post(f"/candidates/{item.pk}/reject", {})
    assert not learned("procedure")


def test_the_review_card_and_the_memory_page_link_to_what_taught_the_censor(client, teammate, workspace, api):
    procedure = failing(workspace)
    item = ReviewItem.objects.get(kind="low_effectiveness", target_id=procedure.pk)
    api.post(f"/candidates/{item.pk}/promote", {})
    [censor] = learned("procedure")
    client.force_login(teammate)
    queue = client.get("/w/acme/review/").content.decode()
    assert f'href="/w/acme/memories/{procedure.pk}/">retired procedure #{procedure.pk}</a>' in queue
    page = client.get(f"/w/acme/memories/{censor.pk}/").content.decode()
    assert "a procedure retired for low effectiveness" in page and f"/w/acme/memories/{procedure.pk}/" in page
    assert api.get(f"/memories/{censor.pk}").json()["learned_from"] == {"kind": "procedure", "id": procedure.pk}


# --- episodes with an outcome ---------------------------------------------------------------------

def unit(seed: int) -> list[float]:
    v = np.random.default_rng(seed).standard_normal(384)
    return (v / np.linalg.norm(v)).tolist()


def episode(api, text: str, outcome: str | None, vector) -> int:
    payload = {"type": "episodic", "text": text, **({"outcome": outcome} if outcome else {})}
    response = api.post("/memories", payload)
    assert response.status_code == 201, response.json()
    memory_id = response.json()["memory"]["id"]
    Memory.objects.filter(pk=memory_id).update(embedding=vector)  # as the worker would embed it
    return memory_id


@pytest.fixture
def deploy(workspace) -> Procedure:
    return procedure_create(workspace_id=workspace.pk, name="Deploy the billing service",
                            steps=["run the tests", "build the image", "roll out"], embedding=unit(1)).memory.procedure


def test_a_failed_episode_counts_a_failed_use_and_proposes_a_censor(api, workspace, deploy):
    memory_id = episode(api, "Deployed the billing service; the rollout failed halfway.", "failure", unit(1))
    counts = episodes_learn()
    assert counts == {"episodes": 1, "procedure_uses": 1, "censors": 1, "refused": 0}
    deploy.refresh_from_db()
    assert (deploy.activation_count, deploy.success_count, deploy.failure_count) == (1, 0, 1)
    [censor] = learned("episode")
    assert censor.metadata["learned_from"] == {"kind": "episode", "id": memory_id}
    assert Memory.objects.get(pk=memory_id).metadata["learned"]["censor"] == censor.pk
    assert episodes_learn()["episodes"] == 0  # once
    deploy.refresh_from_db()
    assert deploy.activation_count == 1


def test_a_successful_episode_counts_a_success_and_teaches_no_censor(api, workspace, deploy):
    episode(api, "Deployed the billing service without a hitch.", "success", unit(1))
    episodes_learn()
    deploy.refresh_from_db()
    assert (deploy.activation_count, deploy.success_count) == (1, 1) and not learned("episode")


def test_an_episode_matching_no_procedure_or_without_outcome_counts_nothing(api, workspace, deploy):
    episode(api, "Baked bread; it burnt.", "failure", unit(99))
    episode(api, "Deployed the billing service.", None, unit(1))
    assert episodes_learn()["procedure_uses"] == 0
    deploy.refresh_from_db()
    assert deploy.activation_count == 0
    assert len(learned("episode")) == 1  # the burnt bread still failed


def test_outcome_goes_with_episodes_only(api):
    assert_error(api.post("/memories", {"type": "fact", "text": "The sky is blue.", "outcome": "failure"}), 422)
    assert_error(api.post("/memories", {"type": "episodic", "text": "We met.", "outcome": "meh"}), 422)
    assert not Memory.objects.exists()


@pytest.mark.django_db(transaction=True)  # job_run writes outside any transaction
def test_the_learning_job_records_its_run(workspace):
    tasks.learn_from_failures()
    run = JobRun.objects.get(name="memory.learn_from_failures")
    assert run.status == "ok" and run.counts["decisions_events"] == 0 and run.counts["episodes_episodes"] == 0


# --- the absolute action ---------------------------------------------------------------------------

def test_an_absolute_censor_blocks_without_override(api):
    created = api.post("/censors", {"trigger": "drop the production database", "action": "absolute"})
    assert created.status_code == 201, created.json()
    censor_id = created.json()["memory"]["id"]
    assert created.json()["memory"]["censor"]["action"] == "absolute"
    check = api.post("/censors/check", {"action": "drop the production database tonight"}).json()
    assert check["verdict"] == "block" and check["overridable"] is False
    assert check["matches"][0]["action"] == "absolute"
    # A false-positive report would be an override: refused, and nothing changes.
    assert_error(api.post(f"/censors/{censor_id}/false-positive", {"note": "just this once"}), 409)
    censor = Censor.objects.get(pk=censor_id)
    assert censor.action == "absolute" and censor.false_positive_count == 0


def test_an_ordinary_block_is_overridable_and_absolute_ranks_first(api):
    api.post("/censors", {"trigger": "force push to main", "action": "block"})
    check = api.post("/censors/check", {"action": "force push to main"}).json()
    assert check["verdict"] == "block" and check["overridable"] is True
    api.post("/censors", {"trigger": "push to main", "action": "absolute"})
    check = api.post("/censors/check", {"action": "force push to main"}).json()
    assert [m["action"] for m in check["matches"]] == ["absolute", "block"] and check["overridable"] is False
    assert api.post("/censors/check", {"action": "water the plants"}).json() == {
        "verdict": "allow", "overridable": True, "matches": []}


def test_an_absolute_censor_never_escalates_or_changes_by_activations(api):
    censor_id = api.post("/censors", {"trigger": "delete backups", "action": "absolute",
                                      "escalation_threshold": 1}).json()["memory"]["id"]
    for _ in range(3):
        api.post("/censors/check", {"action": "delete backups"})
    censor = Censor.objects.get(pk=censor_id)
    assert censor.action == "absolute" and censor.activation_count == 3 and censor.escalated_at is None
