"""The review queue API: every kind lands in one queue, is listed with filters and pages,
and can be approved, edited then approved, merged, kept both (conflicts) or rejected —
each decision atomic and audited; bad input and other workspaces are refused."""

from __future__ import annotations

from typing import get_args

import pytest
from django.utils import timezone

from core.models import AuditEvent
from entities.models import Entity, LinkSuggestion, ProfileValue, Relationship
from memory.models import Graduation, Memory
from review.models import ReviewItem
from review.registry import kinds
from review.schemas import KindName
from tests.helpers import assert_error
from tests.review import factories

pytestmark = pytest.mark.django_db

KINDS = ["memory", "conflict", "graduation", "low_effectiveness", "entity", "relationship", "profile_value",
         "identity_link"]


@pytest.fixture
def targets(workspace):
    return factories.every_kind(workspace)


def _state(kind: str, target) -> str:
    """What the owner's row says now."""
    if kind in ("memory", "conflict"):
        return Memory.objects.get(pk=target.pk).status
    if kind == "graduation":
        return Graduation.objects.get(pk=target.pk).status
    if kind == "low_effectiveness":
        return Memory.objects.get(pk=target.pk).status
    if kind == "entity":
        return Entity.objects.get(pk=target.pk).status
    if kind == "relationship":
        return Relationship.objects.get(pk=target.pk).status
    if kind == "profile_value":
        return ProfileValue.objects.get(pk=target.pk).status
    return LinkSuggestion.objects.get(pk=target.pk).status


APPROVED = {"memory": "active", "conflict": "active", "graduation": "graduated", "low_effectiveness": "invalid",
            "entity": "active", "relationship": "active", "profile_value": "active", "identity_link": "accepted"}
REJECTED = {"memory": "invalid", "conflict": "invalid", "graduation": "rejected", "low_effectiveness": "active",
            "entity": "invalid", "relationship": "invalid", "profile_value": "rejected", "identity_link": "rejected"}


def test_every_kind_waits_in_one_queue_with_what_the_reviewer_needs(api, targets):
    body = api.get("/candidates", limit=50).json()
    assert body["count"] == len(KINDS)
    by_kind = {item["kind"]: item for item in body["items"]}
    assert set(by_kind) == set(KINDS)
    memory = by_kind["memory"]
    assert memory["target_id"] == targets["memory"].pk and memory["status"] == "pending"
    assert memory["rule"] == "preference.favorite" and memory["type"] == "preference"
    assert memory["source_interaction_id"] and memory["span"] == [12, 40]
    assert by_kind["conflict"]["proposal"]["old_text"] == "Ada lives in Porto."


def test_the_list_filters_and_pages(api, targets, workspace):
    assert [i["kind"] for i in api.get("/candidates", kind="entity").json()["items"]] == ["entity"]
    assert {i["kind"] for i in api.get("/candidates", type="preference").json()["items"]} == {"memory"}
    assert [i["kind"] for i in api.get("/candidates", rule="rule:profile.editor").json()["items"]] == ["profile_value"]
    high = api.get("/candidates", min_confidence=0.9).json()["items"]
    assert high and all(i["confidence"] >= 0.9 for i in high)
    ada = targets["memory"].subject_id
    assert {i["entity_id"] for i in api.get("/candidates", entity=ada).json()["items"]} == {ada}
    source = api.get("/candidates", kind="memory").json()["items"][0]["source_interaction_id"]
    assert {i["source_interaction_id"] for i in api.get("/candidates", source_interaction=source).json()["items"]} == {source}
    ReviewItem.objects.filter(kind="entity").update(created_at=timezone.now() - timezone.timedelta(days=3))
    assert [i["kind"] for i in api.get("/candidates", older_than_hours=48).json()["items"]] == ["entity"]
    assert "entity" not in {i["kind"] for i in api.get("/candidates", newer_than_hours=48).json()["items"]}
    first = api.get("/candidates", limit=3).json()
    second = api.get("/candidates", limit=3, offset=3).json()
    assert first["count"] == 8 and len(first["items"]) == 3
    assert not {i["id"] for i in first["items"]} & {i["id"] for i in second["items"]}
    assert_error(api.get("/candidates", limit=100000), 422)
    assert_error(api.get("/candidates", kind="nonsense"), 422)


