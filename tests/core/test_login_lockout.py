"""Login throttling on the dashboard's /login/ and the admin's /admin/login/ (django-axes):
a lockout page after the failure limit, the right password refused during it, failed
logins in the audit log."""

from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model
from django.core.management import call_command
from django.test import Client

from core import services
from core.models import AuditEvent

pytestmark = pytest.mark.django_db

LOGIN_PAGES = ["/login/", "/admin/login/"]
PASSWORD = "a-long-right-password"


@pytest.fixture
def sam(workspace):
    # Staff, so that the admin's login page lets the right password in too.
    user = get_user_model().objects.create_user(username="sam", password=PASSWORD, is_staff=True)
    services.membership_set(workspace=workspace, user=user, role="admin")
    return user


def _login(client: Client, path: str, password: str):
    return client.post(path, {"username": "sam", "password": password})


def _logged_in(client: Client) -> bool:
    return "_auth_user_id" in client.session


@pytest.mark.parametrize("path", LOGIN_PAGES)
def test_below_the_limit_the_right_password_logs_in(settings, sam, path):
    settings.AXES_FAILURE_LIMIT = 3
    client = Client(REMOTE_ADDR="192.0.2.10")
    assert [_login(client, path, "wrong").status_code for _ in range(2)] == [200, 200]
    assert _login(client, path, PASSWORD).status_code == 302
    assert _logged_in(client)


@pytest.mark.parametrize("path", LOGIN_PAGES)
def test_after_the_limit_even_the_right_password_is_refused_with_a_lockout_page(settings, sam, path):
    settings.AXES_FAILURE_LIMIT = 3
    client = Client(REMOTE_ADDR="192.0.2.10")
    assert [_login(client, path, "wrong").status_code for _ in range(2)] == [200, 200]
    locking = _login(client, path, "wrong")
    refused = _login(client, path, PASSWORD)
    for response in (locking, refused):
        assert response.status_code == 429
        assert "Too many failed logins" in response.content.decode()
        assert response["Retry-After"] == str(15 * 60)
    assert not _logged_in(client)
    # The account is locked, not only the address (AXES_LOCKOUT_PARAMETERS ip_address,username).
    elsewhere = Client(REMOTE_ADDR="198.51.100.20")
    assert _login(elsewhere, path, PASSWORD).status_code == 429
    assert not _logged_in(elsewhere)


def test_the_defaults_stop_a_hundred_wrong_passwords_after_ten(sam):
    client = Client(REMOTE_ADDR="192.0.2.11")
    answers = [_login(client, "/login/", f"guess-{n}").status_code for n in range(100)]
    assert answers == [200] * 9 + [429] * 91
    assert _login(client, "/login/", PASSWORD).status_code == 429
    assert not _logged_in(client)
    # Only the ten passwords actually checked are in the audit log.
    assert AuditEvent.objects.filter(verb="auth.login_failed").count() == 10


def test_the_dashboard_and_the_admin_share_one_count(settings, sam):
    settings.AXES_FAILURE_LIMIT = 2
    client = Client(REMOTE_ADDR="192.0.2.12")
    assert _login(client, "/login/", "wrong").status_code == 200
    assert _login(client, "/admin/login/", "wrong").status_code == 429
    assert _login(client, "/login/", PASSWORD).status_code == 429


def test_an_administrator_lifts_a_lockout(settings, sam):
    settings.AXES_FAILURE_LIMIT = 1
    client = Client(REMOTE_ADDR="192.0.2.13")
    assert _login(client, "/login/", "wrong").status_code == 429
    call_command("axes_reset_username", "sam")
    assert _login(client, "/login/", PASSWORD).status_code == 302
    assert _logged_in(client)


@pytest.mark.parametrize("path", LOGIN_PAGES)
def test_failed_logins_are_audited_in_no_workspace(settings, sam, path):
    settings.AXES_FAILURE_LIMIT = 5
    _login(Client(REMOTE_ADDR="192.0.2.14"), path, "wrong")
    Client(REMOTE_ADDR="192.0.2.14").post(path, {"username": "nobody", "password": "x"})
    events = list(AuditEvent.objects.filter(verb="auth.login_failed").order_by("id"))
    assert [(e.workspace, e.actor_label, e.data) for e in events] == [
        (None, "address:192.0.2.14", {"username": "sam", "address": "192.0.2.14", "path": path}),
        (None, "address:192.0.2.14", {"username": "nobody", "address": "192.0.2.14", "path": path}),
    ]
    assert (events[0].target_type, events[0].target_id) == ("auth.user", str(sam.pk))
    assert (events[1].target_type, events[1].target_id) == ("", "")
    assert all("wrong" not in str(e.data) for e in events)


def test_the_admin_lists_audit_rows_that_belong_to_no_workspace(settings, sam):
    _login(Client(REMOTE_ADDR="192.0.2.15"), "/login/", "wrong")
    admin = get_user_model().objects.create_superuser(username="root", password=PASSWORD)
    client = Client()
    client.force_login(admin)
    response = client.get("/admin/core/auditevent/")
    assert response.status_code == 200
    assert "auth.login_failed" in response.content.decode()
    assert client.get("/admin/axes/accessattempt/").status_code == 200
