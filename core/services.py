"""Writes for workspaces, memberships, API keys and the audit log.

Every write use case is atomic and records an AuditEvent in the same transaction."""

from __future__ import annotations

import hashlib
import hmac
import secrets
import string
from dataclasses import dataclass
from datetime import datetime

from django.contrib.auth import get_user_model
from django.core.exceptions import ValidationError
from django.db import transaction
from django.utils import timezone
from django.utils.text import slugify

from core.errors import NotFound
from core.logging import request_id_var
from core.models import ApiKey, AuditEvent, Membership, Role, Scope, WorkerHeartbeat, Workspace
from core.safe_text import refuse_secrets

User = get_user_model()

KEY_PREFIX_LEN = 8
KEY_SECRET_LEN = 40
# No underscore in either part: it separates them in mn_<prefix>_<secret>.
_ALPHABET = string.ascii_letters + string.digits


@dataclass(frozen=True)
class Actor:
    """Who performs a write: a person, an agent's API key, or the system itself."""

    user: object | None = None
    api_key: ApiKey | None = None
    label: str = "system"

    @classmethod
    def for_user(cls, user) -> Actor:
        return cls(user=user, label=f"user:{user.get_username()}")

    @classmethod
    def for_api_key(cls, api_key: ApiKey) -> Actor:
        agent = f"agent:{api_key.agent.name} via " if api_key.agent_id and api_key.agent else ""
        return cls(api_key=api_key, label=f"{agent}key:{api_key.name} (mn_{api_key.prefix})")


SYSTEM = Actor()


def audit_record(
    *, workspace: Workspace | None, actor: Actor, verb: str, target=None, data: dict | None = None
) -> AuditEvent:
    """Append one audit row. `data` must never hold secrets or erased content."""
    return AuditEvent.objects.create(
        workspace=workspace,
        actor_user=actor.user,
        actor_api_key=actor.api_key,
        actor_label=actor.label[:200],
        verb=verb,
        target_type=target._meta.label_lower if target is not None else "",
        target_id=str(target.pk) if target is not None else "",
        data=data or {},
        request_id=request_id_var.get() if request_id_var.get() != "-" else "",
    )


def audit_record_many(*, workspace: Workspace, actor: Actor, verb: str, rows: list[tuple[object, dict]]) -> None:
    """One audit row per (target, data), written in one statement (bulk decisions)."""
    request_id = request_id_var.get() if request_id_var.get() != "-" else ""
    AuditEvent.objects.bulk_create([
        AuditEvent(workspace=workspace, actor_user=actor.user, actor_api_key=actor.api_key, actor_label=actor.label[:200],
                   verb=verb, target_type=target._meta.label_lower, target_id=str(target.pk), data=data,
                   request_id=request_id)
        for target, data in rows
    ])


def _unique_slug(name: str) -> str:
    base = slugify(name)[:70] or "workspace"
    slug, n = base, 2
    while Workspace.objects.filter(slug=slug).exists():
        slug = f"{base}-{n}"
        n += 1
    return slug


@transaction.atomic
def workspace_create(*, name: str, actor: Actor = SYSTEM, slug: str | None = None) -> Workspace:
    name = name.strip()
    if not name:
        raise ValidationError("A workspace needs a name.")
    if slug is not None:
        slug = slugify(slug)
        if not slug:
            raise ValidationError("The slug must contain letters or digits.")
        if Workspace.objects.filter(slug=slug).exists():
            raise ValidationError(f"A workspace with slug {slug!r} exists already.")
    workspace = Workspace.objects.create(name=name, slug=slug or _unique_slug(name))
    audit_record(workspace=workspace, actor=actor, verb="workspace.create", target=workspace, data={"name": name})
    return workspace


@transaction.atomic
def membership_set(*, workspace: Workspace, user, role: str, actor: Actor = SYSTEM) -> Membership:
    if role not in Role.values:
        raise ValidationError(f"Unknown role {role!r}; expected one of {', '.join(Role.values)}.")
    membership, created = Membership.objects.update_or_create(
        workspace=workspace, user=user, defaults={"role": role}
    )
    audit_record(
        workspace=workspace,
        actor=actor,
        verb="membership.add" if created else "membership.change",
        target=membership,
        data={"user": user.get_username(), "role": role},
    )
    return membership


