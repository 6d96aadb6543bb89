"""API rate limits (core/ratelimit.py): per key, per client address, per address on failed
authentication; 429 in the error shape with Retry-After; rejected keys in the audit log;
counters shared between processes and exact under concurrent increments."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from pathlib import Path
from types import SimpleNamespace

import django_ratelimit.core
import pytest
from django.core.cache import caches
from django.db import connection, transaction
from django.test import Client, RequestFactory

from core import ratelimit, services
from core.models import AuditEvent
from tests.helpers import ApiClient, assert_error

pytestmark = pytest.mark.django_db

BASE_DIR = Path(__file__).resolve().parents[2]
# Any instant: django-ratelimit's windows are fixed, and a frozen clock keeps a test in one.
FROZEN_NOW = 1_800_000_000.0


@pytest.fixture(autouse=True)
def frozen_window(monkeypatch):
    monkeypatch.setattr(django_ratelimit.core, "time", SimpleNamespace(time=lambda: FROZEN_NOW))


def _status(key: str | None, address: str = "127.0.0.1", **meta):
    headers = {"Authorization": f"Bearer {key}"} if key else {}
    return Client(REMOTE_ADDR=address).get("/api/v1/status", headers=headers, **meta)


def _assert_rate_limited(response, limit: str) -> int:
    error = assert_error(response, 429, "rate_limited")
    retry_after = int(response["Retry-After"])
    assert 1 <= retry_after <= 3600
    assert error["details"] == {"limit": limit, "retry_after": retry_after}
    return retry_after


# --- per key ----------------------------------------------------------------------------

def test_a_key_past_its_limit_gets_429_with_retry_after_and_other_keys_do_not(ratelimit_cache, settings, workspace,
                                                                              make_key):
    settings.MNEMO_RATE_LIMIT_PER_KEY = "3/h"
    _, busy = make_key(workspace, scopes="read")
    _, quiet = make_key(workspace, scopes="read", name="quiet")
    assert [_status(busy).status_code for _ in range(3)] == [200, 200, 200]
    _assert_rate_limited(_status(busy), "key")
    # The same key from another address is the same key.
    _assert_rate_limited(_status(busy, address="10.1.1.1"), "key")
    assert _status(quiet).status_code == 200


def test_a_rate_limited_call_does_nothing(settings, workspace, make_key):
    settings.MNEMO_RATE_LIMIT_PER_KEY = "1/h"
    _, key = make_key(workspace, scopes="admin")
    api = ApiClient(key)
    assert api.post("/keys", {"name": "first", "scopes": ["read"]}).status_code == 201
    _assert_rate_limited(api.post("/keys", {"name": "second", "scopes": ["read"]}), "key")
    assert sorted(workspace.api_keys.values_list("name", flat=True)) == ["first", "test"]


# --- per address ------------------------------------------------------------------------

def test_an_address_past_its_limit_gets_429_whatever_key_it_uses(settings, workspace, make_key):
    settings.MNEMO_RATE_LIMIT_PER_ADDRESS = "4/h"
    _, first = make_key(workspace, scopes="read")
    _, second = make_key(workspace, scopes="read", name="second")
    assert [_status(key).status_code for key in (first, second, first, second)] == [200] * 4
    _assert_rate_limited(_status(second), "address")
    _assert_rate_limited(_status(None), "address")
    assert _status(first, address="10.2.2.2").status_code == 200


def test_x_forwarded_for_is_ignored_unless_a_trusted_proxy_is_configured(settings, workspace, make_key):
    settings.MNEMO_RATE_LIMIT_PER_ADDRESS = "2/h"
    _, key = make_key(workspace, scopes="read")
    spoofed = [_status(key, HTTP_X_FORWARDED_FOR=f"198.51.100.{n}").status_code for n in range(3)]
    assert spoofed == [200, 200, 429]


def test_behind_a_trusted_proxy_the_address_it_appended_is_the_client(settings, workspace, make_key):
    settings.MNEMO_RATE_LIMIT_PER_ADDRESS = "2/h"
    settings.MNEMO_TRUSTED_PROXY_COUNT = 1
    _, key = make_key(workspace, scopes="read")
    # What the client wrote itself comes first; the proxy appends the address it saw.
    forwarded = lambda client: {"HTTP_X_FORWARDED_FOR": f"203.0.113.9, {client}"}  # noqa: E731
    assert [_status(key, **forwarded("192.0.2.1")).status_code for _ in range(2)] == [200, 200]
    _assert_rate_limited(_status(key, **forwarded("192.0.2.1")), "address")
    assert _status(key, **forwarded("192.0.2.2")).status_code == 200


@pytest.mark.parametrize(("meta", "proxies", "expected"), [
    ({"REMOTE_ADDR": "192.0.2.7"}, 0, "192.0.2.7"),
    ({"REMOTE_ADDR": "192.0.2.7", "HTTP_X_FORWARDED_FOR": "10.0.0.1"}, 0, "192.0.2.7"),
    ({"REMOTE_ADDR": "10.0.0.254", "HTTP_X_FORWARDED_FOR": "1.1.1.1, 192.0.2.8"}, 1, "192.0.2.8"),
    ({"REMOTE_ADDR": "10.0.0.254", "HTTP_X_FORWARDED_FOR": "192.0.2.8, 10.0.0.3"}, 2, "192.0.2.8"),
    # Fewer entries than proxies, or garbage where the proxy's entry should be: REMOTE_ADDR.
    ({"REMOTE_ADDR": "10.0.0.254", "HTTP_X_FORWARDED_FOR": "192.0.2.8"}, 2, "10.0.0.254"),
    ({"REMOTE_ADDR": "10.0.0.254", "HTTP_X_FORWARDED_FOR": "<script>"}, 1, "10.0.0.254"),
    ({"REMOTE_ADDR": ""}, 0, "0.0.0.0"),
])
def test_client_address(settings, meta, proxies, expected):
    settings.MNEMO_TRUSTED_PROXY_COUNT = proxies
    request = RequestFactory().get("/", **meta)
    assert ratelimit.client_address(request) == expected


def test_ipv6_clients_are_counted_by_their_64_prefix(settings, workspace, make_key):
    settings.MNEMO_RATE_LIMIT_PER_ADDRESS = "2/h"
    _, key = make_key(workspace, scopes="read")
    assert _status(key, address="2001:db8:1:2::1").status_code == 200
    assert _status(key, address="2001:db8:1:2::ffff").status_code == 200
    _assert_rate_limited(_status(key, address="2001:db8:1:2:aaaa::5"), "address")
    assert _status(key, address="2001:db8:1:3::1").status_code == 200


# --- failed authentication --------------------------------------------------------------

def test_wrong_keys_from_one_address_are_stopped_by_the_default_limit(workspace):
    """The issue's 300 wrong keys in 2 s: with the defaults (20/m), the 21st gets a 429."""
    answers = [_status(f"mn_{n:08d}_wrong").status_code for n in range(30)]
    assert answers == [401] * 20 + [429] * 10
    # Only the answered attempts are audited: the limit caps what an attacker can add.
    assert AuditEvent.objects.filter(verb="api_key.rejected").count() == 20


