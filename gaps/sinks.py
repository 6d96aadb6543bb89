"""Where a TODO goes besides the built-in list: an issue in the team's GitHub or GitLab
(trackers/), opened with the evidence trail when a gap reaches its threshold, closed when
the gap is resolved, reopened with a comment when it comes back.

Which tracker (`tracker_for`): the workspace's own (GapSink, set by its admins on the gaps
policy page or at /api/v1/gaps/sink) when it has one — none at all while it is disabled —
else the deployment's MNEMO_TRACKER_* settings, when they name a kind.

Every call is a SinkDelivery row, queued in the transaction of the change it announces and
sent by a Celery task after it commits (gaps.tasks.deliver_issue), never inside a transaction: the HTTP
call holds no lock; what came back is saved in a short transaction after. The token never
leaves the GapSink row and the request's header: not in a delivery, an audit row, an error
or a log line. Snippets are redacted (emails, phone numbers, keys) before they leave Mnemo."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta

from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import transaction
from django.db.models import Q
from django.urls import reverse
from django.utils import timezone

import trackers
from core import privacy
from core.errors import Conflict, NotFound
from core.models import Workspace
from core.safe_text import refuse_secrets
from core.services import SYSTEM, Actor, audit_record
from gaps.models import (
    CapabilityGap,
    GapEvidence,
    GapRelevance,
    GapSink,
    GapStatus,
    SinkAction,
    SinkDelivery,
    SinkDeliveryStatus,
    TrackerKind,
    token_hint,
)
from webhooks import policy as url_policy

EVIDENCE_LINES = 200  # the newest; the body says how many more there were
MAX_ERROR_CHARS = 1000
MAX_TOKEN_CHARS = 500
MIN_TOKEN_CHARS = 8
WORKSPACE, DEPLOYMENT = "workspace", "deployment"
# Longest one attempt may take: three tracker calls (comment, state; or open) of at most the
# client's 10 s per phase each, with room to spare.
CLAIM_SECONDS = 180


@dataclass(frozen=True)
class Tracker:
    config: trackers.TrackerConfig
    source: str  # WORKSPACE | DEPLOYMENT


def _config(*, kind: str, base_url: str, project: str, token: str) -> trackers.TrackerConfig:
    return trackers.TrackerConfig(kind=kind, base_url=base_url, project=project, token=token)


def tracker_for(workspace_id: int) -> Tracker | None:
    """The tracker the workspace's TODOs go to, or None (the module docstring's precedence)."""
    sink = GapSink.objects.filter(workspace_id=workspace_id).first()
    if sink is not None:
        config = _config(kind=sink.kind, base_url=sink.base_url, project=sink.project, token=sink.token)
        return Tracker(config, WORKSPACE) if sink.enabled else None
    if not settings.MNEMO_TRACKER_KIND:
        return None
    return Tracker(_config(kind=settings.MNEMO_TRACKER_KIND, base_url=settings.MNEMO_TRACKER_URL,
                           project=settings.MNEMO_TRACKER_PROJECT, token=settings.MNEMO_TRACKER_TOKEN), DEPLOYMENT)


def sink_settings(*, workspace: Workspace) -> dict:
    """The settings that apply to the workspace and whose they are ("workspace",
    "deployment" or "none"), never the token: only its hint."""
    sink = GapSink.objects.filter(workspace=workspace).first()
    if sink is not None:
        return {"source": WORKSPACE, "kind": sink.kind, "base_url": sink.base_url, "project": sink.project,
                "enabled": sink.enabled, "token_hint": sink.token_hint, "updated_at": sink.updated_at}
    tracker = tracker_for(workspace.pk)
    if tracker is None:
        return {"source": "none", "kind": "", "base_url": "", "project": "", "enabled": False, "token_hint": "",
                "updated_at": None}
    return {"source": DEPLOYMENT, "kind": tracker.config.kind, "base_url": tracker.config.base_url,
            "project": tracker.config.project, "enabled": True, "token_hint": token_hint(tracker.config.token),
            "updated_at": None}


# --- the workspace's settings (admins) -------------------------------------------------------

def _clean_base_url(base_url: str) -> str:
    base_url = base_url.strip()
    problem = url_policy.url_problem(base_url) if len(base_url) <= 500 else "At most 500 characters."
    if problem:
        raise ValidationError({"base_url": problem})
    return base_url


def _clean_token(token: str, *, base_url: str, project: str) -> str:
    """A token is printable ASCII without spaces. The messages never quote it."""
    token = token.strip()
    if not MIN_TOKEN_CHARS <= len(token) <= MAX_TOKEN_CHARS:
        raise ValidationError({"token": f"A token is {MIN_TOKEN_CHARS} to {MAX_TOKEN_CHARS} characters long."})
    if not (token.isascii() and token.isprintable()) or any(c.isspace() for c in token):
        raise ValidationError({"token": "A token is printable ASCII without spaces."})
    if "://" in token or token in (base_url, project):
        raise ValidationError({"token": "That is the URL or the project, not a token."})
    return token


def _refuse_token_elsewhere(token: str, **fields: str) -> None:
    """The token goes in its own field only: a value that holds it would be shown back."""
    for name, value in fields.items():
        if token and token in value:
            raise ValidationError({name: f"The {name.replace('_', ' ')} holds the token; the token has its own "
                                         "field (nothing was stored)."})


def _sink_audit(sink: GapSink, *, token_changed: bool) -> dict:
    return {"kind": sink.kind, "base_url": sink.base_url, "project": sink.project, "enabled": sink.enabled,
            "token": "changed" if token_changed else "kept"}


@transaction.atomic
def sink_set(*, workspace: Workspace, kind: str, base_url: str, project: str, token: str | None, enabled: bool,
             actor: Actor) -> GapSink:
    """Create or replace the workspace's tracker. `token` None keeps the stored one (a
    first setting needs one). The settings are checked as the tracker client would use them."""
    refuse_secrets(base_url=base_url, project=project)
    if kind not in TrackerKind.values:
        raise ValidationError({"kind": f"A tracker is one of {', '.join(TrackerKind.values)}."})
    base_url, project = _clean_base_url(base_url), " ".join(project.split())
    if not project or len(project) > 300:
        raise ValidationError({"project": "The project is 1 to 300 characters: owner/repo, or a GitLab path or id."})
    existing = GapSink.objects.select_for_update().filter(workspace=workspace).first()
    if token is None and existing is None:
        raise ValidationError({"token": "A tracker needs a token."})
    stored = existing.token if existing is not None else ""
    new_token = stored if token is None else _clean_token(token, base_url=base_url, project=project)
    _refuse_token_elsewhere(new_token, base_url=base_url, project=project)
    try:
        trackers.validate(_config(kind=kind, base_url=base_url, project=project, token=new_token))
    except trackers.TrackerError as exc:
        raise ValidationError({"settings": str(exc)}) from None
    sink, _ = GapSink.objects.update_or_create(workspace=workspace, defaults={
        "kind": kind, "base_url": base_url, "project": project, "token": new_token, "enabled": enabled,
        "updated_at": timezone.now(), "updated_by": actor.user})
    audit_record(workspace=workspace, actor=actor, verb="gap.sink", target=sink,
                 data=_sink_audit(sink, token_changed=new_token != stored))
    return sink


@transaction.atomic
def sink_delete(*, workspace: Workspace, actor: Actor) -> None:
    """Back to the deployment's default tracker (if it has one)."""
    sink = GapSink.objects.select_for_update().filter(workspace=workspace).first()
    if sink is None:
        raise NotFound("This workspace has no tracker of its own.")
    audit_record(workspace=workspace, actor=actor, verb="gap.sink_delete", target=sink,
                 data=_sink_audit(sink, token_changed=False))
    sink.delete()


