"""Working memory (capacity, eviction to long-term memory, nothing deleted), scratchpads
(lossless state, checkpoints, restore, optimistic versions), trusted state (versioned,
insert-only in the database) and isolation between workspaces."""

from __future__ import annotations

import json

import pytest
from django.db import IntegrityError, InternalError, ProgrammingError, transaction

from memory.models import Memory, TrustedState, WorkingMemoryItem
from tests.helpers import assert_error

pytestmark = pytest.mark.django_db


def items(*pairs):
    return [{"content": c, "attention": a} for c, a in pairs]


def test_overflow_evicts_the_lowest_attention_items_to_long_term_memory(api):
    focus = items(*[(f"item {i}", i / 10) for i in range(9)])
    response = api.put("/working-memory/s1", {"items": focus, "task": "fix the login bug"})
    assert response.status_code == 200, response.json()
    body = response.json()
    assert body["capacity"] == 7 and len(body["items"]) == 7
    assert [i["content"] for i in body["evicted"]] == ["item 0", "item 1"]
    assert body["items"][0]["content"] == "item 8"  # highest attention first
    stored = Memory.objects.filter(source="working_memory").order_by("id")
    assert [m.text for m in stored] == ["item 0", "item 1"] and {m.type for m in stored} == {"episodic"}
    assert [i["memory_id"] for i in body["evicted"]] == [m.pk for m in stored]
    assert WorkingMemoryItem.objects.count() == 9  # nothing deleted


def test_items_left_out_are_evicted_and_kept(api):
    api.put("/working-memory/s1", {"items": items(("a", 0.5), ("b", 0.5))})
    body = api.put("/working-memory/s1", {"items": items(("b", 0.9), ("c", 0.2))}).json()
    assert sorted(i["content"] for i in body["items"]) == ["b", "c"]
    assert [i["content"] for i in body["evicted"]] == ["a"]
    assert api.get("/working-memory/s1").json()["evicted"][0]["content"] == "a"
    assert [i["attention"] for i in body["items"]] == [0.9, 0.2]


def test_capacity_can_shrink_and_references_are_not_duplicated(api):
    memory = api.post("/memories", {"text": "The release is on Thursday."}).json()["memory"]
    api.put("/working-memory/s2", {"items": [{"content": "release Thursday", "attention": 0.1, "memory_id": memory["id"],
                                              "key": "release"}, *items(("x", 0.5), ("y", 0.6))]})
    body = api.put("/working-memory/s2", {"capacity": 2, "items": [
        {"content": "release Thursday", "attention": 0.1, "memory_id": memory["id"], "key": "release"},
        *items(("x", 0.5), ("y", 0.6))]}).json()
    assert body["capacity"] == 2 and [i["key"] for i in body["evicted"]] == ["release"]
    assert body["evicted"][0]["memory_id"] == memory["id"]
    assert Memory.objects.count() == 1  # a referenced memory is already long-term


def test_working_memory_bad_input(api, outsider_api):
    assert_error(api.put("/working-memory/s", {"items": items(("a", 2))}), 422)
    assert_error(api.put("/working-memory/s", {"items": [], "capacity": 0}), 422)
    assert_error(api.put("/working-memory/s", {"items": items(("a", 0.1), ("a", 0.2))}), 422)
    assert_error(api.put("/working-memory/s", {"items": items(("AKIAIOSFODNN7EXAMPLE", 0.1))}), 422, "secret_detected")
    assert_error(api.put("/working-memory/s", {"items": [{"content": "x", "memory_id": 999999}]}), 404)
    assert_error(api.get("/working-memory/nope"), 404)
    api.put("/working-memory/mine", {"items": items(("a", 0.1))})
    assert_error(outsider_api.get("/working-memory/mine"), 404)
    assert WorkingMemoryItem.objects.count() == 1


STATE = '{"b": 1, "a": [1.0, 2.50, {"z": null, "y": "é"}], "n": 12345678901234567890, "nested": {"k": true}}'