def test_past_the_failed_key_limit_the_address_gets_429_and_no_more_audit_rows(settings, workspace, make_key):
    settings.MNEMO_RATE_LIMIT_FAILED_AUTH = "3/h"
    _, key = make_key(workspace, scopes="read")
    assert [_status("mn_abcdefgh_wrong").status_code for _ in range(3)] == [401, 401, 401]
    _assert_rate_limited(_status("mn_abcdefgh_wrong"), "failed_auth")
    _assert_rate_limited(_status("not-a-key"), "failed_auth")
    assert AuditEvent.objects.filter(verb="api_key.rejected").count() == 3
    # No key at all guesses nothing: a 401, counted only against the address.
    assert_error(_status(None), 401, "unauthorized")
    # A valid key behind the same address still works: one broken agent does not lock out
    # its neighbours, and a 40-character random secret is not there to be guessed.
    assert _status(key).status_code == 200
    assert _status("mn_abcdefgh_wrong", address="10.3.3.3").status_code == 401


def test_a_wrong_secret_for_a_real_prefix_is_audited_in_that_workspace(workspace, other_workspace, make_key):
    api_key, plaintext = make_key(workspace, scopes="admin")
    wrong = plaintext[:-4] + ("aaaa" if not plaintext.endswith("aaaa") else "bbbb")
    assert_error(_status(wrong, address="192.0.2.50"), 401, "unauthorized")
    event = AuditEvent.objects.get(verb="api_key.rejected")
    assert event.workspace == workspace
    assert (event.target_type, event.target_id) == ("core.apikey", str(api_key.pk))
    assert event.actor_label == "address:192.0.2.50"
    assert event.data == {"reason": "wrong_secret", "prefix": api_key.prefix, "address": "192.0.2.50"}
    assert wrong.split("_")[2] not in json.dumps(event.data)
    # The workspace's admins see it in their audit log; the other workspace does not.
    rows = ApiClient(plaintext).get("/audit", verb="api_key.rejected").json()["items"]
    assert [row["data"]["reason"] for row in rows] == ["wrong_secret"]
    _, other_key = make_key(other_workspace, scopes="admin")
    assert ApiClient(other_key).get("/audit", verb="api_key.rejected").json()["items"] == []