def _error_text(exc: trackers.TrackerError, config: trackers.TrackerConfig) -> str:
    # The client scrubs the token already; redaction masks anything else key-like.
    return privacy.redact(str(exc).replace(config.token, "***"))[:MAX_ERROR_CHARS]


def _target(tracker: Tracker) -> dict:
    return {"source": tracker.source, "kind": tracker.config.kind, "base_url": tracker.config.base_url,
            "project": tracker.config.project}


def sink_test(*, workspace: Workspace, actor: Actor, transport=None) -> SinkDelivery:
    """Read the project with the workspace's settings (opens nothing) and log the answer as
    a delivery. An admin's action: the request waits for the tracker (its timeout bounds
    it), with no transaction open meanwhile."""
    tracker = tracker_for(workspace.pk)
    if tracker is None:
        raise Conflict("No tracker is configured for this workspace (or it is disabled).")
    status, error, code = SinkDeliveryStatus.DELIVERED, "", None
    try:
        trackers.check(tracker.config, transport=transport)
    except trackers.TrackerError as exc:
        status, error, code = SinkDeliveryStatus.FAILED, _error_text(exc, tracker.config), exc.status
    with transaction.atomic():
        delivery = SinkDelivery.objects.create(
            workspace=workspace, action=SinkAction.TEST, status=status, attempts=1, last_status_code=code,
            last_error=error, delivered_at=timezone.now() if status == SinkDeliveryStatus.DELIVERED else None,
            **_target(tracker))
        audit_record(workspace=workspace, actor=actor, verb="gap.sink_test", target=delivery,
                     data={"status": status, **_target(tracker)})
    return delivery


