"""Where a TODO goes besides the built-in list: an issue in the team's GitHub or GitLab
(trackers/), opened with the evidence trail when a gap reaches its threshold, closed when
the gap is resolved, reopened with a comment when it comes back.

The tracker is called from Celery tasks (gaps/tasks.py), never inside a transaction: the
HTTP call holds no lock; the issue's number and URL are saved in a short transaction after.
Snippets are redacted (emails, phone numbers, keys) before they leave Mnemo."""

from __future__ import annotations

from django.conf import settings
from django.db import transaction
from django.urls import reverse

import trackers
from core import privacy
from core.models import Workspace
from core.services import SYSTEM, audit_record
from gaps.models import CapabilityGap, GapEvidence, GapRelevance, GapStatus

EVIDENCE_LINES = 200  # the newest; the body says how many more there were


def tracker_config() -> trackers.TrackerConfig | None:
    if not settings.MNEMO_TRACKER_KIND:
        return None
    return trackers.TrackerConfig(kind=settings.MNEMO_TRACKER_KIND, base_url=settings.MNEMO_TRACKER_URL,
                                  project=settings.MNEMO_TRACKER_PROJECT, token=settings.MNEMO_TRACKER_TOKEN)


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


def gap_issue_open(*, gap_id: int, transport=None) -> str | None:
    """Open the gap's issue unless it has one or is no longer a TODO. Returns its URL.
    Raises trackers.TrackerError (its `retryable` tells the task whether to try again)."""
    config = tracker_config()
    gap = CapabilityGap.objects.filter(pk=gap_id).first()
    if config is None or gap is None or gap.issue_number or gap.status != GapStatus.TODO_CREATED:
        return None
    opened = trackers.open_issue(config, title=f"Capability gap: {privacy.redact(gap.description)}",
                                 body=_body(gap), transport=transport)
    with transaction.atomic():
        locked = CapabilityGap.objects.select_for_update().filter(pk=gap_id).first()
        if locked is None:
            return opened.url  # erased meanwhile; the issue stays in the tracker (README)
        locked.issue_number, locked.todo_ref = opened.number, opened.url
        locked.save(update_fields=["issue_number", "todo_ref"])
        audit_record(workspace=Workspace.objects.get(pk=locked.workspace_id), actor=SYSTEM, verb="gap.issue",
                     target=locked, data={"url": opened.url, "number": opened.number, "tracker": opened.kind})
    return opened.url


def gap_issue_sync(*, gap_id: int, open: bool, note: str, transport=None) -> bool:  # noqa: A002 - as trackers names it
    """Close (resolved) or reopen (it came back) the gap's issue, with a comment saying why."""
    config = tracker_config()
    gap = CapabilityGap.objects.filter(pk=gap_id).first()
    if config is None or gap is None or not gap.issue_number:
        return False
    trackers.comment(config, number=gap.issue_number, body=privacy.redact(note), transport=transport)
    trackers.set_state(config, number=gap.issue_number, open=open, transport=transport)
    return True
