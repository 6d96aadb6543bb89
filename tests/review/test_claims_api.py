"""Claims: what derivation found about one span of one message is reviewed once. "I'm in
Berlin now" is one claim of four facets (memory, entity, relationship, profile value),
decided in one call through each owner's handlers, atomically and audited; an unticked
facet is rejected; a facet decided elsewhere is reported; /candidates still works facet by
facet and the claim follows its facets."""

from __future__ import annotations

import pytest

from conversations.models import Interaction
from conversations.services import InteractionItem, interactions_index, interactions_log
from core.models import AuditEvent
from entities import services as entity_services
from entities.models import Entity, ProfileValue, Relationship
from memory import services as memory_services
from memory.models import Memory
from memory.services import Draft, Evidence
from review import services
from review.models import Claim, ReviewItem
from tests.helpers import ApiClient, assert_error
from tests.review import factories

pytestmark = pytest.mark.django_db

BERLIN = "I'm in Berlin now"


def derive(workspace, text: str = BERLIN, sender: str = "ada") -> Interaction:
    [result] = interactions_log(workspace=workspace, items=[InteractionItem(
        channel="chat", channel_id=sender, sender_name=sender.title(), content=text)])
    interactions_index(interaction_ids=[result.id])
    return Interaction.objects.get(pk=result.id)


def facets(claim: Claim) -> dict[str, ReviewItem]:
    return {item.kind: item for item in claim.items.all()}


def owner_status(item: ReviewItem) -> str:
    model = {"memory": Memory, "entity": Entity, "relationship": Relationship, "profile_value": ProfileValue}[item.kind]
    return model.objects.get(pk=item.target_id).status


@pytest.fixture
def berlin(workspace) -> Claim:
    derive(workspace)
    [claim] = Claim.objects.filter(workspace=workspace)
    return claim


def test_i_am_in_berlin_now_is_one_claim_with_four_facets(berlin):
    assert set(facets(berlin)) == {"memory", "entity", "relationship", "profile_value"}
    assert berlin.status == "pending" and berlin.span == (0, len(BERLIN))


def test_facets_opened_in_separate_transactions_join_one_claim(workspace):
    [source] = interactions_log(workspace=workspace, items=[InteractionItem(
        channel="chat", channel_id="ada", sender_name="Ada", content="Lately I moved to Lisbon with Bo.")])
    start = "Lately I moved to Lisbon with Bo.".find("moved to Lisbon")
    memory_services.memory_store(workspace_id=workspace.pk, draft=Draft(
        type="identity", text="Ada lives in Lisbon.", certainty="extracted", confidence=0.8, rule="identity.location",
        subject_id=source.entity_id, evidence=[Evidence(source.id, "moved to Lisbon", start, start + 15)]))
    lisbon, _ = entity_services.entity_propose(workspace_id=workspace.pk, kind="place", name="Lisbon",
                                               evidence_ids=[source.id], quote="Lisbon", rule="rule:place")
    bo, _ = entity_services.entity_propose(workspace_id=workspace.pk, kind="person", name="Bo",
                                           evidence_ids=[source.id], quote="Bo", rule="rule:person")
    claims = list(Claim.objects.filter(workspace=workspace).order_by("pk"))
    assert [sorted(facets(c)) for c in claims] == [["entity", "memory"], ["entity"]]
    assert ReviewItem.objects.get(kind="entity", target_id=lisbon.pk).claim_id == claims[0].pk
    assert ReviewItem.objects.get(kind="entity", target_id=bo.pk).claim_id == claims[1].pk


def test_approving_the_claim_approves_every_facet_through_its_owner_and_audits_once(berlin, owner):
    from core.services import Actor

    result = services.claim_decide(claim=berlin, actor=Actor.for_user(owner), approve=True, note="moved")
    assert len(result.decided) == 4 and not result.gone
    for item in facets(Claim.objects.get(pk=berlin.pk)).values():
        assert item.status == "approved" and owner_status(item) == "active"
    berlin.refresh_from_db()
    assert berlin.status == "decided" and berlin.decided_by == owner and berlin.note == "moved"
    [event] = AuditEvent.objects.filter(verb="review.claim")
    assert event.data["decision"] == "approve" and len(event.data["facets"]) == 4
    assert AuditEvent.objects.filter(verb="review.approve").count() == 4


