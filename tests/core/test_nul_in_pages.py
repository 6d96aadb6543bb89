"""Issue 16: a NUL character (which PostgreSQL refuses in text) in a dashboard page's query
string or form is a 4xx page, never a 500."""

from __future__ import annotations

import pytest

from core.admin import ApiKeyCreateForm
from memory.models import TrustedState

NUL = "\x00"
# Every text filter the pages read from their query strings.
PAGES = [
    ("/w/acme/", {"q": NUL}),
    ("/w/acme/conversations/", {"status": NUL, "channel": NUL}),
    ("/w/acme/entities/", {"q": f"a{NUL}b", "kind": NUL}),
    ("/w/acme/memories/", {"q": f"a{NUL}b", "type": NUL, "status": NUL}),
    ("/w/acme/memories/trusted/", {"key": f"k{NUL}"}),
    ("/w/acme/inspector/", {"q": f"what{NUL}", "budget": NUL}),
    ("/w/acme/review/", {"type": NUL, "rule": f"r{NUL}"}),
    ("/w/acme/review/stats/", {"days": NUL}),
    ("/login/", {"next": f"/w/{NUL}"}),
    ("/admin/", {"q": NUL}),
]


@pytest.mark.parametrize("path, query", PAGES, ids=[path for path, _ in PAGES])
def test_a_nul_in_a_pages_query_is_a_400(client, owner, path, query):
    owner.is_staff = owner.is_superuser = True
    owner.save()
    client.force_login(owner)

    response = client.get(path, query)

    assert response.status_code == 400


def test_the_400_page_says_what_was_wrong(client, owner):
    client.force_login(owner)

    response = client.get("/w/acme/memories/", {"q": NUL})

    assert response.status_code == 400
    assert b"cannot store" in response.content


def test_a_nul_in_a_form_field_is_a_400_and_stores_nothing(client, owner, workspace):
    # This view reads request.POST itself, not through a Django form.
    client.force_login(owner)

    response = client.post("/w/acme/memories/trusted/set/", {"key": f"k{NUL}", "value": "v"})

    assert response.status_code == 400
    assert not TrustedState.objects.filter(workspace=workspace).exists()


def test_plain_filters_still_answer(client, owner):
    client.force_login(owner)

    assert client.get("/w/acme/memories/", {"q": "plain words", "status": "active"}).status_code == 200


def test_djangos_forms_refuse_a_nul_in_a_text_field_themselves(workspace):
    form = ApiKeyCreateForm(data={"workspace": workspace.pk, "name": f"ci{NUL}bot", "scopes": ["read"]})

    assert not form.is_valid()
    assert "Null characters are not allowed." in form.errors["name"]