@pytest.mark.parametrize("kind", KINDS)
def test_approving_changes_the_owners_row_and_is_audited(api, targets, kind):
    item = factories.item_for(kind, targets[kind])
    body = api.post(f"/candidates/{item.pk}/promote", {"note": "looks right"}).json()
    assert body["status"] == "approved" and body["decision"] == "approve" and body["decided_by"].startswith("key:")
    assert _state(kind, targets[kind]) == APPROVED[kind]
    event = AuditEvent.objects.get(verb="review.approve", target_id=str(item.pk))
    assert event.data["kind"] == kind and event.data["rule"] == item.rule and event.data["note"] == "looks right"
    if kind == "conflict":
        assert Memory.objects.get(text="Ada lives in Porto.").status == "superseded"
    # Graduating opens the entity candidate it became (seed 000), retiring a procedure the
    # censor it taught (issue 19 part 4): one more item to decide.
    assert api.get("/candidates").json()["count"] == len(KINDS) - 1 + (kind in ("graduation", "low_effectiveness"))


@pytest.mark.parametrize("kind", KINDS)
def test_rejecting_changes_the_owners_row_and_is_audited(api, targets, kind):
    item = factories.item_for(kind, targets[kind])
    body = api.post(f"/candidates/{item.pk}/reject", {"note": "wrong"}).json()
    assert body["status"] == "rejected" and body["decision"] == "reject"
    assert _state(kind, targets[kind]) == REJECTED[kind]
    assert AuditEvent.objects.filter(verb="review.reject", target_id=str(item.pk)).count() == 1


def test_deciding_twice_is_a_conflict_that_names_who_decided(api, admin_api, targets):
    item = factories.item_for("memory", targets["memory"])
    api.post(f"/candidates/{item.pk}/promote")
    error = assert_error(admin_api.post(f"/candidates/{item.pk}/reject"), 409, "conflict")
    assert error["details"]["decided_by"].startswith("key:") and "approved by key:" in error["message"]
    assert Memory.objects.get(pk=targets["memory"].pk).status == "active"


def test_edit_then_approve_makes_a_new_version(api, targets):
    item = factories.item_for("memory", targets["memory"])
    body = api.post(f"/candidates/{item.pk}/promote", {"changes": {"text": "Ada edits code in Helix."}}).json()
    assert body["decision"] == "edit"
    new = Memory.objects.get(pk=body["result"]["memory"])
    assert new.text == "Ada edits code in Helix." and new.status == "active" and new.supersedes_id == targets["memory"].pk
    assert AuditEvent.objects.get(verb="review.edit").data["changed"] == ["text"]


def test_edits_of_profile_values_and_entities(api, targets):
    profile = factories.item_for("profile_value", targets["profile_value"])
    body = api.post(f"/candidates/{profile.pk}/promote", {"changes": {"value": "Helix 25"}}).json()
    current = ProfileValue.objects.get(pk=body["result"]["value"])
    assert current.value == "Helix 25" and current.status == "active"
    assert ProfileValue.objects.get(pk=targets["profile_value"].pk).status == "rejected"
    entity = factories.item_for("entity", targets["entity"])
    api.post(f"/candidates/{entity.pk}/promote", {"changes": {"name": "Helix editor"}})
    assert Entity.objects.get(pk=targets["entity"].pk).name == "Helix editor"


def test_an_edit_into_nothing_or_a_secret_is_refused_and_changes_nothing(api, targets):
    item = factories.item_for("memory", targets["memory"])
    memories = Memory.objects.count()
    assert_error(api.post(f"/candidates/{item.pk}/promote", {"changes": {"text": "   "}}), 422, "validation_error")
    error = assert_error(api.post(f"/candidates/{item.pk}/promote",
                                  {"changes": {"text": "key AKIAIOSFODNN7EXAMPLE"}}), 422, "secret_detected")
    assert error["details"]["field"] == "changes.text"
    assert_error(api.post(f"/candidates/{item.pk}/promote", {"changes": {"importance": "1"}}), 422)
    rel = factories.item_for("relationship", targets["relationship"])
    assert_error(api.post(f"/candidates/{rel.pk}/promote", {"changes": {"predicate": "knows"}}), 422)
    assert Memory.objects.get(pk=targets["memory"].pk).status == "candidate"
    assert Memory.objects.count() == memories
    assert ReviewItem.objects.get(pk=item.pk).status == "pending"
    assert not AuditEvent.objects.filter(verb__startswith="review.").exists()


