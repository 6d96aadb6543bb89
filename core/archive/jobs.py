"""Running an export or an import, recorded by core.jobs.job_run and audited: directly by
the commands (`export_run`, `import_run`), or by a Celery task for an ArchiveJob the API
started (`archive_job_run`)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from uuid import UUID

from django.conf import settings
from django.db import connection
from django.utils import timezone

from core.archive.loading import Report, import_abandon, is_empty, workspace_import
from core.archive.reading import ArchiveError
from core.archive.writing import workspace_export
from core.jobs import job_run
from core.models import ArchiveJob, ImportProgress, Workspace
from core.services import SYSTEM, Actor, audit_record


JOB_LOCK_CLASS = 19007  # pg advisory lock class of an API archive job's run (19006: imports, by workspace)
FINISHED_UNRECORDED = "the import's last transaction committed; its worker stopped before recording the counts"


def archive_path(job_id) -> Path:
    folder = Path(settings.MNEMO_ARCHIVE_DIR)
    folder.mkdir(parents=True, exist_ok=True)
    return folder / f"{job_id}.zip"


def export_run(*, workspace: Workspace, path: Path, actor: Actor = SYSTEM, trigger: str = "command",
               progress=None) -> dict:
    with job_run("archive.export", workspace_id=workspace.pk, trigger=trigger) as counts:
        manifest = workspace_export(workspace=workspace, path=path, progress=progress)
        counts.update({name: entry["rows"] for name, entry in manifest["tables"].items()})
    audit_record(workspace=workspace, actor=actor, verb="workspace.export",
                 data={"rows": sum(e["rows"] for e in manifest["tables"].values())})
    return manifest


def import_run(*, workspace: Workspace, path: Path, actor: Actor = SYSTEM, trigger: str = "command",
               progress=None, resume: bool = False) -> Report:
    """Raises ArchiveError (nothing imported) when the archive is refused."""
    with job_run("archive.import", workspace_id=workspace.pk, trigger=trigger) as counts:
        report = workspace_import(path=path, workspace=workspace, progress=progress, resume=resume)
        counts.update(report.counts)
    audit_record(workspace=workspace, actor=actor, verb="workspace.import",
                 data={"rows": sum(report.counts.values()), "carried_vectors": report.carried_vectors})
    return report


@contextmanager
def _job_lock(job_id) -> Iterator[bool]:
    """Whether this process holds the job's run: a session advisory lock, so it goes with
    the connection of a worker that is killed — a job still `running` whose lock anyone can
    take has nobody running it (archive_jobs_resume_stale)."""
    key = [JOB_LOCK_CLASS, UUID(str(job_id)).int % 2**31]
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_try_advisory_lock(%s, %s)", key)
        held = cursor.fetchone()[0]
    try:
        yield held
    finally:
        if held:
            with connection.cursor() as cursor:
                cursor.execute("SELECT pg_advisory_unlock(%s, %s)", key)


def archive_job_run(*, job_id: str) -> None:
    """The task's body: run the job once (a redelivered task finds it started and stops)."""
    with _job_lock(job_id) as held:
        if not held or not ArchiveJob.objects.filter(pk=job_id, status=ArchiveJob.Status.QUEUED).update(
                status=ArchiveJob.Status.RUNNING):
            return
        _run(ArchiveJob.objects.select_related("workspace").get(pk=job_id))


def archive_job_resume(*, job_id: str) -> None:
    """The resume task's body: an import whose worker died carries on from its last committed
    batch (or starts again, when it died before the first). Nothing when someone is running
    it, or it is not an interrupted import."""
    with _job_lock(job_id) as held:
        job = ArchiveJob.objects.select_related("workspace").filter(pk=job_id, kind=ArchiveJob.Kind.IMPORT).first()
        if not held or job is None or not import_resumable(job):
            return
        if not ImportProgress.objects.filter(workspace=job.workspace).exists() and not is_empty(job.workspace):
            # Killed after the import's last transaction, before the job was marked.
            ArchiveJob.objects.filter(pk=job_id).update(status=ArchiveJob.Status.OK, finished_at=timezone.now(),
                                                        report={"tables": {}, "note": FINISHED_UNRECORDED})
            Path(job.path).unlink(missing_ok=True)
            return
        ArchiveJob.objects.filter(pk=job_id).update(status=ArchiveJob.Status.RUNNING, finished_at=None)
        _run(job, resume=ImportProgress.objects.filter(workspace=job.workspace).exists())


