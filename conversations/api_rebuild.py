"""Rebuilding a workspace's layers from its log through the API (admin scope; issue 19
part 5). POST /rebuild starts one in the background (or resumes the workspace's failed
one) and answers 202 with its id; GET /rebuild/{id} says how far it got. Another
workspace's rebuild is a 404, whoever asks."""

from __future__ import annotations

from uuid import UUID

from django.http import HttpRequest
from ninja import Router, Status

from conversations import tasks
from conversations.models import RebuildJob
from conversations.rebuild import rebuild_start
from conversations.schemas import RebuildIn, RebuildOut
from core.auth import require
from core.errors import NotFound
from core.services import Actor

router = Router(tags=["rebuild"])


@router.post("/rebuild", response={202: RebuildOut}, auth=require("admin"),
             summary="Re-derive this workspace's layers from its interaction log, in the background",
             description="Every layer that can be rebuilt unless `layers` names some. People's decisions stay: "
                         "a rejected claim is not proposed again, an approved or edited one stays as it was left. "
                         "New messages wait until the rebuild is done. 409 while one is queued or running; "
                         "a failed one is resumed.")
def post_rebuild(request: HttpRequest, payload: RebuildIn):
    job = rebuild_start(workspace=request.workspace, layer_names=payload.layers,
                        actor=Actor.for_api_key(request.auth))
    tasks.rebuild.delay_on_commit(str(job.pk))
    return Status(202, job)


@router.get("/rebuild/{job_id}", response=RebuildOut, auth=require("admin"), summary="A rebuild's progress")
def get_rebuild(request: HttpRequest, job_id: UUID):
    job = RebuildJob.objects.filter(pk=job_id, workspace=request.workspace).first()
    if job is None:
        raise NotFound("Not found.")
    return job
