"""Scheduled maintenance jobs record every run (issue 19 part 7): `with job_run("memory.decay")
as counts:` writes a `running` row before the work, then `ok` with the counts the job put
in the dict, or `failed` with the error (re-raised). The row is written on its own
connection state, outside any transaction of the caller (a job that rolls its work back
still leaves its run behind): call it in autocommit mode, as Celery tasks run.

Jobs are idempotent, bounded per run and safe to kill mid-run; a run killed mid-way stays
`running` with no end, which the maintenance page shows as such."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from django.db import connection
from django.utils import timezone

from core.logging import mask_secrets
from core.models import JobRun

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


def job_runs_latest(*, names: list[str], per_job: int = 5) -> dict[str, list[JobRun]]:
    """The last `per_job` runs of each job, newest first."""
    runs: dict[str, list[JobRun]] = {name: [] for name in names}
    for name in names:
        runs[name] = list(JobRun.objects.filter(name=name).order_by("-started_at", "-id")[:per_job])
    return runs