# --- queued in the transaction of the change (gaps.services) -------------------------------------

def _queue(gap: CapabilityGap, action: str, note: str = "") -> SinkDelivery | None:
    tracker = tracker_for(gap.workspace_id)
    if tracker is None:
        return None
    return SinkDelivery.objects.create(workspace_id=gap.workspace_id, gap=gap, action=action, note=note[:2000],
                                       **_target(tracker))


def issue_open_queue(*, gap: CapabilityGap) -> SinkDelivery | None:
    """The gap became a TODO: a pending delivery to open its issue, when the workspace has a
    tracker (the caller sends it once its transaction commits)."""
    return None if gap.issue_number else _queue(gap, SinkAction.OPEN)


def issue_sync_queue(*, gap: CapabilityGap, open: bool, note: str) -> SinkDelivery | None:  # noqa: A002
    """Close (resolved, won't fix) or reopen (it came back) the gap's issue, with a comment."""
    if not gap.issue_number:
        return None
    return _queue(gap, SinkAction.REOPEN if open else SinkAction.CLOSE, note)


def delivery_retry(*, workspace: Workspace, delivery_id: int, actor: Actor) -> SinkDelivery:
    """A person sends a failed delivery again (after fixing the token, say): it is pending
    again and the caller enqueues it once the transaction commits. Only a failed open, close
    or reopen (a test is re-run with the test button); the attempt itself re-checks whether
    it is still due (the gap may have an issue by now, or be gone)."""
    with transaction.atomic():
        delivery = (SinkDelivery.objects.select_for_update().filter(pk=delivery_id, workspace=workspace).first())
        if delivery is None:
            raise NotFound("No such delivery in this workspace.")
        if delivery.action == SinkAction.TEST:
            raise Conflict("A test delivery is not retried: run the test again.")
        if delivery.status != SinkDeliveryStatus.FAILED:
            raise Conflict(f"Only a failed delivery can be retried; this one is {delivery.status}.")
        delivery.status = SinkDeliveryStatus.PENDING
        delivery.save(update_fields=["status"])
        audit_record(workspace=workspace, actor=actor, verb="gap.delivery_retry", target=delivery,
                     data={"action": delivery.action, "gap": delivery.gap_id, "attempts": delivery.attempts})
    return delivery


# --- one attempt (the task) ------------------------------------------------------------------

def _body(gap: CapabilityGap) -> str:
    rows = (GapEvidence.objects.filter(gap=gap, relevance=GapRelevance.PRIMARY).select_related("interaction")
            .order_by("-occurred_at", "-pk")[:EVIDENCE_LINES])
    lines = [trackers.EvidenceLine(
        interaction_id=row.interaction_id or 0, external_id=row.interaction.external_id if row.interaction else None,
        occurred_at=row.occurred_at, channel=row.interaction.channel if row.interaction else "api",
        snippet=privacy.redact(row.quote or (row.interaction.content if row.interaction else row.reason)),
    ) for row in rows]
    workspace = Workspace.objects.get(pk=gap.workspace_id)
    link = (settings.MNEMO_PUBLIC_URL.rstrip("/") + reverse("gap", args=[workspace.slug, gap.pk])
            if settings.MNEMO_PUBLIC_URL else None)
    return trackers.issue_body(description=privacy.redact(gap.description), frequency=gap.frequency,
                               category=gap.category, first_seen=gap.first_seen, last_seen=gap.last_seen,
                               evidence=lines, dashboard_url=link)


def _finish(delivery: SinkDelivery, status: str, **fields) -> SinkDelivery:
    delivery.status, delivery.claimed_until = status, None
    if status == SinkDeliveryStatus.DELIVERED:
        delivery.delivered_at = timezone.now()
    for name, value in fields.items():
        setattr(delivery, name, value)
    delivery.save()
    return delivery


