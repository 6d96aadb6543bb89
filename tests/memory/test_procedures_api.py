"""Procedures (match with bands, outcomes, effectiveness, the low-effectiveness flag) and
censors (check, escalation from warn to block, false positives) through the API."""

from __future__ import annotations

import pytest

from core.models import AuditEvent
from memory.models import Censor, Procedure
from memory.services import memories_embed
from tests.helpers import assert_error

pytestmark = pytest.mark.django_db

DEPLOY = {"name": "How to deploy to production", "steps": ["open a PR", "wait for CI", "merge to main", "tag a release"],
          "goals": ["ship a change safely"], "tools": ["GitHub", "CI"], "notes": ["never on Fridays after 15:00"],
          "domain": "deployment"}
DEBUG = {"name": "How to debug a failing test", "steps": ["read the logs", "reproduce locally", "bisect"],
         "goals": ["find why a test fails"], "domain": "debugging"}


def create(api, payload, path="/procedures"):
    response = api.post(path, payload)
    assert response.status_code == 201, response.json()
    return response.json()["memory"]


def test_a_procedure_is_a_memory_with_bands(api):
    memory = create(api, DEPLOY)
    assert memory["type"] == "procedure" and memory["status"] == "active"
    assert memory["text"].startswith("How to deploy to production: 1) open a PR")
    assert memory["procedure"]["steps"] == DEPLOY["steps"] and memory["procedure"]["effectiveness"] == 0.5
    # also through POST /memories with type procedure
    via_memories = api.post("/memories", {"type": "procedure", "procedure": DEBUG}).json()
    assert via_memories["memory"]["procedure"]["name"] == DEBUG["name"]


def test_match_returns_the_relevant_procedure_core_band_first(api):
    deploy, debug = create(api, DEPLOY), create(api, DEBUG)
    memories_embed()
    found = api.post("/procedures/match", {"task": "deploy the new billing service to production"}).json()
    assert found and found[0]["id"] == deploy["id"]
    assert [b["band"] for b in found[0]["bands"]] == ["core", "upper", "lower"]
    assert found[0]["bands"][0]["items"]["steps"] == DEPLOY["steps"]
    assert debug["id"] not in [m["id"] for m in found]
    assert api.post("/procedures/match", {"task": "bake sourdough bread"}).json() == []


def test_outcomes_update_effectiveness_and_flag_a_failing_procedure(api, settings):
    settings.MNEMO_PROCEDURE_MIN_ACTIVATIONS = 4
    memory = create(api, DEBUG)
    for outcome in ("success", "failure", "failure", "failure"):
        response = api.post(f"/procedures/{memory['id']}/outcome", {"outcome": outcome})
        assert response.status_code == 200, response.json()
    procedure = response.json()["procedure"]
    assert (procedure["activation_count"], procedure["success_count"], procedure["failure_count"]) == (4, 1, 3)
    assert procedure["effectiveness"] == 0.25 and procedure["flagged_at"]
    assert AuditEvent.objects.filter(verb="procedure.flag", target_id=str(memory["id"])).count() == 1
    api.post(f"/procedures/{memory['id']}/outcome", {"outcome": "failure"})
    assert AuditEvent.objects.filter(verb="procedure.flag").count() == 1  # flagged once


def test_a_working_procedure_is_not_flagged(api, settings):
    settings.MNEMO_PROCEDURE_MIN_ACTIVATIONS = 2
    memory = create(api, DEPLOY)
    for _ in range(3):
        api.post(f"/procedures/{memory['id']}/outcome", {"outcome": "success"})
    assert Procedure.objects.get(pk=memory["id"]).flagged_at is None


def test_procedure_bad_input(api, outsider_api):
    memory = create(api, DEPLOY)
    assert_error(api.post(f"/procedures/{memory['id']}/outcome", {"outcome": "meh"}), 422)
    assert_error(api.post("/procedures", {"name": "x", "steps": []}), 422)
    assert_error(api.post("/procedures", {"name": "x", "steps": ["use AKIAIOSFODNN7EXAMPLE"]}), 422, "secret_detected")
    assert_error(outsider_api.post(f"/procedures/{memory['id']}/outcome", {"outcome": "success"}), 404)
    assert_error(api.post("/procedures/999999/outcome", {"outcome": "success"}), 404)
    assert Procedure.objects.count() == 1


def test_a_censor_warns_then_escalates_to_block(api):
    censor = create(api, {"trigger": "drop the production database", "reason": "we lost a day of data in 2023",
                          "escalation_threshold": 2}, path="/censors")
    memories_embed()
    assert censor["censor"]["action"] == "warn"
    first = api.post("/censors/check", {"action": "I will drop the production database to reset it"}).json()
    assert first["verdict"] == "warn" and first["matches"][0]["id"] == censor["id"]
    second = api.post("/censors/check", {"action": "drop the production database now"}).json()
    assert second["verdict"] == "block" and second["matches"][0]["escalated"] is True
    assert AuditEvent.objects.filter(verb="censor.escalate").count() == 1
    assert api.post("/censors/check", {"action": "update the README"}).json() == {"verdict": "allow", "overridable": True,
                                                                                 "matches": []}


def test_a_censor_matches_by_meaning(api):
    censor = create(api, {"trigger": "deploy on a Friday afternoon"}, path="/censors")
    memories_embed()
    found = api.post("/censors/check", {"action": "ship the release to production late on Friday"}).json()
    assert [m["id"] for m in found["matches"]] == [censor["id"]]
    assert found["matches"][0]["lexical"] < 1 and found["matches"][0]["similarity"] >= 0.6


def test_false_positives_bring_an_escalated_censor_back_to_warn(api):
    censor = create(api, {"trigger": "force push to main", "escalation_threshold": 2}, path="/censors")
    for _ in range(2):
        api.post("/censors/check", {"action": "force push to main"})
    assert Censor.objects.get(pk=censor["id"]).action == "block"
    after = api.post(f"/censors/{censor['id']}/false-positive", {"note": "it was a fork"}).json()
    assert after["censor"]["action"] == "warn" and after["censor"]["false_positive_count"] == 1
    api.post(f"/censors/{censor['id']}/false-positive", {})
    assert_error(api.post(f"/censors/{censor['id']}/false-positive", {}), 422)  # more reports than activations


def test_a_censor_created_as_block_stays_block(api):
    censor = create(api, {"trigger": "rm -rf /", "action": "block"}, path="/censors")
    api.post("/censors/check", {"action": "rm -rf / on the build box"})
    api.post(f"/censors/{censor['id']}/false-positive", {})
    assert Censor.objects.get(pk=censor["id"]).action == "block"


def test_censor_bad_input(api, outsider_api):
    assert_error(api.post("/censors", {"trigger": "x", "action": "veto"}), 422)
    assert_error(api.post("/censors", {"trigger": ""}), 422)
    assert_error(api.post("/censors/check", {"action": ""}), 422)
    censor = create(api, {"trigger": "force push"}, path="/censors")
    assert_error(outsider_api.post(f"/censors/{censor['id']}/false-positive", {}), 404)
    assert outsider_api.post("/censors/check", {"action": "force push"}).json()["matches"] == []
