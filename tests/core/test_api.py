"""The API foundation: authentication, scopes, the error shape, health/ready/status, keys
and the audit log, and isolation between workspaces."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.db import connection
from django.utils import timezone

from core import services
from core.layers import Layer
from core.models import ApiKey, AuditEvent
from tests.helpers import ApiClient, assert_error

pytestmark = pytest.mark.django_db

# A layer added through settings.MNEMO_LAYERS; its counter reads this table.
TEST_LAYER_COUNTS: dict[int, int] = {}
TEST_LAYER = Layer(name="test", pending={"test items": lambda ws: TEST_LAYER_COUNTS.get(ws.pk, 0)})


# --- authentication -------------------------------------------------------------------

def test_status_answers_for_the_workspace_of_the_key(api, workspace):
    response = api.get("/status")
    assert response.status_code == 200
    body = response.json()
    assert body["workspace"] == {"id": workspace.id, "slug": "acme", "name": "Acme"}
    assert body["pending"] == {"conversation summaries": 0, "entities to embed": 0, "episode tails": 0,
                               "gaps to embed": 0, "interactions": 0, "memories to embed": 0} and body["idle"] is True
    assert body["worker"] == {"last_seen_at": None, "hostname": None}


@pytest.mark.parametrize("header", [
    None,
    "Bearer",
    "Bearer ",
    "Bearer not-a-key",
    "Bearer mn_short_secret",
    "Basic dXNlcjpwYXNz",
    "Token mn_abcdefgh_xyz",
])
def test_it_rejects_missing_or_malformed_keys_with_401(client, workspace, header):
    headers = {"Authorization": header} if header is not None else {}
    response = client.get("/api/v1/status", headers=headers)
    assert_error(response, 401, "unauthorized")
    assert response["WWW-Authenticate"] == "Bearer"


def test_a_wrong_secret_for_a_real_prefix_is_401(workspace, make_key):
    api_key, key = make_key(workspace)
    forged = key[:-1] + ("A" if key[-1] != "A" else "B")
    assert_error(ApiClient(forged).get("/status"), 401, "unauthorized")


def test_a_revoked_key_is_401(workspace, make_key):
    api_key, key = make_key(workspace)
    client = ApiClient(key)
    assert client.get("/status").status_code == 200
    services.api_key_revoke(api_key=api_key)
    assert_error(client.get("/status"), 401, "unauthorized")


def test_an_expired_key_is_401(workspace, make_key):
    api_key, key = make_key(workspace, expires_at=timezone.now() + timedelta(hours=1))
    assert ApiClient(key).get("/status").status_code == 200
    ApiKey.objects.filter(pk=api_key.pk).update(expires_at=timezone.now() - timedelta(seconds=1))
    assert_error(ApiClient(key).get("/status"), 401, "unauthorized")


def test_a_key_without_the_scope_is_403(workspace, make_key):
    _, key = make_key(workspace, scopes="write")
    error = assert_error(ApiClient(key).get("/status"), 403, "forbidden")
    assert error["details"] == {"required_scope": "read"}


def test_read_and_write_keys_cannot_use_admin_operations(api):
    assert_error(api.get("/keys"), 403, "forbidden")
    assert_error(api.post("/keys", {"name": "x", "scopes": ["read"]}), 403, "forbidden")
    assert ApiKey.objects.count() == 1


def test_the_admin_scope_includes_read(admin_api):
    assert admin_api.get("/status").status_code == 200


def test_using_a_key_records_when_it_was_last_used(workspace, make_key):
    api_key, key = make_key(workspace)
    assert api_key.last_used_at is None
    ApiClient(key).get("/status")
    api_key.refresh_from_db()
    assert api_key.last_used_at is not None and timezone.now() - api_key.last_used_at < timedelta(minutes=1)


def test_the_plaintext_key_is_stored_nowhere_in_the_database(workspace, make_key, admin_api):
    _, key = make_key(workspace, name="agent")
    created = admin_api.post("/keys", {"name": "via api", "scopes": ["read"]}).json()["key"]
    ApiClient(key).get("/status")
    secrets = [key, key.split("_")[2], created, created.split("_")[2]]
    with connection.cursor() as cursor:
        cursor.execute("SELECT tablename FROM pg_tables WHERE schemaname = 'public'")
        tables = [row[0] for row in cursor.fetchall()]
        assert "core_apikey" in tables and "core_auditevent" in tables
        for table in tables:
            for secret in secrets:
                cursor.execute(f'SELECT count(*) FROM "{table}" t WHERE t::text LIKE %s', [f"%{secret}%"])
                assert cursor.fetchone()[0] == 0, f"{table} holds a plaintext key"


# --- the error shape -----------------------------------------------------------------

def test_an_unknown_api_path_is_404_in_the_error_shape(api):
    assert_error(api.get("/no-such-thing"), 404, "not_found")


def test_malformed_json_is_422_and_stores_nothing(admin_api):
    before = ApiKey.objects.count()
    error = assert_error(admin_api.post("/keys", raw='{"name": "x", "scopes": ['), 422, "malformed_json")
    assert "JSON" in error["message"]
    assert ApiKey.objects.count() == before


def test_a_failed_validation_is_422_naming_the_field(admin_api):
    before = ApiKey.objects.count()
    error = assert_error(admin_api.post("/keys", {"name": "x", "scopes": ["root"]}), 422, "validation_error")
    assert any("scopes" in err["loc"] for err in error["details"]["errors"])
    assert_error(admin_api.post("/keys", {"name": "", "scopes": ["read"]}), 422, "validation_error")
    assert ApiKey.objects.count() == before


def test_an_expiry_in_the_past_is_422(admin_api):
    before = ApiKey.objects.count()
    past = (timezone.now() - timedelta(days=1)).isoformat()
    assert_error(admin_api.post("/keys", {"name": "x", "scopes": ["read"], "expires_at": past}), 422, "validation_error")
    assert ApiKey.objects.count() == before


def test_a_page_size_above_the_maximum_is_422(admin_api):
    assert_error(admin_api.get("/audit", limit=1000), 422, "validation_error")


# --- health, ready, status -------------------------------------------------------------

def test_health_needs_no_key_and_no_database(client, django_assert_num_queries):
    with django_assert_num_queries(0):
        response = client.get("/api/v1/health")
    assert response.status_code == 200
    assert response.json() == {"status": "ok"}
    assert response["X-Request-ID"]


def test_ready_reports_each_dependency(client):
    response = client.get("/api/v1/ready")
    assert response.status_code == 200, response.json()
    body = response.json()
    assert body["ready"] is True
    assert set(body["checks"]) == {"database", "pgvector", "migrations", "broker"}
    assert body["checks"]["pgvector"]["detail"].startswith("vector 0.8")
    assert body["checks"]["database"]["detail"].startswith("PostgreSQL")


def test_ready_is_503_when_the_broker_is_unreachable(client, settings):
    # Nothing listens on port 1: the broker check must fail, fast, and say so.
    settings.CELERY_BROKER_URL = "redis://127.0.0.1:1/0"
    response = client.get("/api/v1/ready")
    assert response.status_code == 503
    body = response.json()
    assert body["ready"] is False
    assert body["checks"]["broker"]["ok"] is False
    assert body["checks"]["database"]["ok"] is True


def test_ready_is_503_when_the_filesystem_broker_folder_is_missing(client, settings, tmp_path):
    settings.CELERY_BROKER_TRANSPORT_OPTIONS = {
        **settings.CELERY_BROKER_TRANSPORT_OPTIONS, "data_folder_in": str(tmp_path / "gone"),
    }
    response = client.get("/api/v1/ready")
    assert response.status_code == 503
    assert "gone" in response.json()["checks"]["broker"]["detail"]


def test_status_counts_a_layers_pending_work_for_the_keys_workspace_only(api, workspace, other_workspace, settings):
    counts = {workspace.pk: 3, other_workspace.pk: 7}
    TEST_LAYER_COUNTS.clear()
    TEST_LAYER_COUNTS.update(counts)
    settings.MNEMO_LAYERS = [*settings.MNEMO_LAYERS, "tests.core.test_api.TEST_LAYER"]
    body = api.get("/status").json()
    assert body["pending"]["test items"] == 3
    assert body["idle"] is False
    TEST_LAYER_COUNTS[workspace.pk] = 0
    assert api.get("/status").json()["idle"] is True


def test_status_shows_the_last_worker_heartbeat(api):
    services.worker_heartbeat_record(hostname="worker-1")
    worker = api.get("/status").json()["worker"]
    assert worker["hostname"] == "worker-1" and worker["last_seen_at"]


def test_the_request_id_is_echoed_when_the_client_sends_one(api):
    response = api.client.get("/api/v1/health", headers={"X-Request-ID": "agent-42.call-7"})
    assert response["X-Request-ID"] == "agent-42.call-7"
    response = api.client.get("/api/v1/health", headers={"X-Request-ID": "bad id with spaces"})
    assert response["X-Request-ID"] != "bad id with spaces"


def test_openapi_docs_render(client):
    assert client.get("/api/v1/docs").status_code == 200
    schema = client.get("/api/v1/openapi.json").json()
    assert "/api/v1/status" in schema["paths"]


# --- keys and audit through the API ------------------------------------------------------

def test_an_admin_key_creates_a_key_that_works_and_is_audited(admin_api, workspace):
    response = admin_api.post("/keys", {"name": "summariser", "scopes": ["read", "write"]})
    assert response.status_code == 201
    body = response.json()
    assert body["key"].startswith(f"mn_{body['prefix']}_")
    assert body["scopes"] == ["read", "write"]
    assert ApiClient(body["key"]).get("/status").status_code == 200
    event = AuditEvent.objects.get(verb="api_key.create", target_id=str(body["id"]))
    assert event.actor_label.startswith("key:admin")
    assert event.workspace == workspace


def test_listing_keys_never_shows_a_secret(admin_api):
    listing = admin_api.get("/keys").json()
    assert listing["count"] == 1
    assert set(listing["items"][0]) == {"id", "name", "prefix", "scopes", "created_at", "last_used_at", "expires_at", "revoked_at",
                                          "agent_id"}


def test_revoking_a_key_through_the_api(admin_api, workspace, make_key):
    api_key, key = make_key(workspace)
    response = admin_api.post(f"/keys/{api_key.pk}/revoke")
    assert response.status_code == 200 and response.json()["revoked_at"]
    assert_error(ApiClient(key).get("/status"), 401)
    assert AuditEvent.objects.filter(verb="api_key.revoke", target_id=str(api_key.pk)).count() == 1


def test_another_workspaces_key_is_404_and_untouched(outsider_api, workspace, make_key):
    api_key, key = make_key(workspace)
    assert_error(outsider_api.post(f"/keys/{api_key.pk}/revoke"), 404, "not_found")
    api_key.refresh_from_db()
    assert api_key.revoked_at is None
    assert ApiClient(key).get("/status").status_code == 200


def test_the_audit_log_is_per_workspace_and_filterable(admin_api, outsider_api, workspace, other_workspace):
    admin_api.post("/keys", {"name": "one", "scopes": ["read"]})
    mine = admin_api.get("/audit").json()
    assert mine["count"] >= 2 and all(item["verb"] for item in mine["items"])
    created = admin_api.get("/audit", verb="api_key.create").json()
    assert {item["data"]["name"] for item in created["items"]} == {"admin", "one"}
    theirs = outsider_api.get("/audit", verb="api_key.create").json()
    assert {item["data"]["name"] for item in theirs["items"]} == {"outsider"}


def test_status_of_one_workspace_is_not_visible_with_anothers_key(outsider_api, other_workspace):
    assert outsider_api.get("/status").json()["workspace"]["slug"] == "globex"


def test_every_answer_says_its_server_time(api, anon_api):
    for response in (api.get("/status"), anon_api.get("/health")):
        name, duration = response["Server-Timing"].split(";dur=")
        assert name == "app" and float(duration) >= 0
