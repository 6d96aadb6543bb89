"""Credentials Mnemo stores to use — a workspace's tracker token, a webhook's signing secret —
are encrypted at rest (core.sealing): the database row holds `fernet:…`, never the value;
the application reads the plain value; keys rotate (MNEMO_SEAL_KEYS, newest first, then
`manage.py reseal`); a value no key opens is a clear error, never an empty credential."""

from __future__ import annotations

import io

import pytest
from cryptography.fernet import Fernet
from django.core.management import CommandError, call_command
from django.db import connection

from core import sealing
from core.services import SYSTEM
from gaps import sinks
from gaps.models import GapSink
from tests.helpers import assert_error
from webhooks.models import WebhookEndpoint
from webhooks.services import webhook_create

pytestmark = pytest.mark.django_db

TOKEN = "ghp_tracker-token-kept-sealed-1234"


def raw(table: str, column: str) -> str:
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT {column} FROM {table}")  # noqa: S608 - fixed names
        [(value,)] = cursor.fetchall()
    return value


@pytest.fixture
def sink(workspace):
    sinks.sink_set(workspace=workspace, actor=SYSTEM, kind="github", base_url="https://api.github.com",
                   project="acme/agents", token=TOKEN, enabled=True)
    return GapSink.objects.get(workspace=workspace)


@pytest.fixture
def endpoint(workspace):
    return webhook_create(workspace=workspace, actor=SYSTEM, url="https://hooks.example.com/mnemo", events=["*"])


def test_the_row_holds_the_sealed_value_and_the_application_the_plain_one(sink, endpoint):
    stored_token, stored_secret = raw("gaps_gapsink", "token"), raw("webhooks_webhookendpoint", "secret")
    assert stored_token.startswith("fernet:") and TOKEN not in stored_token
    assert stored_secret.startswith("fernet:") and endpoint.secret not in stored_secret
    assert GapSink.objects.get().token == TOKEN
    assert WebhookEndpoint.objects.get().secret == endpoint.secret and len(endpoint.secret) >= 32
    # Sealing is randomised: the same value sealed twice differs, so equal rows do not show.
    assert sealing.seal(TOKEN) != sealing.seal(TOKEN)


def test_keys_rotate_and_reseal_moves_every_row_to_the_first_key(sink, endpoint, settings):
    old, new = Fernet.generate_key().decode(), Fernet.generate_key().decode()
    settings.MNEMO_SEAL_KEYS = [old]
    call_command("reseal", stdout=io.StringIO())  # derived key -> old
    assert GapSink.objects.get().token == TOKEN
    settings.MNEMO_SEAL_KEYS = [new, old]  # rotation: the new key first, the old still opens
    assert GapSink.objects.get().token == TOKEN and WebhookEndpoint.objects.get().secret == endpoint.secret
    call_command("reseal", stdout=io.StringIO())
    settings.MNEMO_SEAL_KEYS = [new]  # the old key retired: everything still opens
    assert GapSink.objects.get().token == TOKEN and WebhookEndpoint.objects.get().secret == endpoint.secret
    settings.SECRET_KEY = "another-secret-key-" + "x" * 40  # and no longer needs the derived one
    assert GapSink.objects.get().token == TOKEN
    assert Fernet(new.encode()).decrypt(raw("gaps_gapsink", "token")[len("fernet:"):].encode()).decode() == TOKEN


def test_a_value_no_key_opens_is_a_clear_error_not_an_empty_credential(sink, settings, admin_api):
    settings.SECRET_KEY = "another-secret-key-" + "x" * 40  # the key it was sealed with is gone
    with pytest.raises(sealing.UnsealError, match="MNEMO_SEAL_KEYS"):
        GapSink.objects.get()
    response = admin_api.get("/gaps/sink")
    assert_error(response, 503)
    assert response.json()["error"]["code"] == "sealing_key_changed"
    with pytest.raises(CommandError, match="nothing of this table changed"):
        call_command("reseal", stdout=io.StringIO())


def test_rows_written_before_sealing_are_read_and_sealed_by_reseal(sink):
    with connection.cursor() as cursor:
        cursor.execute("UPDATE gaps_gapsink SET token = %s", [TOKEN])  # as the column held it before
    assert GapSink.objects.get().token == TOKEN
    call_command("reseal", stdout=io.StringIO())
    assert raw("gaps_gapsink", "token").startswith("fernet:") and GapSink.objects.get().token == TOKEN


def test_bad_keys_are_refused_at_use(settings):
    from django.core.exceptions import ImproperlyConfigured

    settings.MNEMO_SEAL_KEYS = ["not-a-fernet-key"]
    with pytest.raises(ImproperlyConfigured, match="MNEMO_SEAL_KEYS"):
        sealing.seal("x")
