"""The Django admin (issue 16): model names read as English plurals, and a new API key is
made by ticking its scopes and shown in full, once, working against the API."""

from __future__ import annotations

import re

import pytest
from django.contrib import admin
from django.contrib.auth import get_user_model
from django.test import Client

from core.models import ApiKey
from tests.helpers import ApiClient

KEY = re.compile(r"mn_[A-Za-z0-9]{8}_[A-Za-z0-9]{40}")
VOWELS = "aeiou"


def _wrong_plural(plural: str) -> str | None:
    """Why an admin plural is obviously wrong, or None. Django appends "s" to the name:
    "memorys", "indexs", "evidences"."""
    last = plural.split()[-1].lower()
    if last.endswith("ys") and len(last) > 2 and last[-3] not in VOWELS:
        return "a consonant + y takes -ies"
    if re.search(r"(x|s|sh|ch|z)s$", last):
        return "-x, -s, -sh, -ch, -z take -es"
    if last in {"evidences", "informations", "datas", "feedbacks", "metadatas"}:
        return "an uncountable noun has no -s plural"
    return None


def _admin_models() -> list:
    """Every model the admin names: the registered ones and their inlines."""
    models = []
    for model, model_admin in admin.site._registry.items():
        models.append(model)
        models.extend(inline.model for inline in model_admin.inlines)
    return models


def test_the_plural_check_catches_what_django_gets_wrong():
    assert _wrong_plural("memorys") and _wrong_plural("trust policys") and _wrong_plural("interaction indexs")
    assert _wrong_plural("entity evidences")
    assert not any(_wrong_plural(p) for p in ["memories", "keys", "days", "entities", "indexes", "memory evidence"])


def test_every_model_in_the_admin_has_a_proper_plural():
    wrong = {
        model._meta.label: (model._meta.verbose_name_plural, reason)
        for model in _admin_models()
        if (reason := _wrong_plural(str(model._meta.verbose_name_plural)))
    }
    assert wrong == {}


@pytest.fixture
def superuser(db):
    return get_user_model().objects.create_superuser(username="root", password="pw-root", email="root@example.com")


@pytest.fixture
def admin_client(superuser):
    client = Client()
    client.force_login(superuser)
    return client


def test_the_admin_index_shows_the_right_plurals(admin_client):
    page = admin_client.get("/admin/").content.decode()
    for name in ["Memories", "Trust policies", "Conversation summaries", "Interaction indexes", "API keys"]:
        assert f">{name}<" in page, name
    assert "Memorys" not in page and "policys" not in page and "summarys" not in page


def _add_key(client, workspace, **overrides):
    data = {"workspace": workspace.pk, "name": "deploy bot", "scopes": ["read", "write"],
            "expires_at_0": "", "expires_at_1": ""}
    data.update(overrides)
    return client.post("/admin/core/apikey/add/", data, follow=True)


def test_the_new_key_form_offers_the_scopes_as_checkboxes(admin_client, workspace):
    page = admin_client.get("/admin/core/apikey/add/").content.decode()
    for scope in ["read", "write", "admin"]:
        assert re.search(rf'<input type="checkbox" name="scopes" value="{scope}"', page), scope
    assert "<textarea" not in page


def test_a_key_made_in_the_admin_is_shown_once_in_full_and_works(admin_client, workspace):
    response = _add_key(admin_client, workspace)
    assert response.status_code == 200
    page = response.content.decode()
    shown = KEY.findall(page)
    assert len(shown) == 1, page
    assert "mn__" not in page
    api_key = ApiKey.objects.get()
    assert api_key.scopes == ["read", "write"]
    assert shown[0].startswith(f"mn_{api_key.prefix}_")
    assert f"deploy bot (mn_{api_key.prefix}_…)" in page  # the "was added" message names the real key

    agent = ApiClient(shown[0])
    assert agent.get("/status").status_code == 200
    assert agent.post("/entities", {"name": "Ada", "kind": "person"}).status_code == 201

    again = admin_client.get(f"/admin/core/apikey/{api_key.pk}/change/").content.decode()
    assert not KEY.search(again)
    assert "read, write" in again


@pytest.mark.parametrize("overrides, error", [
    ({"scopes": []}, "This field is required."),
    ({"scopes": ["read", "root"]}, "Select a valid choice. root is not one of the available choices."),
    ({"expires_at_0": "2001-01-01", "expires_at_1": "00:00:00"}, "The expiry must lie in the future."),
])
def test_it_refuses_a_key_it_cannot_make_and_stores_nothing(admin_client, workspace, overrides, error):
    response = _add_key(admin_client, workspace, **overrides)
    assert response.status_code == 200
    page = response.content.decode()
    assert error in page
    assert not KEY.search(page)
    assert not ApiKey.objects.exists()


def test_binding_a_key_to_an_agent_in_the_admin_is_checked_and_audited(admin_client, workspace, other_workspace,
                                                                       make_key):
    from core.models import AuditEvent
    from entities.models import Entity

    api_key, _ = make_key(workspace, name="triage")
    bot = Entity.objects.create(workspace=workspace, kind="agent", name="triage-bot")
    theirs = Entity.objects.create(workspace=other_workspace, kind="agent", name="their-bot")
    url = f"/admin/core/apikey/{api_key.pk}/change/"
    form = {"name": "triage", "expires_at_0": "", "expires_at_1": ""}
    refused = admin_client.post(url, {**form, "agent": theirs.pk})
    assert refused.status_code == 200 and "entity of the key" in refused.content.decode()
    assert ApiKey.objects.get(pk=api_key.pk).agent_id is None
    assert admin_client.post(url, {**form, "agent": bot.pk}).status_code == 302
    assert ApiKey.objects.get(pk=api_key.pk).agent_id == bot.pk
    event = AuditEvent.objects.get(verb="api_key.bind")
    assert event.data == {"agent": bot.pk, "agent_name": "triage-bot"} and event.actor_label.startswith("user:")
