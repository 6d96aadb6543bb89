"""Reads for workspaces, memberships, keys and the audit log."""

from __future__ import annotations

from datetime import datetime

from django.db.models import Q, QuerySet
from django.utils import timezone

from core.models import ApiKey, AuditEvent, ImportProgress, Membership, Workspace, WorkerHeartbeat


def user_memberships(*, user) -> QuerySet[Membership]:
    if not user.is_authenticated:
        return Membership.objects.none()
    return Membership.objects.filter(user=user).select_related("workspace").order_by("workspace__name")


def membership_get_by_slug(*, user, slug: str) -> Membership | None:
    return user_memberships(user=user).filter(workspace__slug=slug).first()


def workspace_get_by_slug(*, slug: str) -> Workspace | None:
    return Workspace.objects.filter(slug=slug).first()


def workspaces_importing() -> QuerySet:
    """Ids of the workspaces an archive import is loading (core.models.ImportProgress): not
    usable until it ends, and the background jobs leave them alone meanwhile."""
    return ImportProgress.objects.values("workspace_id")


def workspace_importing(*, workspace_id: int) -> bool:
    return ImportProgress.objects.filter(workspace_id=workspace_id).exists()


def api_key_list(*, workspace: Workspace) -> QuerySet[ApiKey]:
    return ApiKey.objects.filter(workspace=workspace)


def api_keys_of_agent(*, workspace_id: int, agent_id: int) -> list[int]:
    """Ids of the workspace's keys bound to the agent entity, revoked ones included: what
    they logged before they were revoked is still the agent's."""
    return list(ApiKey.objects.filter(workspace_id=workspace_id, agent_id=agent_id).values_list("pk", flat=True))


def api_keys_active_count(*, workspace: Workspace) -> int:
    now = timezone.now()
    return (ApiKey.objects.filter(workspace=workspace, revoked_at__isnull=True)
            .filter(Q(expires_at__isnull=True) | Q(expires_at__gt=now)).count())


def audit_events(*, workspace: Workspace) -> QuerySet[AuditEvent]:
    return AuditEvent.objects.filter(workspace=workspace).order_by("-at", "-id")


def audit_recent(*, workspace: Workspace, limit: int = 20) -> list[AuditEvent]:
    return list(AuditEvent.objects.filter(workspace=workspace).select_related("actor_api_key__agent")
                .order_by("-at", "-id")[:limit])


def worker_last_seen() -> WorkerHeartbeat | None:
    return WorkerHeartbeat.objects.filter(name="worker").first()


def audit_events_after(*, after_id: int, verbs: list[str], limit: int) -> list[AuditEvent]:
    """Audit events of the given verbs after `after_id`, in id order, across workspaces: a
    cursor for jobs that learn from what happened (gaps: failed outcomes)."""
    return list(AuditEvent.objects.filter(pk__gt=after_id, verb__in=verbs, workspace__isnull=False)
                .select_related("workspace").order_by("pk")[:limit])


def audit_last_id() -> int:
    last = AuditEvent.objects.order_by("-pk").values_list("pk", flat=True).first()
    return last or 0


def api_key_get(*, workspace: Workspace, key_id: int) -> ApiKey | None:
    return ApiKey.objects.filter(workspace=workspace, pk=key_id).select_related("agent", "created_by").first()


def audit_search(*, workspace: Workspace, verb: str | None = None, actor: str | None = None,
                 target_type: str | None = None, target_id: str | None = None,
                 since: datetime | None = None, until: datetime | None = None) -> QuerySet[AuditEvent]:
    """The audit page's rows, newest first: every given filter applies (they combine);
    `until` is exclusive."""
    lookups = {"verb": verb, "actor_label": actor, "target_type": target_type, "target_id": target_id,
               "at__gte": since, "at__lt": until}
    return audit_events(workspace=workspace).select_related("actor_api_key__agent").filter(
        **{lookup: value for lookup, value in lookups.items() if value})


AUDIT_FACET_LIMIT = 300


def audit_facets(*, workspace: Workspace) -> dict[str, list[str]]:
    """The values the audit page offers as filters: the verbs, actors and target types that
    occur in the workspace's log (each list bounded: a choice list, not a report)."""
    events = AuditEvent.objects.filter(workspace=workspace)

    def distinct(field: str) -> list[str]:
        return list(events.exclude(**{field: ""}).order_by(field).values_list(field, flat=True)
                    .distinct()[:AUDIT_FACET_LIMIT])

    return {"verbs": distinct("verb"), "actors": distinct("actor_label"), "target_types": distinct("target_type")}
