"""Starting export and import jobs for the API (core.archive.jobs runs them) and the
one-time download link."""

from __future__ import annotations

import hashlib
import secrets

from django.db import transaction
from django.utils import timezone

from core.archive.jobs import archive_path, import_lock_free, import_resumable
from core.models import ArchiveJob, Workspace
from core.services import Actor, audit_record
from core.tasks import archive_export, archive_import, archive_import_resume


@transaction.atomic
def archive_export_start(*, workspace: Workspace, actor: Actor) -> tuple[ArchiveJob, str]:
    """A queued export and its one-time download token (shown once, only its hash kept)."""
    token = secrets.token_urlsafe(32)
    job = ArchiveJob(workspace=workspace, kind=ArchiveJob.Kind.EXPORT, token_hash=_hash(token))
    job.path = str(archive_path(job.pk))
    job.save()
    audit_record(workspace=workspace, actor=actor, verb="workspace.export_requested", target=job)
    archive_export.delay_on_commit(str(job.pk))
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
    archive_import.delay_on_commit(str(job.pk))
    return job


@transaction.atomic
def archive_import_resume_start(*, job: ArchiveJob, actor: Actor) -> bool:
    """An admin resumes an interrupted import: queued for the worker once this commits.
    False when it is not resumable (running in a live worker, finished, nothing kept)."""
    if not import_resumable(job) or not import_lock_free(job.pk):
        return False
    audit_record(workspace=job.workspace, actor=actor, verb="workspace.import_resumed", target=job)
    archive_import_resume.delay_on_commit(str(job.pk))
    return True


def archive_download_allowed(*, job: ArchiveJob, token: str | None) -> bool:
    """With a token: once, the first time it matches (claimed atomically)."""
    if token is None:
        return True
    return bool(job.token_hash) and ArchiveJob.objects.filter(
        pk=job.pk, token_hash=_hash(token), downloaded_at__isnull=True).update(downloaded_at=timezone.now()) == 1


def _hash(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()
