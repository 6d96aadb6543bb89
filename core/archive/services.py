"""Export and import as use cases: the commands call `workspace_export` / `workspace_import`
directly; the API starts an ArchiveJob that a Celery task runs (both recorded by
core.jobs.job_run)."""

from __future__ import annotations

import hashlib
import secrets
from pathlib import Path

from celery import current_app
from django.conf import settings
from django.db import transaction
from django.utils import timezone

from core.archive.loading import Report, workspace_import
from core.archive.reading import ArchiveError
from core.archive.writing import workspace_export
from core.jobs import job_run
from core.models import ArchiveJob, Workspace
from core.services import SYSTEM, Actor, audit_record


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
               progress=None) -> Report:
    """Raises ArchiveError (nothing imported) when the archive is refused."""
    with job_run("archive.import", workspace_id=workspace.pk, trigger=trigger) as counts:
        report = workspace_import(path=path, workspace=workspace, progress=progress)
        counts.update(report.counts)
    audit_record(workspace=workspace, actor=actor, verb="workspace.import",
                 data={"rows": sum(report.counts.values()), "carried_vectors": report.carried_vectors})
    return report


@transaction.atomic
def archive_export_start(*, workspace: Workspace, actor: Actor) -> tuple[ArchiveJob, str]:
    """A queued export and its one-time download token (shown once, only its hash kept)."""
    token = secrets.token_urlsafe(32)
    job = ArchiveJob(workspace=workspace, kind=ArchiveJob.Kind.EXPORT, token_hash=_hash(token))
    job.path = str(archive_path(job.pk))
    job.save()
    audit_record(workspace=workspace, actor=actor, verb="workspace.export_requested", target=job)
    _enqueue("core.archive_export", job)
    return job, token


@transaction.atomic
def archive_import_start(*, workspace: Workspace, actor: Actor, upload) -> ArchiveJob:
    """A queued import of an uploaded archive, copied to the archive folder first."""
    job = ArchiveJob(workspace=workspace, kind=ArchiveJob.Kind.IMPORT)
    job.path = str(archive_path(job.pk))
    with open(job.path, "wb") as out:
        for chunk in upload.chunks():
            out.write(chunk)
    job.size = upload.size
    job.save()
    audit_record(workspace=workspace, actor=actor, verb="workspace.import_requested", target=job)
    _enqueue("core.archive_import", job)
    return job


def archive_job_run(*, job_id: str) -> None:
    """The task's body: run the job once (a redelivered task finds it started and stops)."""
    if not ArchiveJob.objects.filter(pk=job_id, status=ArchiveJob.Status.QUEUED).update(
            status=ArchiveJob.Status.RUNNING):
        return
    job = ArchiveJob.objects.select_related("workspace").get(pk=job_id)
    path = Path(job.path)
    try:
        if job.kind == ArchiveJob.Kind.EXPORT:
            manifest = export_run(workspace=job.workspace, path=path, trigger="api")
            report = {"tables": {n: e["rows"] for n, e in manifest["tables"].items()}}
            size = path.stat().st_size
        else:
            result = import_run(workspace=job.workspace, path=path, trigger="api")
            report = {"tables": result.counts, "skipped": result.skipped, "carried_vectors": result.carried_vectors,
                      "ignored_columns": result.ignored_columns}
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


def archive_download_allowed(*, job: ArchiveJob, token: str | None) -> bool:
    """With a token: once, the first time it matches (claimed atomically)."""
    if token is None:
        return True
    return bool(job.token_hash) and ArchiveJob.objects.filter(
        pk=job.pk, token_hash=_hash(token), downloaded_at__isnull=True).update(downloaded_at=timezone.now()) == 1


def _enqueue(task: str, job: ArchiveJob) -> None:
    # By name: core.tasks imports this module for the task bodies.
    transaction.on_commit(lambda: current_app.send_task(task, args=[str(job.pk)]))


def _hash(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()