def test_merge_a_memory_into_an_existing_one(api, targets, workspace):
    existing = factories.memory_candidate(workspace, text="Ada uses the Helix editor.", quote="Helix")
    api.post(f"/candidates/{factories.item_for('memory', existing).pk}/promote")
    item = factories.item_for("memory", targets["memory"])
    body = api.post(f"/candidates/{item.pk}/promote", {"merge_into": existing.pk}).json()
    assert body["decision"] == "merge" and body["result"]["into"] == existing.pk
    existing.refresh_from_db()
    merged = Memory.objects.get(pk=targets["memory"].pk)
    assert merged.status == "archived" and merged.duplicate_of_id == existing.pk
    assert existing.reinforcement_count == 1 and existing.evidence.count() == 2


def test_merge_an_entity_and_refuse_merging_what_cannot_merge(api, targets, workspace, other_workspace):
    helix = Entity.objects.create(workspace=workspace, kind="tool", name="Helix Editor")
    item = factories.item_for("entity", targets["entity"])
    assert_error(api.post(f"/candidates/{item.pk}/promote", {"merge_into": 10**9}), 404)
    stranger = Entity.objects.create(workspace=other_workspace, kind="tool", name="Helix")
    assert_error(api.post(f"/candidates/{item.pk}/promote", {"merge_into": stranger.pk}), 404)
    body = api.post(f"/candidates/{item.pk}/promote", {"merge_into": helix.pk}).json()
    assert body["decision"] == "merge" and Entity.objects.get(pk=targets["entity"].pk).merged_into_id == helix.pk
    rel = factories.item_for("relationship", targets["relationship"])
    assert_error(api.post(f"/candidates/{rel.pk}/promote", {"merge_into": helix.pk}), 422)


def test_a_contradiction_can_be_true_at_different_times(api, targets):
    item = factories.item_for("conflict", targets["conflict"])
    body = api.post(f"/candidates/{item.pk}/keep-both", {"note": "she moved"}).json()
    assert body["decision"] == "both"
    old, new = Memory.objects.get(text="Ada lives in Porto."), Memory.objects.get(pk=targets["conflict"].pk)
    assert old.status == new.status == "active"
    assert old.valid_to == new.valid_from is not None
    other = factories.item_for("memory", targets["memory"])
    assert_error(api.post(f"/candidates/{other.pk}/keep-both"), 422)


def test_bulk_approve_skips_what_is_decided_and_refuses_foreign_ids(api, targets, outsider_api, other_workspace):
    items = [factories.item_for(kind, targets[kind]) for kind in ("memory", "entity", "profile_value")]
    api.post(f"/candidates/{items[0].pk}/reject")
    foreign = factories.memory_candidate(other_workspace)
    foreign_item = factories.item_for("memory", foreign)
    assert_error(api.post("/candidates/promote", {"ids": [items[1].pk, foreign_item.pk]}), 404)
    assert ReviewItem.objects.get(pk=items[1].pk).status == "pending"
    body = api.post("/candidates/promote", {"ids": [i.pk for i in items]}).json()
    assert sorted(i["id"] for i in body["decided"]) == sorted(i.pk for i in items[1:])
    assert [s["id"] for s in body["skipped"]] == [items[0].pk] and body["skipped"][0]["code"] == "conflict"
    assert Entity.objects.get(pk=targets["entity"].pk).status == "active"
    body = api.post("/candidates/reject", {"ids": [factories.item_for("relationship", targets["relationship"]).pk]}).json()
    assert len(body["decided"]) == 1 and Relationship.objects.get(pk=targets["relationship"].pk).status == "invalid"
    assert_error(api.post("/candidates/promote", {"ids": []}), 422)


def test_another_workspaces_items_are_not_found(outsider_api, targets):
    item = factories.item_for("memory", targets["memory"])
    assert_error(outsider_api.get(f"/candidates/{item.pk}"), 404)
    assert_error(outsider_api.post(f"/candidates/{item.pk}/promote"), 404)
    assert_error(outsider_api.post(f"/candidates/{item.pk}/reject"), 404)
    assert_error(outsider_api.post(f"/candidates/{item.pk}/keep-both"), 404)
    assert outsider_api.get("/candidates").json()["count"] == 0
    assert ReviewItem.objects.get(pk=item.pk).status == "pending"


def test_a_read_only_key_cannot_decide(workspace, make_key, targets):
    from tests.helpers import ApiClient

    _, key = make_key(workspace, scopes="read", name="reader")
    reader = ApiClient(key)
    item = factories.item_for("memory", targets["memory"])
    assert reader.get(f"/candidates/{item.pk}").status_code == 200
    assert_error(reader.post(f"/candidates/{item.pk}/promote"), 403)
    assert_error(ApiClient(None).get("/candidates"), 401)