def test_an_unticked_facet_is_rejected_and_an_edited_one_edited(api, berlin):
    f = facets(berlin)
    body = api.post(f"/claims/{berlin.pk}/approve", {
        "exclude": [f["entity"].pk, f["relationship"].pk],
        "edits": {str(f["profile_value"].pk): {"value": "Berlin-Mitte"}}}).json()
    assert body["claim"]["status"] == "decided" and len(body["decided"]) == 4
    assert owner_status(f["memory"]) == "active"
    assert owner_status(f["entity"]) == "invalid" and owner_status(f["relationship"]) == "invalid"
    assert ProfileValue.objects.get(entity=f["profile_value"].entity, key="location", status="active").value == "Berlin-Mitte"


def test_rejecting_the_claim_rejects_every_facet(api, berlin):
    body = api.post(f"/claims/{berlin.pk}/reject", {"note": "a joke"}).json()
    assert {facet["status"] for facet in body["claim"]["facets"]} == {"rejected"}
    assert ReviewItem.objects.filter(status="pending").count() == 0
    assert_error(api.post(f"/claims/{berlin.pk}/approve"), 409)


def test_a_facet_gone_meanwhile_is_reported_not_fatal(api, berlin, owner):
    from core.services import Actor

    relationship = Relationship.objects.get(pk=facets(berlin)["relationship"].target_id)
    Relationship.objects.filter(pk=relationship.pk).update(status="invalid")  # decided outside the queue
    body = api.post(f"/claims/{berlin.pk}/approve").json()
    assert [g["kind"] for g in body["gone"]] == ["relationship"]
    assert len(body["decided"]) == 3 and body["claim"]["status"] == "decided"
    assert ReviewItem.objects.get(pk=facets(berlin)["relationship"].pk).status == "withdrawn"


def test_a_failing_facet_decides_nothing(api, berlin):
    f = facets(berlin)
    assert_error(api.post(f"/claims/{berlin.pk}/approve", {"edits": {str(f["profile_value"].pk): {"value": " "}}}), 422)
    assert_error(api.post(f"/claims/{berlin.pk}/approve", {"edits": {str(f["relationship"].pk): {"text": "x"}}}), 422)
    assert_error(api.post(f"/claims/{berlin.pk}/approve", {"edits": {str(f["entity"].pk): {"name": "AKIAIOSFODNN7EXAMPLE"}}}),
                 422)
    assert_error(api.post(f"/claims/{berlin.pk}/approve", {"exclude": [f["memory"].pk],
                                                           "edits": {str(f["memory"].pk): {"text": "Ada is in Berlin."}}}),
                 422)
    assert ReviewItem.objects.filter(claim=berlin, status="pending").count() == 4
    assert Claim.objects.get(pk=berlin.pk).status == "pending"


def test_bad_input_is_422_never_500(api, berlin, workspace):
    other = derive(workspace, "I work at Acme as a nurse.")
    foreign = ReviewItem.objects.filter(source_interaction=other).first()
    assert_error(api.post(f"/claims/{berlin.pk}/approve", {"exclude": [foreign.pk]}), 422)
    assert_error(api.post(f"/claims/{berlin.pk}/approve", {"exclude": ["x"]}), 422)
    assert_error(api.post(f"/claims/{berlin.pk}/approve", {"exclude": [2**70]}), 422)
    assert_error(api.post(f"/claims/{berlin.pk}/approve", {"edits": {"abc": {"text": "x"}}}), 422)
    assert_error(api.post(f"/claims/{berlin.pk}/approve", {"note": "x\u0000"}), 422)
    assert_error(api.post(f"/claims/{berlin.pk}/approve", {"note": "key AKIAIOSFODNN7EXAMPLE"}), 422)
    assert_error(api.post(f"/claims/{berlin.pk}/approve", {"surprise": 1}), 422)
    assert_error(api.get("/claims", status="maybe"), 422)
    assert_error(api.get(f"/claims/{2**70}"), 422)
    assert Claim.objects.get(pk=berlin.pk).status == "pending"