def _hash_key(key: str) -> str:
    return hashlib.sha256(key.encode()).hexdigest()


def parse_scopes(raw: str | list[str]) -> list[str]:
    items = raw.split(",") if isinstance(raw, str) else list(raw)
    scopes = sorted({item.strip().lower() for item in items if item.strip()})
    unknown = [s for s in scopes if s not in Scope.values]
    if unknown:
        raise ValidationError(f"Unknown scope(s) {', '.join(unknown)}; expected read, write or admin.")
    if not scopes:
        raise ValidationError("An API key needs at least one scope.")
    return scopes


@transaction.atomic
def api_key_create(
    *,
    workspace: Workspace,
    name: str,
    scopes: str | list[str],
    actor: Actor = SYSTEM,
    expires_at: datetime | None = None,
    agent_id: int | None = None,
) -> tuple[ApiKey, str]:
    """Create a key, bound to the agent entity `agent_id` when given (NotFound for one of
    another workspace, and no key is left behind); returns the row and the plaintext key,
    which is never stored."""
    with transaction.atomic():
        api_key, plaintext = _api_key_new(workspace=workspace, name=name, scopes=scopes, actor=actor,
                                          expires_at=expires_at)
        if agent_id is not None:
            api_key_bind(api_key=api_key, agent_id=agent_id, actor=actor)
    return api_key, plaintext


def _api_key_new(*, workspace: Workspace, name: str, scopes: str | list[str], actor: Actor,
                 expires_at: datetime | None) -> tuple[ApiKey, str]:
    refuse_secrets(name=name)
    scopes = parse_scopes(scopes)
    name = name.strip() or "API key"
    if expires_at is not None and expires_at <= timezone.now():
        raise ValidationError("The expiry must lie in the future.")
    while True:
        prefix = "".join(secrets.choice(_ALPHABET) for _ in range(KEY_PREFIX_LEN))
        if not ApiKey.objects.filter(prefix=prefix).exists():
            break
    secret = "".join(secrets.choice(_ALPHABET) for _ in range(KEY_SECRET_LEN))
    plaintext = f"mn_{prefix}_{secret}"
    api_key = ApiKey.objects.create(
        workspace=workspace,
        name=name[:200],
        prefix=prefix,
        hash=_hash_key(plaintext),
        scopes=scopes,
        created_by=actor.user,
        expires_at=expires_at,
    )
    audit_record(
        workspace=workspace,
        actor=actor,
        verb="api_key.create",
        target=api_key,
        data={"name": api_key.name, "prefix": prefix, "scopes": scopes},
    )
    return api_key, plaintext


@transaction.atomic
def api_key_bind(*, api_key: ApiKey, agent_id: int | None, actor: Actor = SYSTEM) -> ApiKey:
    """Bind the key to an agent entity of its workspace (None unbinds): what the key writes
    from now on, and what it wrote before, is shown as that agent's. NotFound for an entity
    of another workspace."""
    agent = None
    if agent_id is not None:
        # The entity model through the relation: core stands below the entities layer.
        agent = ApiKey.agent.field.related_model.objects.filter(workspace_id=api_key.workspace_id, pk=agent_id).first()
        if agent is None:
            raise NotFound("No such entity in this workspace.")
    api_key.agent = agent
    api_key.save(update_fields=["agent"])
    audit_record(workspace=api_key.workspace, actor=actor, verb="api_key.bind", target=api_key,
                 data={"agent": agent_id, "agent_name": agent.name if agent else ""})
    return api_key


def api_key_revoke(*, api_key: ApiKey, actor: Actor = SYSTEM) -> ApiKey:
    if api_key.revoked_at is None:
        api_key.revoked_at = timezone.now()
        api_key.save(update_fields=["revoked_at"])
        audit_record(workspace=api_key.workspace, actor=actor, verb="api_key.revoke", target=api_key)
    return api_key


def _key_prefix(presented: str) -> str:
    """The lookup prefix of a presented key when it has a key's shape
    (`mn_<prefix>_<secret>`), else ""."""
    parts = presented.split("_")
    if (len(parts) == 3 and parts[0] == "mn" and len(parts[1]) == KEY_PREFIX_LEN and parts[2]
            and all(c in _ALPHABET for c in parts[1])):
        return parts[1]
    return ""


