"""Running an export or an import, recorded by core.jobs.job_run and audited: directly by
the commands (`export_run`, `import_run`), or by a Celery task for an ArchiveJob the API
started (`archive_job_run`)."""

from __future__ import annotations

from pathlib import Path

from django.conf import settings
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
               progress=None, resume: bool = False) -> Report:
    """Raises ArchiveError (nothing imported) when the archive is refused."""
    with job_run("archive.import", workspace_id=workspace.pk, trigger=trigger) as counts:
        report = workspace_import(path=path, workspace=workspace, progress=progress, resume=resume)
        counts.update(report.counts)
    audit_record(workspace=workspace, actor=actor, verb="workspace.import",
                 data={"rows": sum(report.counts.values()), "carried_vectors": report.carried_vectors})
    return report


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