def test_a_scratchpad_keeps_the_state_exactly(api):
    response = api.put("/scratchpads/task-1", raw=STATE)
    assert response.status_code == 200, response.content
    body = api.get("/scratchpads/task-1").content.decode()
    assert body.endswith(f'"state": {STATE}}}')  # byte for byte: key order, 2.50, the big int
    assert json.loads(body)["version"] == 1
    assert json.loads(api.put("/scratchpads/task-1", raw="[1, 2]").content)["version"] == 2


def test_checkpoints_and_restore(api):
    api.put("/scratchpads/t", raw='{"step": 1}')
    checkpoint = api.post("/scratchpads/t/checkpoints", {"label": "before migration"})
    assert checkpoint.status_code == 201
    api.put("/scratchpads/t", raw='{"step": 2}')
    restored = api.post("/scratchpads/t/restore", {"label": "before migration"})
    assert json.loads(restored.content)["state"] == {"step": 1} and json.loads(restored.content)["version"] == 3
    again = api.post("/scratchpads/t/restore", {"checkpoint_id": checkpoint.json()["id"]})
    assert json.loads(again.content)["version"] == 4
    listed = api.get("/scratchpads/t/checkpoints").json()
    assert [c["label"] for c in listed] == ["before migration"] and listed[0]["version"] == 1


def test_a_write_based_on_an_old_version_is_a_conflict(api):
    api.put("/scratchpads/t", raw='{"step": 1}')
    api.put("/scratchpads/t", raw='{"step": 2}', expected_version=1)
    assert_error(api.put("/scratchpads/t", raw='{"step": 3}', expected_version=1), 409)
    assert json.loads(api.get("/scratchpads/t").content)["state"] == {"step": 2}


def test_scratchpad_bad_input(api, outsider_api):
    assert_error(api.put("/scratchpads/t", raw="{not json"), 422)
    assert_error(api.put("/scratchpads/t", raw='{"token": "AKIAIOSFODNN7EXAMPLE"}'), 422, "secret_detected")
    assert_error(api.get("/scratchpads/t"), 404)
    api.put("/scratchpads/t", raw="{}")
    assert_error(api.post("/scratchpads/t/restore", {}), 422)
    assert_error(api.post("/scratchpads/t/restore", {"label": "nope"}), 404)
    assert_error(outsider_api.get("/scratchpads/t"), 404)
    assert_error(outsider_api.post("/scratchpads/t/checkpoints", {}), 404)


def test_trusted_state_is_versioned_and_set_by_admins(api, admin_api, outsider_api):
    assert_error(api.put("/trusted-state/deploy-freeze", {"value": "until Monday"}), 403)
    first = admin_api.put("/trusted-state/deploy-freeze", {"value": "until Monday"}).json()
    second = admin_api.put("/trusted-state/deploy-freeze", {"value": "until Tuesday", "note": "slipped"}).json()
    assert (first["version"], second["version"]) == (1, 2)
    assert api.get("/trusted-state").json()[0]["value"] == "until Tuesday"
    assert [v["value"] for v in api.get("/trusted-state/deploy-freeze").json()] == ["until Tuesday", "until Monday"]
    assert admin_api.delete("/trusted-state/deploy-freeze").json()["deleted"] is True
    assert api.get("/trusted-state").json() == []
    assert_error(admin_api.delete("/trusted-state/never-set"), 404)
    assert outsider_api.get("/trusted-state").json() == []
    assert_error(outsider_api.get("/trusted-state/deploy-freeze"), 404)
    assert_error(admin_api.put("/trusted-state/k", {"value": "AKIAIOSFODNN7EXAMPLE"}), 422, "secret_detected")


def test_the_database_refuses_to_edit_trusted_state(admin_api):
    admin_api.put("/trusted-state/k", {"value": "v"})
    row = TrustedState.objects.get()
    for statement in (lambda: TrustedState.objects.filter(pk=row.pk).update(value="edited"),
                      lambda: TrustedState.objects.filter(pk=row.pk).delete()):
        with pytest.raises((InternalError, ProgrammingError, IntegrityError)), transaction.atomic():
            statement()
    assert TrustedState.objects.get().value == "v"
