"""Scheduled maintenance jobs record every run (issue 19 part 7): `with job_run("memory.decay")
as counts:` writes a `running` row before the work, then `ok` with the counts the job put
in the dict, or `failed` with the error (re-raised). The row is written on its own
connection state, outside any transaction of the caller (a job that rolls its work back
still leaves its run behind): call it in autocommit mode, as Celery tasks run.

Jobs are idempotent, bounded per run and safe to kill mid-run; a run killed mid-way stays
`running` with no end, which the maintenance page shows as such."""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import timedelta

from django.db import connection
from django.db.models import F, Q, Window
from django.db.models.functions import RowNumber
from django.utils import timezone

from core.logging import mask_secrets
from core.models import JobRun, Workspace
from core.selectors import workspaces_importing

log = logging.getLogger(__name__)

MAX_ERROR_CHARS = 2000


@contextmanager
def job_run(name: str, *, workspace_id: int | None = None, trigger: str = "schedule") -> Iterator[dict]:
    if connection.in_atomic_block:
        raise RuntimeError(f"job_run({name!r}) inside a transaction: its record would roll back with the work.")
    run = JobRun.objects.create(name=name, workspace_id=workspace_id, trigger=trigger)
    counts: dict = {}
    try:
        yield counts
    except BaseException as exc:
        JobRun.objects.filter(pk=run.pk).update(status=JobRun.Status.FAILED, finished_at=timezone.now(),
                                                counts=counts, error=_error_text(exc))
        raise
    JobRun.objects.filter(pk=run.pk).update(status=JobRun.Status.OK, finished_at=timezone.now(), counts=counts)


def _error_text(exc: BaseException) -> str:
    """The error in words, without any secret a message might quote."""
    return mask_secrets(f"{type(exc).__name__}: {exc}")[:MAX_ERROR_CHARS]


def job_run_per_workspace(name: str, work: Callable[[int], dict], *, workspace_id: int | None = None,
                          trigger: str = "schedule") -> dict[str, int]:
    """`work(workspace_id)` for one workspace, or for each in turn, each recorded as a run of
    its own (so a workspace's maintenance page shows its own runs and counts, never another
    tenant's). A workspace that fails is recorded as failed and does not stop the others."""
    ids = ([workspace_id] if workspace_id is not None
           else list(Workspace.objects.exclude(pk__in=workspaces_importing()).order_by("pk").values_list("pk", flat=True)))
    outcome = {"ok": 0, "failed": 0}
    for pk in ids:
        try:
            with job_run(name, workspace_id=pk, trigger=trigger) as counts:
                counts.update(work(pk))
        except Exception:
            log.exception("%s failed for workspace %s", name, pk)
            outcome["failed"] += 1
        else:
            outcome["ok"] += 1
    return outcome


def job_runs_latest(*, names: list[str], per_job: int = 5, workspace_id: int | None = None) -> dict[str, list[JobRun]]:
    """The last `per_job` runs of each job, newest first: with `workspace_id`, only that
    workspace's runs and the runs for all workspaces."""
    runs: dict[str, list[JobRun]] = {name: [] for name in names}
    scope = Q(workspace_id=workspace_id) | Q(workspace__isnull=True) if workspace_id is not None else Q()
    newest = Window(RowNumber(), partition_by=[F("name")], order_by=[F("started_at").desc(), F("id").desc()])
    # One query for every job (the maintenance page lists them all), not one per job.
    for run in (JobRun.objects.filter(scope, name__in=names).annotate(rank=newest).filter(rank__lte=per_job)
                .order_by("name", "-started_at", "-id")):
        runs[run.name].append(run)
    return runs


def job_run_daily_counts(*, name: str, workspace_id: int, days: int = 90) -> list[tuple[str, dict]]:
    """The counts of the last successful run of each day for the workspace, oldest first
    (the maintenance page charts the memory snapshot the decay job records)."""
    since = timezone.now() - timedelta(days=days)
    latest: dict[str, dict] = {}
    for started_at, counts in (JobRun.objects.filter(name=name, workspace_id=workspace_id, status=JobRun.Status.OK,
                                                     started_at__gte=since)
                               .order_by("started_at", "id").values_list("started_at", "counts")):
        latest[started_at.date().isoformat()] = counts
    return sorted(latest.items())
