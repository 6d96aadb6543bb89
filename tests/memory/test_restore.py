"""Restoring what decay archived (issue 19 part 2): POST /memories/{id}/restore and the
Restore button on the memory page; audited; a duplicate stays folded; scopes, roles and
other workspaces; bad input never a 5xx."""

from __future__ import annotations

import pytest

from core.models import AuditEvent
from memory.models import Memory
from tests.helpers import assert_error

pytestmark = pytest.mark.django_db


def archived(api, text="The harbour ferry used the north pier.", reason="decay") -> int:
    response = api.post("/memories", {"text": text, "type": "fact"})
    assert response.status_code == 201, response.json()
    pk = response.json()["memory"]["id"]
    Memory.objects.filter(pk=pk).update(status="archived", archived_reason=reason, strength=0.02)
    return pk


def test_the_api_restores_a_decayed_memory_at_full_strength_and_audits_it(api):
    pk = archived(api)
    assert api.get(f"/memories/{pk}").json()["archived_reason"] == "decay"
    response = api.post(f"/memories/{pk}/restore", {"reason": "still true"})
    assert response.status_code == 200, response.json()
    body = response.json()
    assert body["status"] == "active" and body["archived_reason"] == "" and body["strength"] == 1.0
    memory = Memory.objects.get(pk=pk)
    assert memory.strength_at is not None  # decay starts again from now, not from its old use
    event = AuditEvent.objects.get(verb="memory.restore", target_id=str(pk))
    assert event.data == {"note": "still true", "strength_before": 0.02} and event.actor_api_key is not None
    assert_error(api.post(f"/memories/{pk}/restore", {}), 409)  # active now: nothing to restore


def test_a_duplicate_or_a_live_memory_is_not_restored(api):
    duplicate = archived(api, reason="duplicate")
    assert_error(api.post(f"/memories/{duplicate}/restore", {}), 409)
    assert Memory.objects.get(pk=duplicate).status == "archived"


def test_restore_needs_write_scope_and_the_memorys_workspace(api, make_key, workspace, outsider_api):
    from tests.helpers import ApiClient

    pk = archived(api)
    _, read_key = make_key(workspace, scopes="read", name="reader")
    assert_error(ApiClient(read_key).post(f"/memories/{pk}/restore", {}), 403)
    assert_error(outsider_api.post(f"/memories/{pk}/restore", {}), 404)
    assert Memory.objects.get(pk=pk).status == "archived"


@pytest.mark.parametrize("raw", ["not json", '{"reason": 5}', '{"nope": 1}', '{"reason": "' + "x" * 2001 + '"}'])
def test_bad_input_is_4xx(api, raw):
    pk = archived(api)
    response = api.post(f"/memories/{pk}/restore", raw=raw)
    assert 400 <= response.status_code < 500
    assert_error(api.post("/memories/99999999/restore", {}), 404)


def test_a_secret_in_the_reason_is_refused(api):
    pk = archived(api)
    assert_error(api.post(f"/memories/{pk}/restore", {"reason": "key AKIAIOSFODNN7EXAMPLE"}), 422)
    assert Memory.objects.get(pk=pk).status == "archived"


def test_reviewers_restore_from_the_memory_page(client, api, teammate):
    pk = archived(api)
    client.force_login(teammate)
    page = client.get(f"/w/acme/memories/{pk}/").content.decode()
    assert "Archived by decay" in page and f"/w/acme/memories/{pk}/restore/" in page
    response = client.post(f"/w/acme/memories/{pk}/restore/", {"note": "we still use it"})
    assert response.status_code == 302
    assert Memory.objects.get(pk=pk).status == "active"
    assert AuditEvent.objects.get(verb="memory.restore").actor_user == teammate
    assert "Archived by decay" not in client.get(f"/w/acme/memories/{pk}/").content.decode()


def test_viewers_see_no_button_and_cannot_restore_and_outsiders_get_404(client, api, viewer, outsider):
    pk = archived(api)
    client.force_login(viewer)
    page = client.get(f"/w/acme/memories/{pk}/").content.decode()
    assert "Archived by decay" in page and "/restore/" not in page
    assert client.post(f"/w/acme/memories/{pk}/restore/").status_code == 403
    client.force_login(outsider)
    assert client.post(f"/w/acme/memories/{pk}/restore/").status_code == 404
    assert Memory.objects.get(pk=pk).status == "archived"