def test_claims_are_listed_with_filters_and_pages(api, berlin, workspace):
    derive(workspace, "I work at Acme as a nurse.")
    body = api.get("/claims").json()
    assert body["count"] == 2
    first = body["items"][-1]
    assert first["id"] == berlin.pk and first["quote"] == BERLIN and len(first["facets"]) == 4
    assert api.get("/claims", kind="profile_value", type="employer").json()["count"] == 1
    assert api.get("/claims", limit=1).json()["items"][0]["id"] != berlin.pk
    assert api.get(f"/claims/{berlin.pk}").json()["label"] == berlin.label
    api.post(f"/claims/{berlin.pk}/approve")
    assert api.get("/claims", status="decided").json()["count"] == 1
    assert api.get("/claims").json()["count"] == 1


def test_outsiders_get_404_and_readers_403(berlin, outsider_api, workspace, make_key):
    assert_error(outsider_api.get(f"/claims/{berlin.pk}"), 404)
    assert_error(outsider_api.post(f"/claims/{berlin.pk}/approve"), 404)
    assert_error(outsider_api.post(f"/claims/{berlin.pk}/reject"), 404)
    assert outsider_api.get("/claims").json()["count"] == 0
    _, key = make_key(workspace, scopes="read", name="reader")
    reader = ApiClient(key)
    assert reader.get(f"/claims/{berlin.pk}").status_code == 200
    assert_error(reader.post(f"/claims/{berlin.pk}/approve"), 403)
    assert_error(ApiClient(None).get("/claims"), 401)
    assert Claim.objects.get(pk=berlin.pk).status == "pending"


def test_deciding_facets_one_by_one_through_candidates_decides_the_claim_at_the_last(api, berlin):
    items = list(berlin.items.order_by("pk"))
    for item in items[:-1]:
        assert api.post(f"/candidates/{item.pk}/reject").status_code == 200
        assert Claim.objects.get(pk=berlin.pk).status == "pending"
    assert api.post(f"/candidates/{items[-1].pk}/promote").status_code == 200
    assert Claim.objects.get(pk=berlin.pk).status == "decided"
    body = api.post(f"/candidates/promote", {"ids": [items[0].pk]}).json()
    assert body["skipped"][0]["code"] == "conflict"


def test_a_claim_with_facets_decided_before_decides_the_rest_and_names_them(api, berlin):
    first = berlin.items.order_by("pk").first()
    api.post(f"/candidates/{first.pk}/reject")
    body = api.post(f"/claims/{berlin.pk}/approve").json()
    assert len(body["decided"]) == 3
    assert ReviewItem.objects.get(pk=first.pk).status == "rejected"


def test_conflicts_and_sourceless_items_are_claims_of_their_own(workspace):
    targets = factories.every_kind(workspace)
    for kind in ("conflict", "graduation", "identity_link"):
        item = factories.item_for(kind, targets[kind])
        assert item.claim.solo and list(item.claim.items.all()) == [item]


def test_withdrawing_the_last_facet_decides_the_claim(api, berlin):
    for item in berlin.items.all():
        services.review_withdraw(kind=item.kind, target_ids=[item.target_id], workspace_id=item.workspace_id,
                                 reason="gone")
    assert Claim.objects.get(pk=berlin.pk).status == "decided"


def test_erasing_the_person_removes_their_claims(workspace, berlin):
    from core.services import SYSTEM

    entity = Entity.objects.get(pk=berlin.source_interaction.entity_id)
    entity_services.entity_erase(entity=entity, actor=SYSTEM)
    assert not Claim.objects.filter(pk=berlin.pk).exists()


def test_the_migration_puts_pending_items_into_claims_by_the_same_rule(workspace):
    import importlib

    from django.apps import apps

    derive(workspace)
    derive(workspace, "I work at Acme as a nurse. My sister Mia lives in Paris.")
    factories.conflict(workspace)
    before = {frozenset(c.items.values_list("pk", flat=True)) for c in Claim.objects.all()}
    decided = ReviewItem.objects.filter(kind="entity").first()
    services.review_decide(item=decided, actor=services.SYSTEM, action="reject")
    ReviewItem.objects.update(claim=None)
    Claim.objects.all().delete()
    importlib.import_module("review.migrations.0002_claims").pending_items_into_claims(apps, None)
    after = {frozenset(c.items.values_list("pk", flat=True)) for c in Claim.objects.all()}
    assert after == {claim - {decided.pk} for claim in before} - {frozenset()}
    assert ReviewItem.objects.get(pk=decided.pk).claim is None
