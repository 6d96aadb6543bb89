"""Export and import through the API (admin scope; issue 19 part 6). Both run in the
background: POST starts an ArchiveJob and answers 202 with its id; GET on it says how it
went. An export's archive is downloaded with the workspace's admin key, or once, without a
key, through the link returned by POST (its token is shown only then). Another
workspace's job is a 404, whoever asks."""

from __future__ import annotations

from datetime import datetime
from uuid import UUID

from django.conf import settings
from django.http import FileResponse, HttpRequest
from ninja import File, Router, Schema, Status
from ninja.errors import AuthenticationError
from ninja.files import UploadedFile

from core.archive import services
from core.archive.loading import is_empty
from core.auth import require
from core.errors import ApiError
from core.models import ArchiveJob
from core.services import Actor

router = Router(tags=["archive"])


class ArchiveJobOut(Schema):
    id: UUID
    kind: str
    status: str
    size: int | None
    report: dict
    created_at: datetime
    finished_at: datetime | None


class ExportStartedOut(ArchiveJobOut):
    download_url: str  # one-time: works once, without a key


def _job(request: HttpRequest, job_id: UUID, kind: str) -> ArchiveJob:
    job = ArchiveJob.objects.filter(pk=job_id, kind=kind, workspace=request.workspace).first()
    if job is None:
        raise ApiError(status=404, code="not_found", message="Not found.")
    return job


@router.post("/export", response={202: ExportStartedOut}, auth=require("admin"),
             summary="Export this workspace to an archive, in the background")
def post_export(request: HttpRequest):
    job, token = services.archive_export_start(workspace=request.workspace, actor=Actor.for_api_key(request.auth))
    url = f"/api/v1/export/{job.pk}/download?token={token}"
    return Status(202, {**ArchiveJobOut.from_orm(job).dict(), "download_url": url})


@router.get("/export/{job_id}", response=ArchiveJobOut, auth=require("admin"), summary="An export's state")
def get_export(request: HttpRequest, job_id: UUID):
    return _job(request, job_id, ArchiveJob.Kind.EXPORT)


# The key is optional here (the link's token stands for it), so ninja documents none of
# the key's answers: they are listed by hand, keyed by int as ninja keys its own (a string "200"
# beside ninja's 200 is a duplicated key in the JSON, which Swagger UI refuses to read).
_DOWNLOAD_ANSWERS = {status: {"description": text} for status, text in (
    (200, "The archive (application/zip)."), (401, "Neither a valid admin key nor a token."),
    (403, "The key lacks the admin scope."), (404, "Not found, in another workspace, or the link was used."),
    (409, "The export has not finished."))}


@router.get("/export/{job_id}/download", auth=None, summary="Download a finished export",
            description="With the workspace's admin key, or once with the `token` of the link POST /export gave.",
            openapi_extra={"responses": _DOWNLOAD_ANSWERS})
def get_export_download(request: HttpRequest, job_id: UUID, token: str | None = None):
    if token is None:
        if require("admin")(request) is None:
            raise AuthenticationError()
        job = _job(request, job_id, ArchiveJob.Kind.EXPORT)
    else:
        job = ArchiveJob.objects.filter(pk=job_id, kind=ArchiveJob.Kind.EXPORT).first()
        if job is None or job.status != ArchiveJob.Status.OK or not services.archive_download_allowed(job=job, token=token):
            raise ApiError(status=404, code="not_found", message="Not found, or the link was used already.")
    if job.status != ArchiveJob.Status.OK:
        raise ApiError(status=409, code="not_ready", message=f"The export is {job.status}; download it once it is ok.")
    try:
        handle = open(job.path, "rb")
    except FileNotFoundError:
        raise ApiError(status=404, code="not_found", message="The archive file is gone from the server.") from None
    return FileResponse(handle, as_attachment=True, filename=f"{job.workspace.slug}-{job.pk}.zip",
                        content_type="application/zip")


@router.post("/import", response={202: ArchiveJobOut}, auth=require("admin"),
             summary="Import an archive into this (empty) workspace, in the background")
def post_import(request: HttpRequest, archive: File[UploadedFile]):
    if archive.size > settings.MNEMO_ARCHIVE_MAX_UPLOAD_BYTES:
        raise ApiError(status=413, code="too_large", message=f"The archive is larger than {settings.MNEMO_ARCHIVE_MAX_UPLOAD_BYTES} bytes "
                       "(MNEMO_ARCHIVE_MAX_UPLOAD_BYTES).")
    if archive.size < 22 or archive.read(4) != b"PK\x03\x04":
        raise ApiError(status=422, code="not_an_archive", message="The upload is not a zip archive exported by Mnemo.")
    archive.seek(0)
    if not is_empty(request.workspace):
        raise ApiError(status=409, code="workspace_not_empty", message="Import only into an empty workspace: this one holds data.")
    job = services.archive_import_start(workspace=request.workspace, actor=Actor.for_api_key(request.auth),
                                        upload=archive)
    return Status(202, job)


@router.post("/import/{job_id}/resume", response={202: ArchiveJobOut}, auth=require("admin", during_import=True),
             summary="Resume an import whose worker stopped, from its last committed batch",
             description="For an import left running by a worker that was killed, or failed with its progress kept; "
                         "beat also resumes the first kind within minutes. 409 while it is still running, when it "
                         "finished, or when there is nothing to resume (a refused archive keeps nothing).")
def post_import_resume(request: HttpRequest, job_id: UUID):
    job = _job(request, job_id, ArchiveJob.Kind.IMPORT)
    if not services.archive_import_resume_start(job=job, actor=Actor.for_api_key(request.auth)):
        raise ApiError(status=409, code="not_resumable",
                       message=f"The import is {job.status}: it is still running, finished, or has nothing to resume.")
    job.refresh_from_db()
    return Status(202, job)


@router.get("/import/{job_id}", response=ArchiveJobOut, auth=require("admin", during_import=True), summary="An import's state")
def get_import(request: HttpRequest, job_id: UUID):
    return _job(request, job_id, ArchiveJob.Kind.IMPORT)