def api_key_verify(plaintext: str) -> ApiKey | None:
    """The active key matching `plaintext`, or None (unknown, malformed, revoked, expired).

    Marks the key used, at most once a minute so that reads do not all become writes."""
    from django.conf import settings

    prefix = _key_prefix(plaintext)
    if not prefix:
        return None
    api_key = ApiKey.objects.select_related("workspace", "agent").filter(prefix=prefix).first()
    if api_key is None or not hmac.compare_digest(api_key.hash, _hash_key(plaintext)):
        return None
    now = timezone.now()
    if not api_key.is_active(now):
        return None
    stale = api_key.last_used_at is None or (now - api_key.last_used_at).total_seconds() >= settings.MNEMO_API_KEY_TOUCH_SECONDS
    if stale:
        ApiKey.objects.filter(pk=api_key.pk).update(last_used_at=now)
        api_key.last_used_at = now
    return api_key


def api_key_rejection_record(*, presented: str, client_address: str) -> AuditEvent:
    """The audit row for an API key that api_key_verify refused: in the key's workspace when
    its prefix names one (its admins see who tries it), in none otherwise. Holds the reason
    and the prefix, never the secret. The failed-authentication rate limit bounds how many
    rows one address can add (core/ratelimit.py)."""
    prefix = _key_prefix(presented)
    api_key = ApiKey.objects.select_related("workspace", "agent").filter(prefix=prefix).first() if prefix else None
    if api_key is None:
        reason = "unknown_key" if prefix else "malformed"
    elif not hmac.compare_digest(api_key.hash, _hash_key(presented)):
        reason = "wrong_secret"
    elif api_key.revoked_at is not None:
        reason = "revoked"
    else:
        reason = "expired"
    return audit_record(
        workspace=api_key.workspace if api_key else None,
        actor=Actor(label=f"address:{client_address}"),
        verb="api_key.rejected",
        target=api_key,
        data={"reason": reason, "prefix": prefix, "address": client_address},
    )


def login_failure_record(*, username: str, client_address: str, path: str) -> AuditEvent:
    """The audit row for a refused dashboard or admin login (in no workspace: a login is not
    for one). django-axes' lockout bounds how many rows one address or account can add."""
    user = User.objects.filter(**{User.USERNAME_FIELD: username}).first() if username else None
    return audit_record(
        workspace=None,
        actor=Actor(label=f"address:{client_address}"),
        verb="auth.login_failed",
        target=user,
        data={"username": username[:150], "address": client_address, "path": path[:200]},
    )


@dataclass(frozen=True)
class BootstrapResult:
    workspace: Workspace
    username: str
    password: str
    api_key: str


@transaction.atomic
def bootstrap_first_run(*, username: str = "admin", workspace_name: str = "Default") -> BootstrapResult | None:
    """On a database with no workspace: one workspace, an admin user who owns it and an
    API key. Returns None when a workspace exists already (bootstrap is idempotent)."""
    # Serialise concurrent first runs: the second waits here, then sees the workspace.
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_advisory_xact_lock(hashtext('mnemo.bootstrap'))")
    if Workspace.objects.exists():
        return None
    workspace = workspace_create(name=workspace_name, slug=slugify(workspace_name))
    password = secrets.token_urlsafe(16)
    user = User.objects.filter(username=username).first()
    if user is None:
        user = User.objects.create_superuser(username=username, email="", password=password)
    else:
        user.set_password(password)
        user.is_staff = user.is_superuser = True
        user.save()
    actor = Actor.for_user(user)
    membership_set(workspace=workspace, user=user, role=Role.ADMIN, actor=actor)
    _, key = api_key_create(workspace=workspace, name="bootstrap", scopes=["read", "write"], actor=actor)
    return BootstrapResult(workspace=workspace, username=username, password=password, api_key=key)


def worker_heartbeat_record(*, hostname: str) -> WorkerHeartbeat:
    heartbeat, _ = WorkerHeartbeat.objects.update_or_create(
        name="worker", defaults={"seen_at": timezone.now(), "hostname": hostname[:200]}
    )
    return heartbeat
