"""The events other apps announce: a review decision, a memory becoming active, an
erasure. Each makes a delivery with the right data, redacted, and nothing erased or
secret in it."""

from __future__ import annotations

import json

import pytest

from core.services import SYSTEM, Actor
from entities import services as entity_services
from memory import services as memory_services
from memory.models import MemoryStatus
from memory.services import Draft
from review import services as review_services
from review.models import ReviewItem
from tests.review import factories
from webhooks.models import WebhookDelivery

pytestmark = pytest.mark.django_db


def _payloads(event: str) -> list[dict]:
    return [d.payload for d in WebhookDelivery.objects.filter(event=event).order_by("id")]


def test_a_review_decision_is_announced(make_endpoint, workspace, owner):
    make_endpoint(events=["review.decided"])
    memory = factories.memory_candidate(workspace)
    item = ReviewItem.objects.get(kind="memory", target_id=memory.pk)
    review_services.review_decide(item=item, actor=Actor.for_user(owner), action="approve",
                                  note="checked with ada@example.com")
    [payload] = _payloads("review.decided")
    data = payload["data"]
    assert payload["workspace"] == "acme" and payload["event"] == "review.decided"
    assert (data["item_id"], data["kind"], data["target_id"], data["decision"], data["status"]) == (
        item.pk, "memory", memory.pk, "approve", "approved")
    assert data["text"] == memory.text and data["decided_by"] == "user:olivia"
    assert data["note"] == "checked with [email]"  # redacted like recall's ?redact=true
    assert not _payloads("memory.activated")  # this endpoint subscribes to decisions only


def test_bulk_decisions_are_announced_one_event_each(make_endpoint, workspace):
    make_endpoint(events=["review.decided"])
    ids = [ReviewItem.objects.get(target_id=factories.memory_candidate(workspace, text=f"Ada likes tea no. {n}.").pk,
                                  kind="memory").pk for n in range(3)]
    review_services.review_decide_many(workspace_id=workspace.pk, item_ids=ids, actor=SYSTEM, action="reject")
    payloads = _payloads("review.decided")
    assert sorted(p["data"]["item_id"] for p in payloads) == sorted(ids)
    assert len({p["event_id"] for p in payloads}) == 3 and {p["data"]["status"] for p in payloads} == {"rejected"}


def test_a_memory_becoming_active_is_announced(make_endpoint, workspace):
    make_endpoint(events=["memory.activated"])
    memory = factories.memory_candidate(workspace)
    assert not _payloads("memory.activated")  # a candidate is not active
    memory_services.memory_approve(memory=memory, actor=SYSTEM)
    [payload] = _payloads("memory.activated")
    assert payload["data"] == {"memory_id": memory.pk, "type": "preference", "text": memory.text,
                               "certainty": "inferred", "confidence": 0.6, "subject_id": memory.subject_id,
                               "supersedes": None, "reason": "approved"}


def test_a_memory_the_trust_policy_approves_is_announced(make_endpoint, workspace):
    make_endpoint(events=["memory.activated"])
    memory_services.trust_policy_set(workspace=workspace, actor=SYSTEM, auto_certainties=["verbatim"],
                                     auto_types=["fact"], min_confidence=0.5)
    stored = memory_services.memory_store(workspace_id=workspace.pk, draft=Draft(
        type="fact", text="The build server answers at 10.1.2.3.", certainty="verbatim", confidence=0.9))
    assert stored.memory.status == MemoryStatus.ACTIVE
    [payload] = _payloads("memory.activated")
    assert payload["data"]["reason"] == "auto_approved" and payload["data"]["text"] == "The build server answers at [ip]."


def test_editing_an_active_memory_announces_the_new_version(make_endpoint, workspace):
    memory = factories.memory_candidate(workspace)
    memory_services.memory_approve(memory=memory, actor=SYSTEM)
    make_endpoint(events=["memory.activated"])
    new = memory_services.memory_edit(memory=memory, actor=SYSTEM, text="Ada's favourite editor is Neovim.")
    [payload] = _payloads("memory.activated")
    assert payload["data"]["memory_id"] == new.pk and payload["data"]["supersedes"] == memory.pk
    assert payload["data"]["reason"] == "edited"


def test_an_erasure_is_announced_with_the_id_and_counts_only(make_endpoint, workspace):
    make_endpoint(events=["*"])
    memory = factories.memory_candidate(workspace)
    ada = memory.subject
    WebhookDelivery.objects.all().delete()
    receipt = entity_services.entity_erase(entity=ada, actor=SYSTEM)
    [payload] = _payloads("entity.erased")
    assert set(payload["data"]) == {"entity_id", "erasure", "receipt"}
    assert payload["data"]["entity_id"] == ada.pk and payload["data"]["receipt"] == receipt
    assert all(isinstance(n, int) for n in payload["data"]["receipt"].values())
    sent = json.dumps(payload)
    for erased in ("Ada", "Helix", "Lisbon", factories.MESSAGE):
        assert erased not in sent


def test_an_erasure_blanks_what_earlier_deliveries_copied(make_endpoint, workspace, owner):
    make_endpoint(events=["*"])
    memory = factories.memory_candidate(workspace)
    item = ReviewItem.objects.get(kind="memory", target_id=memory.pk)
    review_services.review_decide(item=item, actor=Actor.for_user(owner), action="approve")
    entity_services.entity_erase(entity=memory.subject, actor=SYSTEM)
    before = {d.event: d for d in WebhookDelivery.objects.exclude(event="entity.erased")}
    assert set(before) == {"review.decided", "memory.activated"}
    for delivery in before.values():
        assert delivery.payload["data"] == {"erased": True} and delivery.status == "failed"
        assert delivery.payload["event_id"] == str(delivery.event_id)  # the envelope stays
    assert "Helix" not in json.dumps(list(WebhookDelivery.objects.values_list("payload", flat=True)))