def test_the_memory_routes_are_aliases_of_the_queue(api, targets):
    memory = targets["memory"]
    assert api.post(f"/memories/{memory.pk}/promote", {"reason": "ok"}).json()["status"] == "active"
    item = ReviewItem.objects.get(kind="memory", target_id=memory.pk)
    assert item.status == "approved" and item.note == "ok"
    graduation = targets["graduation"]
    api.post(f"/graduations/{graduation.pk}/reject", {"reason": "not an entity"})
    assert ReviewItem.objects.get(kind="graduation", target_id=graduation.pk).status == "rejected"
    value = targets["profile_value"]
    api.post(f"/profile-values/{value.pk}/approve")
    assert ReviewItem.objects.get(kind="profile_value", target_id=value.pk).decision == "approve"


def test_what_changes_outside_the_queue_leaves_it(api, targets):
    memory = targets["memory"]
    api.post(f"/memories/{memory.pk}/invalidate", {"reason": "wrong person"})
    item = ReviewItem.objects.get(kind="memory", target_id=memory.pk)
    assert item.status == "withdrawn"
    assert_error(api.post(f"/candidates/{item.pk}/promote"), 409)
    # An edit through the memory API puts the new version in the queue instead.
    conflict = targets["conflict"]
    new = api.patch(f"/memories/{conflict.pk}", {"text": "Ada lives in Lisbon now."}).json()
    assert ReviewItem.objects.get(kind="conflict", target_id=conflict.pk).status == "withdrawn"
    fresh = ReviewItem.objects.get(kind="conflict", target_id=new["id"], status="pending")
    api.post(f"/candidates/{fresh.pk}/promote")
    assert Memory.objects.get(text="Ada lives in Porto.").status == "superseded"


def test_a_target_removed_behind_the_queues_back_is_withdrawn_on_decision(api, targets):
    item = factories.item_for("entity", targets["entity"])
    Entity.objects.filter(pk=targets["entity"].pk).update(status="active")
    error = assert_error(api.post(f"/candidates/{item.pk}/promote"), 409, "conflict")
    assert "nothing left to decide" in error["message"]
    assert ReviewItem.objects.get(pk=item.pk).status == "withdrawn"


def test_statistics_come_from_the_audit_log(api, workspace, settings):
    settings.MNEMO_REVIEW_MIN_DECISIONS = 2
    settings.MNEMO_REVIEW_LOW_PRECISION = 0.6
    for n in range(3):
        memory = factories.memory_candidate(workspace, text=f"Noisy claim {n}.", rule="noisy.rule")
        api.post(f"/candidates/{factories.item_for('memory', memory).pk}/reject")
    good = factories.memory_candidate(workspace, text="A good claim.", rule="good.rule")
    api.post(f"/candidates/{factories.item_for('memory', good).pk}/promote")
    api.post("/memories", {"text": "Told to remember this.", "type": "fact"})  # auto-approved (verbatim)
    stats = api.get("/candidates/stats").json()
    rules = {r["rule"]: r for r in stats["rules"]}
    assert rules["noisy.rule"]["precision"] == 0 and rules["noisy.rule"]["low"] is True
    assert rules["good.rule"]["precision"] == 1 and rules["good.rule"]["low"] is False
    assert rules["noisy.rule"]["series"][0][2] == 3
    assert stats["auto_approved"] == 1 and stats["human_approved"] == 1 and stats["auto_share"] == 0.5
    assert stats["pending"] == 0


def test_backfill_opens_items_for_candidates_that_have_none(api, targets):
    from django.core.management import call_command

    ReviewItem.objects.all().delete()
    call_command("review_backfill")
    assert {i["kind"] for i in api.get("/candidates", limit=50).json()["items"]} == set(KINDS)
    call_command("review_backfill")
    assert api.get("/candidates").json()["count"] == len(KINDS)


