"""/api/v1/webhooks and /api/v1/deliveries: admin scope for everything, 404 across
workspaces, 422 for what an endpoint may not be."""

from __future__ import annotations

import pytest

from core.models import AuditEvent
from tests.core.test_secrets_everywhere import SECRETS, changes_in_this_transaction
from tests.helpers import assert_error
from webhooks.models import DeliveryStatus, WebhookDelivery, WebhookEndpoint

pytestmark = pytest.mark.django_db

HOOK = {"url": "https://hooks.example.com/mnemo", "events": ["review.decided", "memory.activated"],
        "description": "the CI bot"}


def _create(admin_api, **changes) -> dict:
    response = admin_api.post("/webhooks", {**HOOK, **changes})
    assert response.status_code == 201, response.content
    return response.json()


def test_an_admin_key_creates_an_endpoint_and_sees_its_secret_once(admin_api):
    created = _create(admin_api)
    endpoint = WebhookEndpoint.objects.get()
    assert created["secret"] == endpoint.secret and created["secret_hint"] == "…" + endpoint.secret[-4:]
    assert created["events"] == HOOK["events"] and created["active"] is True
    shown = admin_api.get(f"/webhooks/{created['id']}").json()
    assert "secret" not in shown and shown["secret_hint"] == created["secret_hint"]
    listed = admin_api.get("/webhooks").json()
    assert listed["count"] == 1 and "secret" not in listed["items"][0]
    assert endpoint.secret not in admin_api.get("/audit").content.decode()


def test_patch_rotate_and_delete(admin_api):
    created = _create(admin_api)
    patched = admin_api.patch(f"/webhooks/{created['id']}", {"active": False, "events": ["*"]}).json()
    assert patched["active"] is False and patched["events"] == ["*"] and patched["url"] == HOOK["url"]
    rotated = admin_api.post(f"/webhooks/{created['id']}/rotate-secret").json()
    assert rotated["secret"] != created["secret"] and rotated["secret"] == WebhookEndpoint.objects.get().secret
    assert admin_api.delete(f"/webhooks/{created['id']}").status_code == 204
    assert not WebhookEndpoint.objects.exists()
    assert list(AuditEvent.objects.filter(verb__startswith="webhook.").values_list("verb", flat=True)
                .order_by("id")) == ["webhook.create", "webhook.update", "webhook.rotate_secret", "webhook.delete"]


def test_ping_deliveries_and_replay(admin_api):
    created = _create(admin_api)
    ping = admin_api.post(f"/webhooks/{created['id']}/ping")
    assert ping.status_code == 201 and ping.json()["event"] == "webhook.ping" and ping.json()["status"] == "pending"
    page = admin_api.get(f"/webhooks/{created['id']}/deliveries", limit=10).json()
    assert page["count"] == 1 and page["items"][0]["id"] == ping.json()["id"]
    assert_error(admin_api.post(f"/deliveries/{ping.json()['id']}/replay"), 409, "conflict")
    WebhookDelivery.objects.update(status=DeliveryStatus.FAILED)
    replay = admin_api.post(f"/deliveries/{ping.json()['id']}/replay")
    assert replay.status_code == 201
    assert replay.json()["event_id"] == ping.json()["event_id"] and replay.json()["id"] != ping.json()["id"]


def test_read_and_write_keys_are_refused_every_operation(api, admin_api):
    created = _create(admin_api)
    delivery = admin_api.post(f"/webhooks/{created['id']}/ping").json()
    wid = created["id"]
    calls = [("get", "/webhooks"), ("post", "/webhooks"), ("get", f"/webhooks/{wid}"), ("patch", f"/webhooks/{wid}"),
             ("delete", f"/webhooks/{wid}"), ("post", f"/webhooks/{wid}/rotate-secret"),
             ("post", f"/webhooks/{wid}/ping"), ("get", f"/webhooks/{wid}/deliveries"),
             ("post", f"/deliveries/{delivery['id']}/replay")]
    for method, path in calls:
        args = (path, HOOK) if method in ("post", "patch") else (path,)
        error = assert_error(getattr(api, method)(*args), 403, "forbidden")
        assert error["details"]["required_scope"] == "admin"
    endpoint = WebhookEndpoint.objects.get()
    assert endpoint.secret == created["secret"] and endpoint.active and WebhookDelivery.objects.count() == 1


