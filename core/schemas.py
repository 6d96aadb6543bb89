from datetime import datetime
from typing import Annotated, Literal

from ninja import FilterLookup, FilterSchema, Schema
from pydantic import ConfigDict, Field

from core.input_types import AwareTimestamp, Id

from core.safe_text import SafeStr


class HealthOut(Schema):
    status: str


class CheckOut(Schema):
    ok: bool
    detail: str


class ReadyOut(Schema):
    ready: bool
    checks: dict[str, CheckOut]


class WorkspaceOut(Schema):
    id: int
    slug: str
    name: str


class WorkerOut(Schema):
    last_seen_at: datetime | None
    hostname: str | None


class StatusOut(Schema):
    workspace: WorkspaceOut
    pending: dict[str, int]
    idle: bool
    worker: WorkerOut


class ApiKeyIn(Schema):
    name: SafeStr = Field(min_length=1, max_length=200)
    scopes: list[Literal["read", "write", "admin"]] = Field(min_length=1)
    expires_at: AwareTimestamp | None = None
    agent: Id | None = Field(None, description="The agent entity this key writes for (its writes are shown as that agent's)")


class ApiKeyBindIn(Schema):
    model_config = ConfigDict(extra="forbid")
    agent: Id | None = Field(description="An entity of this workspace, or null to unbind")


class ApiKeyOut(Schema):
    id: int
    name: str
    prefix: str
    scopes: list[str]
    created_at: datetime
    last_used_at: datetime | None
    expires_at: datetime | None
    revoked_at: datetime | None
    agent_id: int | None


class ApiKeyCreatedOut(ApiKeyOut):
    key: str = Field(description="The whole key. Shown only in this answer; store it now.")


class AuditFilter(FilterSchema):
    verb: str | None = None
    target_type: str | None = None
    target_id: str | None = None
    since: Annotated[AwareTimestamp | None, FilterLookup("at__gte")] = None
    until: Annotated[AwareTimestamp | None, FilterLookup("at__lt")] = None


class AuditEventOut(Schema):
    id: int
    at: datetime
    actor: str = Field(alias="actor_label")
    verb: str
    target_type: str
    target_id: str
    data: dict
    request_id: str