def import_resumable(job: ArchiveJob) -> bool:
    """An import left `running` by a worker that died, or failed on an error that left its
    progress (not a refused archive: that one keeps nothing)."""
    if job.kind != ArchiveJob.Kind.IMPORT or not Path(job.path).is_file():
        return False
    if job.status == ArchiveJob.Status.FAILED:
        return ImportProgress.objects.filter(workspace_id=job.workspace_id).exists()
    return job.status == ArchiveJob.Status.RUNNING


def import_lock_free(job_id) -> bool:
    """Nobody runs the job now (its run's lock could be taken)."""
    with _job_lock(job_id) as free:
        return free


def archive_jobs_resume_stale() -> list[str]:
    """Beat: API imports left `running` that nobody runs (their run's lock is free). Failed
    ones wait for a person (POST /import/{id}/resume, or the command)."""
    running = ArchiveJob.objects.filter(kind=ArchiveJob.Kind.IMPORT, status=ArchiveJob.Status.RUNNING)
    return [str(job_id) for job_id in running.values_list("pk", flat=True) if import_lock_free(job_id)]


def import_abandon_run(*, workspace: Workspace) -> dict[str, int]:
    """Undo an interrupted import (core.archive.loading.import_abandon); an API job that ran
    it is failed and its file removed, so nothing resumes it."""
    deleted = import_abandon(workspace=workspace)
    for job in ArchiveJob.objects.filter(workspace=workspace, kind=ArchiveJob.Kind.IMPORT,
                                         status__in=[ArchiveJob.Status.RUNNING, ArchiveJob.Status.FAILED]):
        Path(job.path).unlink(missing_ok=True)
        ArchiveJob.objects.filter(pk=job.pk).update(status=ArchiveJob.Status.FAILED, finished_at=timezone.now(),
                                                    report={**job.report, "error": "abandoned: what it loaded was deleted"})
    return deleted


def _run(job: ArchiveJob, *, resume: bool = False) -> None:
    job_id, path = job.pk, Path(job.path)
    try:
        if job.kind == ArchiveJob.Kind.EXPORT:
            manifest = export_run(workspace=job.workspace, path=path, trigger="api")
            report = {"tables": {n: e["rows"] for n, e in manifest["tables"].items()}}
            size = path.stat().st_size
        else:
            result = import_run(workspace=job.workspace, path=path, trigger="api", resume=resume)
            report = {"tables": result.counts, "skipped": result.skipped, "carried_vectors": result.carried_vectors,
                      "ignored_columns": result.ignored_columns, **({"resumed": True} if resume else {})}
            size = job.size
            path.unlink(missing_ok=True)
    except ArchiveError as exc:
        path.unlink(missing_ok=True)
        ArchiveJob.objects.filter(pk=job_id).update(status=ArchiveJob.Status.FAILED, finished_at=timezone.now(),
                                                    report={"error": str(exc), "problems": exc.problems})
        return
    except Exception as exc:
        ArchiveJob.objects.filter(pk=job_id).update(status=ArchiveJob.Status.FAILED, finished_at=timezone.now(),
                                                    report={"error": f"{type(exc).__name__}: the job failed; "
                                                                     "the server log has the details"})
        raise
    ArchiveJob.objects.filter(pk=job_id).update(status=ArchiveJob.Status.OK, finished_at=timezone.now(),
                                                report=report, size=size)