def test_bulk_decisions_of_many_memories_are_set_based_and_still_audited(api, workspace):
    memories = [factories.memory_candidate(workspace, text=f"Claim {n}.", rule="claims.rule") for n in range(6)]
    items = [factories.item_for("memory", m) for m in memories]
    # One was decided behind the queue's back: it is withdrawn, the others are decided.
    Memory.objects.filter(pk=memories[0].pk).update(status="invalid")
    body = api.post("/candidates/promote", {"ids": [i.pk for i in items], "note": "batch"}).json()
    assert [i["id"] for i in body["decided"]] == [i.pk for i in items[1:]]
    assert body["decided"][0]["result"] == {"memory": memories[1].pk}
    assert [(s["id"], s["code"]) for s in body["skipped"]] == [(items[0].pk, "withdrawn")]
    assert set(Memory.objects.filter(pk__in=[m.pk for m in memories[1:]]).values_list("status", flat=True)) == {"active"}
    events = AuditEvent.objects.filter(verb="review.approve")
    assert events.count() == 5 and {e.data["rule"] for e in events} == {"claims.rule"}
    assert AuditEvent.objects.filter(verb="memory.approve", data__note="batch").count() == 5
    assert {r["rule"]: r["accepted"] for r in api.get("/candidates/stats").json()["rules"]} == {"claims.rule": 5}
    assert ReviewItem.objects.get(pk=items[1].pk).result == {"memory": memories[1].pk}


def test_erasing_a_person_removes_every_item_that_copied_their_data(api, admin_api, targets):
    ada = targets["memory"].subject_id
    decided = factories.item_for("profile_value", targets["profile_value"])
    api.post(f"/candidates/{decided.pk}/promote")
    receipt = admin_api.post(f"/entities/{ada}/erase").json()
    assert receipt["receipt"]["review_items"] == 5  # memory, conflict, entity, relationship, profile value
    left = list(ReviewItem.objects.values_list("kind", "text"))
    assert not [text for _, text in left if "Ada" in text or "Lisbon" in text or "Helix" in text], left
    assert {kind for kind, _ in left} >= {"identity_link", "low_effectiveness", "graduation"}


def test_a_merge_carries_the_items_about_the_person(api, targets, workspace):
    ada = Entity.objects.get(pk=targets["memory"].subject_id)
    other = Entity.objects.create(workspace=workspace, kind="person", name="Ada L.")
    merge = api.post(f"/entities/{ada.pk}/merge", {"into": other.pk}).json()
    assert api.get("/candidates", entity=other.pk).json()["count"] >= 4
    api.post(f"/merges/{merge['id']}/split")
    assert api.get("/candidates", entity=other.pk).json()["count"] == 0


def test_merging_or_graduating_outside_the_queue_withdraws_the_items(api, targets, workspace):
    helix = Entity.objects.create(workspace=workspace, kind="tool", name="Helix editor")
    api.post(f"/entities/{targets['entity'].pk}/merge", {"into": helix.pk})
    item = ReviewItem.objects.get(kind="entity", target_id=targets["entity"].pk)
    assert item.status == "withdrawn" and f"merged into entity {helix.pk}" in item.note
    graduation = targets["graduation"]
    assert api.post(f"/memories/{graduation.memory_id}/graduate").status_code == 201
    assert ReviewItem.objects.get(kind="graduation", target_id=graduation.pk).status == "withdrawn"


def test_the_kind_filter_names_every_layers_kind():
    assert set(get_args(KindName)) == set(kinds())


def test_a_bulk_answer_reads_the_items_proposers_with_the_items_not_one_by_one(api, workspace, make_key):
    """Each decided item says who proposed it (the key that logged its message): read with the
    locked items, not with a query per item (500 of them for 500 ids before, issue 21)."""
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    from conversations.services import InteractionItem, interactions_log

    key, _ = make_key(workspace, scopes="read,write", name="logger")
    [logged] = interactions_log(workspace=workspace, api_key=key, items=[InteractionItem(
        channel="slack", channel_id="U1", sender_name="Ada", content=factories.MESSAGE)])
    memories = [factories.memory_candidate(workspace, text=f"Claim {n}.", rule="claims.rule") for n in range(6)]
    items = [factories.item_for("memory", m) for m in memories]
    ReviewItem.objects.filter(pk__in=[i.pk for i in items]).update(source_interaction_id=logged.id)
    with CaptureQueriesContext(connection) as queries:
        body = api.post("/candidates/promote", {"ids": [i.pk for i in items]}).json()
    assert [i["proposed_by"]["key_name"] for i in body["decided"]] == ["logger"] * 6
    reads = [q["sql"] for q in queries.captured_queries
             if q["sql"].startswith("SELECT") and 'FROM "conversations_interaction"' in q["sql"].split(" WHERE ")[0]]
    assert reads == []
