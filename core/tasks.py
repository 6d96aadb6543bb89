from __future__ import annotations

import socket

from celery import shared_task

from core.archive.jobs import archive_job_resume, archive_job_run, archive_jobs_resume_stale
from core.maintenance import erased_tables_vacuum
from core.services import worker_heartbeat_record


@shared_task(name="core.heartbeat", ignore_result=True)
def heartbeat() -> None:
    """Beat sends this every 30 s; whichever worker runs it records that it is alive."""
    worker_heartbeat_record(hostname=socket.gethostname())


@shared_task(name="core.vacuum_erased_tables", acks_late=True)
def vacuum_erased_tables(workspace_id: int, erasure_id: str, tables: list[str]) -> list[str]:
    """Enqueued when an erasure commits. A task, not an on_commit VACUUM in the request:
    vacuuming scans every index of a table in full, long for a large interaction log,
    and the worker's connection is in autocommit, as VACUUM needs. Vacuuming twice is
    harmless, so a redelivered task does no damage."""
    return erased_tables_vacuum(workspace_id=workspace_id, erasure_id=erasure_id, tables=tables)


@shared_task(name="core.archive_export", acks_late=True)
def archive_export(job_id: str) -> None:
    """An export the API started (core.archive.services): the archive's file, in the background."""
    archive_job_run(job_id=job_id)


@shared_task(name="core.archive_import", acks_late=True)
def archive_import(job_id: str) -> None:
    """An import the API started: the uploaded archive into its workspace, in the background."""
    archive_job_run(job_id=job_id)


@shared_task(name="core.archive_import_resume", acks_late=True)
def archive_import_resume(job_id: str) -> None:
    """An import the API started whose worker died (beat), or that an admin resumes
    (POST /import/{id}/resume): on from its last committed batch."""
    archive_job_resume(job_id=job_id)


@shared_task(name="core.archive_resume_stale", acks_late=True)
def archive_resume_stale() -> list[str]:
    """Beat: API imports left running that nobody runs any more are resumed."""
    stale = archive_jobs_resume_stale()
    for job_id in stale:
        archive_import_resume.delay(job_id)
    return stale
