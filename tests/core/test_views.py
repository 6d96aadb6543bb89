"""The dashboard shell and the admin: members see their workspace, outsiders do not."""

from __future__ import annotations

import re

import pytest

from core import services
from core.models import ApiKey

pytestmark = pytest.mark.django_db


def test_the_login_page_renders(client):
    response = client.get("/login/")
    assert response.status_code == 200
    assert b'name="username"' in response.content and b"htmx-2.0.11.min.js" in response.content


def test_anonymous_visitors_are_sent_to_log_in(client, workspace):
    for path in ["/", "/w/acme/", "/w/acme/review/"]:
        response = client.get(path)
        assert response.status_code == 302 and response["Location"].startswith("/login/")


def test_logging_in_lands_on_the_users_workspace(client, owner):
    response = client.post("/login/", {"username": "olivia", "password": "pw-olivia"}, follow=True)
    assert response.redirect_chain[-1][0] == "/w/acme/"
    assert b"Acme" in response.content


def test_a_wrong_password_is_refused(client, owner):
    response = client.post("/login/", {"username": "olivia", "password": "nope"})
    assert response.status_code == 200
    assert b"did not match" in response.content


def test_logging_out_ends_the_session(client, owner):
    client.force_login(owner)
    response = client.post("/logout/")
    assert response.status_code == 302
    assert client.get("/w/acme/").status_code == 302


def test_the_home_page_shows_the_workspace_counts(client, owner, teammate, make_key, workspace):
    make_key(workspace)
    client.force_login(teammate)
    response = client.get("/w/acme/")
    assert response.status_code == 200
    html = response.content.decode()
    counts = dict((label, int(value)) for value, label in re.findall(
        r'<span class="value">(\d+)</span><span class="label">([^<]+)</span>', html))
    assert counts == {"Members": 2, "Active API keys": 1, "Interactions": 0, "Conversations": 0, "Entities": 0,
                      "Link suggestions": 0, "Memory candidates": 0, "Pending review": 0, "Open capability gaps": 0,
                      "TODOs from gaps": 0}
    assert "api_key.create" in html  # recent activity


def test_an_outsider_gets_404_for_another_workspace(client, owner, outsider):
    client.force_login(outsider)
    response = client.get("/w/acme/")
    assert response.status_code == 404
    assert b"Acme" not in response.content
    assert client.get("/w/globex/").status_code == 200


def test_the_switcher_lists_only_the_users_memberships(client, owner, outsider, other_workspace):
    third = services.workspace_create(name="Initech", slug="initech")
    services.membership_set(workspace=third, user=owner, role="viewer")
    client.force_login(owner)
    html = client.get("/w/acme/").content.decode()
    assert 'href="/w/initech/"' in html and 'href="/w/acme/"' in html
    assert "/w/globex/" not in html
    # switching is following the link; the last workspace visited is where / lands next
    assert client.get("/w/initech/").status_code == 200
    assert client.get("/")["Location"] == "/w/initech/"


def test_the_last_workspace_is_written_to_the_session_only_when_it_changes(client, owner):
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    third = services.workspace_create(name="Initech", slug="initech")
    services.membership_set(workspace=third, user=owner, role="viewer")
    client.force_login(owner)

    def session_writes(path: str) -> int:
        with CaptureQueriesContext(connection) as queries:
            assert client.get(path).status_code == 200
        return sum(1 for q in queries.captured_queries if q["sql"].startswith(("UPDATE \"django_session\"",
                                                                              "INSERT INTO \"django_session\"")))

    assert session_writes("/w/acme/") == 1
    assert session_writes("/w/acme/") == 0  # the same workspace again: nothing to write
    assert session_writes("/w/initech/") == 1
    assert client.get("/")["Location"] == "/w/initech/"


def test_a_user_without_any_membership_is_told_so(client, db):
    from django.contrib.auth import get_user_model

    loner = get_user_model().objects.create_user(username="lone", password="x")
    client.force_login(loner)
    response = client.get("/")
    assert response.status_code == 403
    assert b"not a member of any workspace" in response.content


def test_the_navigation_links_every_section(client, owner):
    client.force_login(owner)
    html = client.get("/w/acme/").content.decode()
    for section in ["review", "memories", "entities", "conversations", "gaps", "inspector"]:
        assert f'href="/w/acme/{section}/"' in html


def test_the_vendored_assets_are_found():
    # Served by WhiteNoise after collectstatic: checked end to end in test_make_run.py.
    from django.contrib.staticfiles import finders

    assert finders.find("vendor/htmx-2.0.11.min.js")
    assert finders.find("css/mnemo.css")


# --- the admin ----------------------------------------------------------------------------

@pytest.fixture
def superuser(db):
    from django.contrib.auth import get_user_model

    return get_user_model().objects.create_superuser(username="root", password="x", email="")


@pytest.mark.parametrize("model", ["workspace", "membership", "apikey", "auditevent", "workerheartbeat"])
def test_every_model_is_in_the_admin(client, superuser, model, owner, make_key, workspace):
    make_key(workspace)
    client.force_login(superuser)
    assert client.get(f"/admin/core/{model}/").status_code == 200


def test_the_admin_is_closed_to_non_staff_members_and_outsiders(client, owner, outsider):
    for user in (owner, outsider):
        client.force_login(user)
        response = client.get("/admin/core/apikey/")
        assert response.status_code == 302 and "/admin/login/" in response["Location"]


def test_adding_a_key_in_the_admin_shows_it_once_and_stores_its_hash(client, superuser, workspace):
    client.force_login(superuser)
    response = client.post(
        "/admin/core/apikey/add/",
        {"workspace": workspace.pk, "name": "from admin", "scopes": ["read"], "expires_at_0": "", "expires_at_1": ""},
        follow=True,
    )
    assert response.status_code == 200
    shown = re.search(r"mn_[A-Za-z0-9]{8}_[A-Za-z0-9]{40}", response.content.decode())
    assert shown, "the new key is shown once"
    api_key = ApiKey.objects.get(name="from admin")
    assert api_key.prefix == shown.group(0).split("_")[1]
    assert shown.group(0) not in str(list(ApiKey.objects.values_list("hash", "name", "prefix")))
    assert client.get(f"/admin/core/apikey/{api_key.pk}/change/").status_code == 200