def test_an_outsider_gets_404_for_every_id(admin_api, outsider_api):
    created = _create(admin_api)
    delivery = admin_api.post(f"/webhooks/{created['id']}/ping").json()
    WebhookDelivery.objects.update(status=DeliveryStatus.FAILED)
    wid = created["id"]
    assert_error(outsider_api.get(f"/webhooks/{wid}"), 404)
    assert_error(outsider_api.patch(f"/webhooks/{wid}", {"active": False}), 404)
    assert_error(outsider_api.delete(f"/webhooks/{wid}"), 404)
    assert_error(outsider_api.post(f"/webhooks/{wid}/rotate-secret"), 404)
    assert_error(outsider_api.post(f"/webhooks/{wid}/ping"), 404)
    assert_error(outsider_api.get(f"/webhooks/{wid}/deliveries"), 404)
    assert_error(outsider_api.post(f"/deliveries/{delivery['id']}/replay"), 404)
    assert outsider_api.get("/webhooks").json()["count"] == 0
    endpoint = WebhookEndpoint.objects.get()
    assert endpoint.active and WebhookDelivery.objects.count() == 1


@pytest.mark.parametrize("changes", [
    {"url": "ftp://hooks.example.com/"},
    {"url": "javascript:alert(1)"},
    {"url": "https://bot@hooks.example.com/"},
    {"url": "http://[::1/"},
    {"events": ["memory.deleted"]},
    {"events": []},
    {"description": "x" * 501},
    {"secret": "mine"},
])
def test_bad_input_is_a_422_and_stores_nothing(admin_api, changes):
    assert_error(admin_api.post("/webhooks", {**HOOK, **changes}), 422)
    assert not WebhookEndpoint.objects.exists()


def test_a_url_with_a_password_is_refused_as_a_secret(admin_api):
    error = assert_error(admin_api.post("/webhooks", {**HOOK, "url": "https://bot:Zx8kLq2vPw9@hooks.example.com/"}),
                         422, "secret_detected")
    assert error["details"]["field"] == "url" and "Zx8kLq2vPw9" not in str(error)
    assert not WebhookEndpoint.objects.exists()


def test_a_secret_in_the_description_is_refused_and_nothing_is_stored(admin_api, settings):
    settings.MNEMO_API_KEY_TOUCH_SECONDS = 10**9  # the key's last-used touch would count as a change
    admin_api.get("/webhooks")
    before = changes_in_this_transaction()
    response = admin_api.post("/webhooks", {**HOOK, "description": f"deploy key {SECRETS['aws_access_key']}"})
    error = assert_error(response, 422, "secret_detected")
    assert error["details"]["field"] == "description" and SECRETS["aws_access_key"] not in response.content.decode()
    assert changes_in_this_transaction() == before


def test_a_patch_with_a_bad_url_changes_nothing(admin_api):
    created = _create(admin_api)
    assert_error(admin_api.patch(f"/webhooks/{created['id']}", {"url": "https://bot@x.example/", "active": False}),
                 422)
    endpoint = WebhookEndpoint.objects.get()
    assert endpoint.url == HOOK["url"] and endpoint.active


def test_an_agent_without_a_key_is_a_401(anon_api):
    assert_error(anon_api.get("/webhooks"), 401)


def test_it_is_paginated_with_a_hard_maximum(admin_api):
    _create(admin_api)
    assert_error(admin_api.get("/webhooks", limit=10**6), 422)