def test_unknown_revoked_and_malformed_keys_are_audited_with_their_reason(workspace, make_key):
    revoked, revoked_plaintext = make_key(workspace, scopes="read")
    services.api_key_revoke(api_key=revoked, actor=services.SYSTEM)
    for presented in ("mn_zzzzzzzz_secret", revoked_plaintext, "not-a-key"):
        assert_error(_status(presented), 401, "unauthorized")
    _status(None)  # no key at all: nothing was presented, nothing to audit
    events = {e.data["reason"]: e for e in AuditEvent.objects.filter(verb="api_key.rejected")}
    assert set(events) == {"unknown_key", "revoked", "malformed"}
    assert events["unknown_key"].workspace is None and events["unknown_key"].data["prefix"] == "zzzzzzzz"
    assert events["revoked"].workspace == workspace and events["revoked"].target_id == str(revoked.pk)
    assert events["malformed"].workspace is None and events["malformed"].data["prefix"] == ""


# --- shared counters ----------------------------------------------------------------------

_COUNT_IN_ANOTHER_PROCESS = """
import json, os, sys
from types import SimpleNamespace

os.environ["DJANGO_SETTINGS_MODULE"] = "mnemo.settings"
from django.conf import settings

args = json.loads(sys.argv[1])
settings.DATABASES["default"].update(args["database"])
settings.RATELIMIT_CACHE_PREFIX = args["cache_prefix"]
settings.MNEMO_RATE_LIMIT_PER_KEY = args["rate"]
import django

django.setup()
import django_ratelimit.core
from django.test import RequestFactory

from core import ratelimit

django_ratelimit.core.time = SimpleNamespace(time=lambda: args["now"])
request = RequestFactory().get("/api/v1/status")
for _ in range(args["count"]):
    ratelimit.api_key_count(request, key_prefix=args["key_prefix"])
"""


