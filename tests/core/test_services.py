"""Workspaces, memberships, API keys, bootstrap and the management commands."""

from __future__ import annotations

import re
from datetime import timedelta
from io import StringIO

import pytest
from django.contrib.auth import get_user_model
from django.core.exceptions import ValidationError
from django.core.management import CommandError, call_command
from django.db import IntegrityError, transaction
from django.utils import timezone

from core import services
from core.models import ApiKey, AuditEvent, Membership, Workspace

pytestmark = pytest.mark.django_db

KEY_FORMAT = re.compile(r"^mn_[A-Za-z0-9]{8}_[A-Za-z0-9]{40}$")


def test_a_key_has_the_documented_format_and_only_its_hash_is_stored(workspace):
    api_key, key = services.api_key_create(workspace=workspace, name="agent", scopes="read,write")
    assert KEY_FORMAT.match(key)
    assert api_key.prefix == key.split("_")[1]
    assert api_key.hash != key and len(api_key.hash) == 64
    assert services.api_key_verify(key) == api_key


def test_two_keys_never_share_a_prefix(workspace):
    prefixes = {services.api_key_create(workspace=workspace, name=f"k{i}", scopes="read")[0].prefix for i in range(20)}
    assert len(prefixes) == 20


@pytest.mark.parametrize("scopes", ["", "read,root", [], ["READ ", "sudo"]])
def test_unknown_or_empty_scopes_are_refused(workspace, scopes):
    with pytest.raises(ValidationError):
        services.api_key_create(workspace=workspace, name="x", scopes=scopes)
    assert ApiKey.objects.count() == 0


def test_scopes_are_normalised(workspace):
    api_key, _ = services.api_key_create(workspace=workspace, name="x", scopes=" Write,read,write ")
    assert api_key.scopes == ["read", "write"]


def test_verify_refuses_revoked_expired_and_garbled_keys(workspace):
    api_key, key = services.api_key_create(
        workspace=workspace, name="x", scopes="read", expires_at=timezone.now() + timedelta(minutes=5)
    )
    assert services.api_key_verify(key) is not None
    for garbled in ["", "mn__", key + "x", key.replace("mn_", "mx_"), key.upper()]:
        assert services.api_key_verify(garbled) is None
    ApiKey.objects.filter(pk=api_key.pk).update(expires_at=timezone.now() - timedelta(seconds=1))
    assert services.api_key_verify(key) is None
    ApiKey.objects.filter(pk=api_key.pk).update(expires_at=None)
    services.api_key_revoke(api_key=ApiKey.objects.get(pk=api_key.pk))
    assert services.api_key_verify(key) is None


def test_every_write_leaves_an_audit_event(workspace):
    user = get_user_model().objects.create_user(username="ann")
    actor = services.Actor.for_user(user)
    services.membership_set(workspace=workspace, user=user, role="reviewer", actor=actor)
    services.membership_set(workspace=workspace, user=user, role="admin", actor=actor)
    api_key, _ = services.api_key_create(workspace=workspace, name="x", scopes="read", actor=actor)
    services.api_key_revoke(api_key=api_key, actor=actor)
    services.api_key_revoke(api_key=api_key, actor=actor)  # already revoked: no second event
    verbs = list(AuditEvent.objects.filter(workspace=workspace).order_by("at", "id").values_list("verb", flat=True))
    assert verbs == ["workspace.create", "membership.add", "membership.change", "api_key.create", "api_key.revoke"]
    assert set(AuditEvent.objects.exclude(verb="workspace.create").values_list("actor_label", flat=True)) == {"user:ann"}


def test_a_membership_role_is_checked_by_the_database(workspace):
    user = get_user_model().objects.create_user(username="bob")
    with pytest.raises(ValidationError):
        services.membership_set(workspace=workspace, user=user, role="owner")
    with pytest.raises(IntegrityError), transaction.atomic():
        Membership.objects.create(workspace=workspace, user=user, role="owner")


def test_roles_are_ordered(workspace, viewer, teammate, owner):
    def role(user):
        return Membership.objects.get(user=user, workspace=workspace)

    assert role(viewer).allows("viewer") and not role(viewer).allows("reviewer")
    assert role(teammate).allows("reviewer") and not role(teammate).allows("admin")
    assert role(owner).allows("admin")


def test_workspace_slugs_are_unique_and_derived_from_the_name(db):
    first = services.workspace_create(name="Research Team")
    second = services.workspace_create(name="Research Team")
    assert (first.slug, second.slug) == ("research-team", "research-team-2")
    with pytest.raises(ValidationError):
        services.workspace_create(name="Other", slug="research-team")
    with pytest.raises(ValidationError):
        services.workspace_create(name="   ")


def test_bootstrap_runs_once(db):
    first = services.bootstrap_first_run()
    assert first is not None
    assert KEY_FORMAT.match(first.api_key)
    user = get_user_model().objects.get(username="admin")
    assert user.is_superuser and user.check_password(first.password)
    assert Membership.objects.get(user=user, workspace=first.workspace).role == "admin"
    assert services.api_key_verify(first.api_key).workspace == first.workspace

    assert services.bootstrap_first_run() is None
    assert (Workspace.objects.count(), ApiKey.objects.count(), get_user_model().objects.count()) == (1, 1, 1)
    assert get_user_model().objects.get(username="admin").check_password(first.password)


def test_bootstrap_does_nothing_when_a_workspace_exists(workspace):
    assert services.bootstrap_first_run() is None
    assert not get_user_model().objects.filter(username="admin").exists()


# --- management commands ------------------------------------------------------------------

def run(*args) -> tuple[str, str]:
    out, err = StringIO(), StringIO()
    call_command(*args, stdout=out, stderr=err)
    return out.getvalue().strip(), err.getvalue().strip()


def test_create_workspace_prints_the_slug(db):
    out, err = run("create_workspace", "Bench Sample 26")
    assert out == "bench-sample-26"
    assert Workspace.objects.filter(slug=out).exists()


def test_create_api_key_prints_only_the_key(workspace):
    out, err = run("create_api_key", "--workspace", "acme", "--scopes", "read,write", "--name", "bench")
    assert KEY_FORMAT.match(out)
    api_key = services.api_key_verify(out)
    assert (api_key.name, api_key.scopes, api_key.workspace) == ("bench", ["read", "write"], workspace)
    assert "bench" in err


def test_create_api_key_can_expire(workspace):
    out, _ = run("create_api_key", "--workspace", "acme", "--expires-in-days", "2")
    expires = services.api_key_verify(out).expires_at
    assert timedelta(days=1, hours=23) < expires - timezone.now() <= timedelta(days=2)


@pytest.mark.parametrize("args, message", [
    (["--workspace", "nope"], "No workspace"),
    (["--workspace", "acme", "--scopes", "read,root"], "Unknown scope"),
    (["--workspace", "acme", "--expires-in-days", "0"], "positive"),
])
def test_create_api_key_explains_bad_input(workspace, args, message):
    with pytest.raises(CommandError, match=message):
        run("create_api_key", *args)
    assert ApiKey.objects.count() == 0


def test_the_bootstrap_command_is_idempotent(db):
    out, _ = run("bootstrap")
    assert "API key: mn_" in out and "Password: " in out
    out, _ = run("bootstrap")
    assert out.startswith("Already bootstrapped")
    assert ApiKey.objects.count() == 1
