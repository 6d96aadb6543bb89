from django.http import HttpRequest
from django.shortcuts import get_object_or_404
from ninja import Query, Router, Status
from ninja.pagination import paginate

from core import health, layers, selectors, services
from core.auth import require
from core.input_types import Id
from core.schemas import (
    ApiKeyBindIn,
    ApiKeyCreatedOut,
    ApiKeyIn,
    ApiKeyOut,
    AuditEventOut,
    AuditFilter,
    HealthOut,
    ReadyOut,
    StatusOut,
)

router = Router(tags=["service"])


@router.get("/health", response=HealthOut, auth=None, summary="Liveness: the process answers")
def get_health(request: HttpRequest):
    # No database, broker or auth: a load balancer may call this every second.
    return {"status": "ok"}


@router.get("/ready", response={200: ReadyOut, 503: ReadyOut}, auth=None, summary="Readiness: dependencies usable")
def get_ready(request: HttpRequest):
    results = health.readiness()
    ready = all(ok for ok, _ in results.values())
    body = {"ready": ready, "checks": {name: {"ok": ok, "detail": detail} for name, (ok, detail) in results.items()}}
    return Status(200 if ready else 503, body)


@router.get("/status", response=StatusOut, auth=require("read"), summary="Background work pending in this workspace")
def get_status(request: HttpRequest):
    """`pending` counts the items of each kind of background work not yet done for the
    key's workspace; when every count is 0 (`idle: true`), all processing is finished."""
    workspace = request.workspace
    pending = layers.pending_counts(workspace)
    beat = selectors.worker_last_seen()
    return {
        "workspace": workspace,
        "pending": pending,
        "idle": not any(pending.values()),
        "worker": {"last_seen_at": beat.seen_at if beat else None, "hostname": beat.hostname if beat else None},
    }


@router.get("/keys", response=list[ApiKeyOut], auth=require("admin"), tags=["keys"], summary="API keys of this workspace")
@paginate
def list_keys(request: HttpRequest):
    return selectors.api_key_list(workspace=request.workspace)


@router.post("/keys", response={201: ApiKeyCreatedOut}, auth=require("admin"), tags=["keys"], summary="Create an API key")
def create_key(request: HttpRequest, payload: ApiKeyIn):
    api_key, plaintext = services.api_key_create(workspace=request.workspace, name=payload.name,
                                                 scopes=list(payload.scopes), expires_at=payload.expires_at,
                                                 agent_id=payload.agent, actor=services.Actor.for_api_key(request.auth))
    return Status(201, {**ApiKeyOut.from_orm(api_key).model_dump(), "key": plaintext})


@router.put("/keys/{key_id}/agent", response=ApiKeyOut, auth=require("admin"), tags=["keys"],
            summary="Bind an API key to the agent entity it writes for")
def bind_key(request: HttpRequest, key_id: Id, payload: ApiKeyBindIn):
    api_key = get_object_or_404(selectors.api_key_list(workspace=request.workspace), pk=key_id)
    return services.api_key_bind(api_key=api_key, agent_id=payload.agent, actor=services.Actor.for_api_key(request.auth))


@router.post("/keys/{key_id}/revoke", response=ApiKeyOut, auth=require("admin"), tags=["keys"], summary="Revoke an API key")
def revoke_key(request: HttpRequest, key_id: Id):
    api_key = get_object_or_404(selectors.api_key_list(workspace=request.workspace), pk=key_id)
    return services.api_key_revoke(api_key=api_key, actor=services.Actor.for_api_key(request.auth))


@router.get("/audit", response=list[AuditEventOut], auth=require("admin"), tags=["audit"], summary="The audit log, newest first")
@paginate
def list_audit(request: HttpRequest, filters: AuditFilter = Query(...)):
    return filters.filter(selectors.audit_events(workspace=request.workspace))
