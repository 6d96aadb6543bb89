"""The API keys pages (admins only): the list, create with scope checkboxes and an agent
found by name → the key shown once on the answer and never again, revoke after a
confirmation page, bind and unbind an agent; refused secrets, CSRF, audit, outsiders 404."""

from __future__ import annotations

import logging
import re

import pytest
from django.test import Client

from core.models import ApiKey, AuditEvent
from core.services import api_key_create, api_key_verify
from entities.models import Entity

pytestmark = pytest.mark.django_db

KEY = re.compile(r"mn_[A-Za-z0-9]{8}_[A-Za-z0-9]{40}")


@pytest.fixture
def bot(workspace):
    return Entity.objects.create(workspace=workspace, kind="agent", name="triage-bot")


def test_creating_a_key_shows_it_once(client, owner, bot, caplog):
    client.force_login(owner)
    with caplog.at_level(logging.DEBUG):
        response = client.post("/w/acme/keys/create/", {"name": "ingest", "scopes": ["read", "write"],
                                                        "expires": "2999-01-01", "agent": str(bot.pk)})
    assert response.status_code == 201
    assert "no-store" in response["Cache-Control"]
    html = response.content.decode()
    plaintext = KEY.search(html).group(0)
    api_key = ApiKey.objects.get(name="ingest")
    assert api_key_verify(plaintext) == api_key
    assert api_key.scopes == ["read", "write"] and api_key.agent == bot and api_key.expires_at.year == 2999
    assert "triage-bot" in html and "only time" in html
    # Never again: not on the list, the key's page, in the session, the audit log or the logs.
    for page in ("/w/acme/keys/", f"/w/acme/keys/{api_key.pk}/", "/w/acme/audit/"):
        assert plaintext not in client.get(page).content.decode()
    assert plaintext not in str(dict(client.session))
    assert not any(plaintext in str(e.data) for e in AuditEvent.objects.all())
    assert plaintext not in caplog.text
    assert {e.verb for e in AuditEvent.objects.filter(target_type="core.apikey", target_id=str(api_key.pk))} == {"api_key.create", "api_key.bind"}


def test_the_list_shows_each_keys_facts(client, owner, workspace, bot):
    api_key, _ = api_key_create(workspace=workspace, name="reader", scopes="read")
    api_key.agent = bot
    api_key.save()
    api_key_create(workspace=workspace, name="old", scopes="admin")
    ApiKey.objects.filter(name="old").update(revoked_at="2026-01-02T00:00Z")
    client.force_login(owner)
    html = client.get("/w/acme/keys/").content.decode()
    assert f"mn_{api_key.prefix}…" in html and "triage-bot" in html and "never" in html
    assert "revoked 2026-01-02" in html and 'name="scopes" value="admin"' in html


@pytest.mark.parametrize("form, problem", [
    ({"name": "x", "scopes": []}, "at least one scope"),
    ({"name": "x", "scopes": ["root"]}, "Unknown scope"),
    ({"name": "AKIAIOSFODNN7EXAMPLE", "scopes": ["read"]}, "name"),
    ({"name": "x", "scopes": ["read"], "expires": "2001-01-01"}, "future"),
    ({"name": "x", "scopes": ["read"], "expires": "someday"}, "must be a date"),
    ({"name": "x", "scopes": ["read"], "agent": "999999"}, "No such entity"),
])
def test_a_refused_key_is_not_created_and_says_why(client, owner, form, problem):
    client.force_login(owner)
    response = client.post("/w/acme/keys/create/", form, follow=True)
    assert response.status_code == 200
    assert problem in response.content.decode()
    assert not ApiKey.objects.exists()


def test_an_agent_of_another_workspace_cannot_be_bound(client, owner, other_workspace):
    stranger = Entity.objects.create(workspace=other_workspace, kind="agent", name="their-bot")
    client.force_login(owner)
    client.post("/w/acme/keys/create/", {"name": "x", "scopes": ["read"], "agent": str(stranger.pk)})
    assert not ApiKey.objects.exists()


def test_revoking_asks_first_then_revokes(client, owner, workspace):
    api_key, plaintext = api_key_create(workspace=workspace, name="ingest", scopes="write")
    client.force_login(owner)
    confirm = client.get(f"/w/acme/keys/{api_key.pk}/revoke/")
    assert "cannot be undone" in confirm.content.decode()
    assert ApiKey.objects.get(pk=api_key.pk).revoked_at is None
    response = client.post(f"/w/acme/keys/{api_key.pk}/revoke/", follow=True)
    assert "Revoked ingest" in response.content.decode()
    assert ApiKey.objects.get(pk=api_key.pk).revoked_at is not None
    assert api_key_verify(plaintext) is None
    assert AuditEvent.objects.filter(verb="api_key.revoke", target_id=str(api_key.pk)).count() == 1