def test_requests_counted_by_another_process_count_here(settings, workspace, make_key, tmp_path):
    """What gunicorn's workers do: each process increments the same counters."""
    settings.MNEMO_RATE_LIMIT_PER_KEY = "5/h"
    api_key, key = make_key(workspace, scopes="read")
    database = {name: connection.settings_dict[name] for name in ("NAME", "USER", "PASSWORD", "HOST", "PORT")}
    args = {"database": database, "cache_prefix": settings.RATELIMIT_CACHE_PREFIX, "rate": "5/h", "now": FROZEN_NOW,
            "count": 3, "key_prefix": api_key.prefix}
    env = {**os.environ, "MNEMO_VAR_DIR": str(tmp_path), "SECRET_KEY": "test"}
    done = subprocess.run([sys.executable, "-c", _COUNT_IN_ANOTHER_PROCESS, json.dumps(args)], cwd=BASE_DIR, env=env,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert [_status(key).status_code for _ in range(2)] == [200, 200]
    _assert_rate_limited(_status(key), "key")


@pytest.fixture(params=["postgresql", "redis"])
def ratelimit_cache(request, settings):
    if request.param == "redis":
        from tests.conftest import _redis_reachable

        if not _redis_reachable():
            pytest.skip("no Redis on 127.0.0.1:6379 on this machine")
        settings.CACHES = {**settings.CACHES, "ratelimit": {
            "BACKEND": "django.core.cache.backends.redis.RedisCache", "LOCATION": "redis://127.0.0.1:6379/13"}}
    return request.param


@pytest.mark.django_db(transaction=True)
def test_concurrent_increments_of_one_counter_are_all_counted(ratelimit_cache, settings):
    """Django's DatabaseCache.incr (get, then set) loses increments made at the same time;
    core.cache.AtomicDatabaseCache and Redis do not."""
    threads, per_thread = 6, 30
    key = settings.RATELIMIT_CACHE_PREFIX + "concurrent"
    assert caches["ratelimit"].add(key, 0, 600)
    assert not caches["ratelimit"].add(key, 0, 600)
    start, errors = threading.Barrier(threads), []

    def increment():
        try:
            start.wait()
            for _ in range(per_thread):
                caches["ratelimit"].incr(key)
        except Exception as exc:  # noqa: BLE001 - reported by the assertion below
            errors.append(exc)
        finally:
            connection.close()

    workers = [threading.Thread(target=increment) for _ in range(threads)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()
    assert errors == []
    assert caches["ratelimit"].get(key) == threads * per_thread
    caches["ratelimit"].delete(key)


def test_an_expired_counter_starts_again(settings):
    cache = caches["ratelimit"]
    key = settings.RATELIMIT_CACHE_PREFIX + "expired"
    assert cache.add(key, 5, 600)
    with connection.cursor() as cursor:
        cursor.execute("UPDATE mnemo_ratelimit_cache SET expires = now() - interval '1 second' WHERE cache_key = %s",
                       [cache.make_key(key)])
    with pytest.raises(ValueError):
        cache.incr(key)
    assert cache.add(key, 1, 600)
    assert cache.incr(key) == 2


@pytest.mark.django_db(transaction=True)
def test_a_counter_commits_without_waiting_for_the_disk_and_leaves_the_connection_as_it_was(settings, monkeypatch):
    """core.cache: the counter's own transaction runs with synchronous_commit off; the
    setting is SET LOCAL, so neither the connection's next transaction nor a caller's
    transaction around the counter is made asynchronous."""
    cache = caches["ratelimit"]
    key = settings.RATELIMIT_CACHE_PREFIX + "async"
    seen = []
    real_execute = type(connection.cursor()).execute

    def spy(cursor, sql, params=None):
        if "mnemo_ratelimit_cache" in sql:
            with connection.cursor() as probe:
                probe.execute("SHOW synchronous_commit")
                seen.append(probe.fetchone()[0])
        return real_execute(cursor, sql, params)

    with connection.cursor() as cursor:
        cursor.execute("SET synchronous_commit TO on")  # the test server's default is off
    monkeypatch.setattr(type(connection.cursor()), "execute", spy)
    assert cache.add(key, 0, 600) and cache.incr(key) == 1
    assert seen and set(seen) == {"off"}
    seen.clear()
    with connection.cursor() as cursor:
        cursor.execute("SHOW synchronous_commit")
        assert cursor.fetchone()[0] == "on"
    with transaction.atomic():  # a caller's transaction: its commit must stay synchronous
        assert cache.incr(key) == 2
        assert set(seen) == {"on"}
    cache.delete(key)
    connection.close()  # the session-level SET goes with the connection