def _opened_elsewhere(delivery: SinkDelivery, tracker: Tracker) -> str:
    """Why a close or reopen cannot go to today's tracker: the issue was opened in another."""
    opened = (SinkDelivery.objects.filter(gap_id=delivery.gap_id, action=SinkAction.OPEN,
                                          status=SinkDeliveryStatus.DELIVERED).order_by("-pk").first())
    if opened is None or (opened.kind, opened.base_url, opened.project) == (
            tracker.config.kind, tracker.config.base_url, tracker.config.project):
        return ""
    return (f"The issue was opened in {opened.kind} {opened.project}; the workspace's tracker is now "
            f"{tracker.config.kind} {tracker.config.project}.")


def _skip_reason(delivery: SinkDelivery, gap: CapabilityGap | None, tracker: Tracker) -> str:
    if gap is None:
        return "The gap is gone (merged or erased)."
    if delivery.action == SinkAction.OPEN:
        if gap.issue_number:
            return "The gap has an issue already."
        if gap.status != GapStatus.TODO_CREATED:
            return f"The gap is {gap.status} now, no longer a TODO."
        return ""
    if not gap.issue_number:
        return "The gap has no issue."
    return _opened_elsewhere(delivery, tracker)


def issue_deliver(*, delivery_id: int, final: bool = False, transport=None) -> SinkDelivery | None:
    """Send one pending delivery. A TrackerError is recorded on the row (failed when
    retrying cannot help or `final`, the task's last try) and raised again for the task to
    decide; None when there was nothing pending."""
    now = timezone.now()
    # Claim it first (one conditional UPDATE, no lock held over the HTTP calls): a worker that
    # finds it claimed leaves it; a claim whose worker died lapses after CLAIM_SECONDS.
    claimed = (SinkDelivery.objects.filter(pk=delivery_id, status=SinkDeliveryStatus.PENDING)
               .filter(Q(claimed_until__isnull=True) | Q(claimed_until__lt=now))
               .update(claimed_until=now + timedelta(seconds=CLAIM_SECONDS)))
    if not claimed:
        return None
    delivery = SinkDelivery.objects.get(pk=delivery_id)
    tracker = tracker_for(delivery.workspace_id)
    if tracker is None:
        return _finish(delivery, SinkDeliveryStatus.SKIPPED, last_error="No tracker is configured for this workspace "
                                                                         "any more (or it is disabled).")
    for name, value in _target(tracker).items():
        setattr(delivery, name, value)
    gap = CapabilityGap.objects.filter(pk=delivery.gap_id).first() if delivery.gap_id else None
    skip = _skip_reason(delivery, gap, tracker)
    if skip:
        return _finish(delivery, SinkDeliveryStatus.SKIPPED, last_error=skip)
    delivery.attempts += 1
    try:
        if delivery.action == SinkAction.OPEN:
            opened = trackers.open_issue(tracker.config, title=f"Capability gap: {privacy.redact(gap.description)}",
                                         body=_body(gap), transport=transport)
        else:
            trackers.comment(tracker.config, number=gap.issue_number, body=privacy.redact(delivery.note),
                             transport=transport)
            trackers.set_state(tracker.config, number=gap.issue_number, open=delivery.action == SinkAction.REOPEN,
                               transport=transport)
    except trackers.TrackerError as exc:
        failed = final or not exc.retryable
        _finish(delivery, SinkDeliveryStatus.FAILED if failed else SinkDeliveryStatus.PENDING,
                last_status_code=exc.status, last_error=_error_text(exc, tracker.config))
        raise
    if delivery.action != SinkAction.OPEN:
        return _finish(delivery, SinkDeliveryStatus.DELIVERED, issue_number=gap.issue_number, issue_url=gap.todo_ref,
                       last_error="")
    with transaction.atomic():
        locked = CapabilityGap.objects.select_for_update().filter(pk=gap.pk).first()
        if locked is not None:  # else erased meanwhile; the issue stays in the tracker (README)
            locked.issue_number, locked.todo_ref = opened.number, opened.url
            locked.save(update_fields=["issue_number", "todo_ref"])
            audit_record(workspace=Workspace.objects.get(pk=locked.workspace_id), actor=SYSTEM, verb="gap.issue",
                         target=locked, data={"url": opened.url, "number": opened.number, "tracker": opened.kind,
                                              "project": tracker.config.project, "delivery": delivery.pk})
        return _finish(delivery, SinkDeliveryStatus.DELIVERED, issue_number=opened.number, issue_url=opened.url,
                       last_error="")