def test_binding_and_unbinding_an_agent(client, owner, workspace, bot):
    api_key, _ = api_key_create(workspace=workspace, name="ingest", scopes="write")
    client.force_login(owner)
    client.post(f"/w/acme/keys/{api_key.pk}/agent/", {"agent": str(bot.pk)})
    assert ApiKey.objects.get(pk=api_key.pk).agent == bot
    page = client.get(f"/w/acme/keys/{api_key.pk}/").content.decode()
    assert f'value="{bot.pk}" checked' in page  # saving unchanged keeps the agent
    client.post(f"/w/acme/keys/{api_key.pk}/agent/", {})  # no choice at all: nothing changes
    assert ApiKey.objects.get(pk=api_key.pk).agent == bot
    client.post(f"/w/acme/keys/{api_key.pk}/agent/", {"agent": "abc"})
    assert ApiKey.objects.get(pk=api_key.pk).agent == bot
    client.post(f"/w/acme/keys/{api_key.pk}/agent/", {"agent": ""})
    assert ApiKey.objects.get(pk=api_key.pk).agent is None
    assert AuditEvent.objects.filter(verb="api_key.bind", target_id=str(api_key.pk)).count() == 2


def test_the_agent_picker_finds_agents_by_name(client, owner, workspace, bot):
    Entity.objects.create(workspace=workspace, kind="agent", name="summary-bot")
    Entity.objects.create(workspace=workspace, kind="project", name="triage project")
    client.force_login(owner)
    every = client.get("/w/acme/entities/pick/", headers={"HX-Request": "true"}).content.decode()
    assert "triage-bot" in every and "summary-bot" in every and "triage project" not in every
    found = client.get("/w/acme/entities/pick/", {"agent_q": "triage"}).content.decode()
    assert "triage-bot" in found and "summary-bot" not in found
    kept = client.get("/w/acme/entities/pick/", {"agent_q": "summary", "current": str(bot.pk)}).content.decode()
    assert f'value="{bot.pk}" checked' in kept
    assert "No agent named like" in client.get("/w/acme/entities/pick/", {"agent_q": "zzzz", "current": "x"}).content.decode()


def test_reviewers_and_viewers_are_refused(client, teammate, viewer, workspace):
    api_key, _ = api_key_create(workspace=workspace, name="ingest", scopes="write")
    for user in (teammate, viewer):
        client.force_login(user)
        assert client.get("/w/acme/keys/").status_code == 403
        assert client.get(f"/w/acme/keys/{api_key.pk}/").status_code == 403
        assert client.post("/w/acme/keys/create/", {"name": "x", "scopes": ["admin"]}).status_code == 403
        assert client.post(f"/w/acme/keys/{api_key.pk}/revoke/").status_code == 403
    assert ApiKey.objects.get(pk=api_key.pk).revoked_at is None and ApiKey.objects.count() == 1


def test_outsiders_get_404(client, outsider, workspace, other_workspace):
    api_key, _ = api_key_create(workspace=workspace, name="ingest", scopes="write")
    theirs, _ = api_key_create(workspace=other_workspace, name="theirs", scopes="write")
    client.force_login(outsider)
    assert client.get("/w/acme/keys/").status_code == 404
    assert client.post(f"/w/acme/keys/{api_key.pk}/revoke/").status_code == 404
    # Their own workspace's pages do not reach another workspace's key either.
    assert client.get(f"/w/globex/keys/{api_key.pk}/").status_code == 404
    assert client.post(f"/w/globex/keys/{api_key.pk}/revoke/").status_code == 404
    assert client.get(f"/w/globex/keys/{theirs.pk}/").status_code == 200
    assert ApiKey.objects.get(pk=api_key.pk).revoked_at is None


def test_bad_ids_and_pages_are_not_500s(client, owner):
    client.force_login(owner)
    assert client.get("/w/acme/keys/", {"page": "x"}).status_code == 200
    assert client.get("/w/acme/keys/99999999999999999999999/").status_code == 404
    assert client.get("/w/acme/keys/99999/revoke/").status_code == 404


def test_forms_need_the_csrf_token(owner):
    client = Client(enforce_csrf_checks=True)
    client.force_login(owner)
    assert client.post("/w/acme/keys/create/", {"name": "x", "scopes": ["read"]}).status_code == 403
    assert not ApiKey.objects.exists()
