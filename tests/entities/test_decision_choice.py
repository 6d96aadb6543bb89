"""PATCH /api/v1/decisions/{id} (issue 19 part 4; seed 003's update_decision): the choice
made after deliberation is recorded — one of the options when there are some, with the
confidence when it changed — audited without the decision's text, never after the outcome
is reviewed, and never for another workspace's decision."""

from __future__ import annotations

import pytest

from core.models import AuditEvent
from entities.models import DecisionRecord
from tests.helpers import ApiClient, assert_error

pytestmark = pytest.mark.django_db

SECRET = "AKIAIOSFODNN7EXAMPLE"


@pytest.fixture
def decision(api) -> dict:
    response = api.post("/decisions", {"description": "Which cache for sessions?", "confidence": 0.5,
                                       "options": ["Redis", "Postgres UNLOGGED tables"]})
    assert response.status_code == 201, response.content
    return response.json()["decision"]


def test_the_choice_and_the_new_confidence_are_recorded_and_audited(api, decision):
    body = api.patch(f"/decisions/{decision['id']}", {"chosen": "Postgres UNLOGGED tables", "confidence": 0.8})
    assert body.status_code == 200, body.content
    assert body.json()["chosen"] == "Postgres UNLOGGED tables" and body.json()["confidence"] == 0.8
    record = DecisionRecord.objects.get(pk=decision["id"])
    assert (record.chosen, record.stated_confidence) == ("Postgres UNLOGGED tables", 0.8)
    event = AuditEvent.objects.get(verb="decision.choose", target_id=str(decision["id"]))
    assert event.data == {"changed": ["chosen", "confidence"], "confidence": 0.8}
    assert "Postgres" not in str(event.data)  # erasure must be able to forget the text
    # Deliberation may go on: the choice can change until the outcome is reviewed.
    again = api.patch(f"/decisions/{decision['id']}", {"chosen": "Redis"}).json()
    assert again["chosen"] == "Redis" and again["confidence"] == 0.8


def test_once_the_outcome_is_reviewed_the_choice_is_a_conflict(api, decision):
    api.post(f"/decisions/{decision['id']}/outcome", {"outcome": "success"})
    error = assert_error(api.patch(f"/decisions/{decision['id']}", {"chosen": "Redis"}), 409)
    assert error["details"]["outcome"] == "success"
    assert DecisionRecord.objects.get(pk=decision["id"]).chosen == ""


@pytest.mark.parametrize("payload", [
    {"chosen": "Memcached"},  # not one of the options
    {"chosen": ""},
    {"chosen": "   "},
    {"chosen": "Redis", "confidence": 1.5},
    {"chosen": "Redis", "extra": 1},
    {},
    {"chosen": f"Redis with key {SECRET}"},
])
def test_bad_choices_are_refused_and_nothing_changes(api, decision, payload):
    response = api.patch(f"/decisions/{decision['id']}", payload)
    assert_error(response, 422)
    record = DecisionRecord.objects.get(pk=decision["id"])
    assert (record.chosen, record.stated_confidence) == ("", 0.5)
    assert not AuditEvent.objects.filter(verb="decision.choose").exists()


def test_without_options_any_choice_goes(api):
    made = api.post("/decisions", {"description": "Rename the service?", "confidence": 0.6}).json()["decision"]
    assert api.patch(f"/decisions/{made['id']}", {"chosen": "Keep the old name"}).json()["chosen"] == "Keep the old name"


def test_scopes_outsiders_and_missing_ids(api, decision, outsider_api, anon_api, workspace, make_key):
    _, key = make_key(workspace, scopes="read", name="reader")
    assert_error(ApiClient(key).patch(f"/decisions/{decision['id']}", {"chosen": "Redis"}), 403)
    assert_error(outsider_api.patch(f"/decisions/{decision['id']}", {"chosen": "Redis"}), 404)
    assert_error(anon_api.patch(f"/decisions/{decision['id']}", {"chosen": "Redis"}), 401)
    assert_error(api.patch("/decisions/999999999", {"chosen": "Redis"}), 404)
    assert DecisionRecord.objects.get(pk=decision["id"]).chosen == ""
