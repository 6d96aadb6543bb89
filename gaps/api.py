"""Capability gaps over the API (issue 18): list them ranked by frequency, read one with its
evidence, report one ("I lacked a tool for X"), and drive the lifecycle: confirm, dismiss,
resolve, reopen, rename, merge; the TODO list and the workspace's TODO threshold; the
workspace's issue tracker (admins: its settings, a test, its deliveries); the refusals
linked to a censor instead of counted."""

from __future__ import annotations

from datetime import datetime
from typing import Literal

from django.http import HttpRequest
from ninja import Query, Router, Schema, Status
from pydantic import ConfigDict, Field, SecretStr

from core import privacy
from core.auth import require
from core.input_types import Id
from core.pagination import PageIn, page
from core.redaction import redact_answer
from core.safe_text import SafeStr
from core.services import Actor
from gaps import selectors, services, sinks
from gaps.models import CapabilityGap, CensoredRefusal, SinkDelivery

router = Router(tags=["gaps"])

Category = Literal["integration", "data_access", "feature", "knowledge", "permission", "tool_error", "other"]
Status_ = Literal["detected", "todo_created", "resolved", "wont_fix"]


# --- schemas --------------------------------------------------------------------------------------

class GapIn(Schema):
    model_config = ConfigDict(extra="forbid")
    description: SafeStr = Field(min_length=1, max_length=300, description="What the agent could not do, as the need: "
                                 "\"export invoices as PDF\"")
    category: Category = "other"
    reason: SafeStr = Field("", max_length=2000, description="Why the agent could not (kept as evidence)")
    interaction_id: Id | None = Field(None, description="The interaction where it happened: counted once per interaction")


class GapChangeIn(Schema):
    model_config = ConfigDict(extra="forbid")
    description: SafeStr = Field(min_length=1, max_length=300)
    category: Category | None = None


class TransitionIn(Schema):
    model_config = ConfigDict(extra="forbid")
    action: Literal["confirm", "dismiss", "resolve", "reopen"]
    reason: SafeStr = Field("", max_length=2000, description="Required to dismiss (won't fix)")


class MergeIn(Schema):
    model_config = ConfigDict(extra="forbid")
    into: Id = Field(description="The gap that stays; this one's evidence moves to it")


class PolicyIn(Schema):
    model_config = ConfigDict(extra="forbid")
    todo_threshold: int = Field(ge=1, le=1000, description="Occurrences that make a gap a TODO")


class GapFilter(Schema):
    status: Status_ | None = None
    category: Category | None = None
    q: SafeStr | None = Field(None, max_length=200, description="Words in the description")
    redact: bool = Field(False, description="Mask emails, phone numbers, IPs and keys in the text")


class ReadOptions(Schema):
    redact: bool = False


class GapOut(Schema):
    id: int
    description: str
    category: str
    frequency: int = Field(description="Distinct interactions (and reports) that showed the need")
    status: Status_
    confirmed: bool
    regression: bool = Field(description="It came back after it was resolved")
    todo_ref: str = Field(description="\"todo:<id>\" in the built-in TODO list once the threshold is reached")
    todo_created_at: datetime | None
    reason: str
    entity_id: int | None = Field(description="Who asked first, when known")
    rule: str
    first_seen: datetime
    last_seen: datetime


class GapEvidenceOut(Schema):
    interaction_id: int | None
    external_id: str | None
    channel: str | None
    relevance: Literal["primary", "supporting"]
    text: str = Field(description="The quoted span")
    rule: str
    reason: str
    reported_by: str
    occurred_at: datetime


class GapDetailOut(GapOut):
    evidence: list[GapEvidenceOut]


class SimilarGapOut(Schema):
    gap: GapOut
    similarity: float = Field(description="Cosine similarity of the two needs' embeddings, 0..1")


class GapPage(Schema):
    count: int
    items: list[GapOut]


class PolicyOut(Schema):
    todo_threshold: int


class SinkIn(Schema):
    model_config = ConfigDict(extra="forbid")
    kind: Literal["github", "gitlab"]
    base_url: SafeStr = Field(min_length=8, max_length=500, pattern=r"^[hH][tT][tT][pP][sS]?://",
                              description="https://api.github.com, or a GitLab's root URL; no credentials in it")
    project: SafeStr = Field(min_length=1, max_length=300, description="owner/repo on GitHub; a path or id on GitLab")
    token: SecretStr | None = Field(None, description="Write-only: never shown back. Omit it to keep the stored one.")
    enabled: bool = True


class SinkOut(Schema):
    source: Literal["workspace", "deployment", "none"] = Field(
        description="Whose settings apply: the workspace's own, the deployment's default, or none")
    kind: str
    base_url: str
    project: str
    enabled: bool
    token_hint: str = Field(description="The token's last characters; the token is never shown")
    updated_at: datetime | None


class SinkDeliveryOut(Schema):
    id: int
    gap_id: int | None
    action: Literal["open", "close", "reopen", "test"]
    source: str
    kind: str
    project: str
    status: Literal["pending", "delivered", "failed", "skipped"]
    attempts: int
    issue_number: int | None
    issue_url: str
    last_status_code: int | None
    last_error: str
    created_at: datetime
    delivered_at: datetime | None


class SinkDeliveryPage(Schema):
    count: int
    items: list[SinkDeliveryOut]


class CensoredFilter(Schema):
    censor_id: Id | None = Field(None, description="Only the refusals linked to this censor")


class CensoredOut(Schema):
    id: int
    censor_id: int
    interaction_id: int
    request_id: int | None
    description: str = Field(description="What was asked for")
    quote: str = Field(description="The agent's refusal")
    rule: str
    score: float
    occurred_at: datetime


class CensoredPage(Schema):
    count: int
    items: list[CensoredOut]


# --- endpoints ------------------------------------------------------------------------------------

def _gap_out(gap: CapabilityGap) -> dict:
    return GapOut.from_orm(gap).model_dump(mode="json")


def _redacted(answer: dict) -> dict:
    answer = redact_answer(answer)
    for gap in answer.get("items", [answer]):
        gap["description"] = privacy.redact(gap["description"])
        gap["reason"] = privacy.redact(gap["reason"])
    return answer


def _gap(request, gap_id: int) -> CapabilityGap:
    return selectors.gap_get(workspace=request.workspace, gap_id=gap_id)


@router.get("/gaps", response=GapPage, auth=require("read"), summary="Capability gaps, most frequent first")
def list_gaps(request: HttpRequest, filters: Query[GapFilter], paging: Query[PageIn]):
    rows = selectors.gap_list(workspace=request.workspace, status=filters.status, category=filters.category,
                              query=filters.q)
    answer = page(rows, paging, _gap_out)
    return _redacted(answer) if filters.redact else answer


@router.post("/gaps", response={201: GapOut}, auth=require("write"),
             summary="Report a capability gap (\"I lacked a tool for X\")")
def report_gap(request: HttpRequest, payload: GapIn):
    """The same need said in other words joins the existing gap (by its words now, by
    meaning within a minute); naming the interaction counts it once per interaction. At the
    workspace's threshold the gap becomes a TODO."""
    gap = services.gap_report(workspace=request.workspace, actor=Actor.for_api_key(request.auth), **payload.model_dump())
    return Status(201, gap)


# Declared before /gaps/{gap_id}, which would otherwise capture these words.
@router.get("/gaps/todo", response=GapPage, auth=require("read"), summary="The TODO list: gaps past the threshold")
def list_todos(request: HttpRequest, paging: Query[PageIn], options: Query[ReadOptions]):
    answer = page(selectors.todo_list(workspace=request.workspace), paging, _gap_out)
    return _redacted(answer) if options.redact else answer


@router.get("/gaps/policy", response=PolicyOut, auth=require("read"), summary="The workspace's TODO threshold")
def get_policy(request: HttpRequest):
    return {"todo_threshold": services.threshold_for(request.workspace.pk)}


@router.put("/gaps/policy", response=PolicyOut, auth=require("admin"), summary="Set the TODO threshold")
def set_policy(request: HttpRequest, payload: PolicyIn):
    return services.gap_policy_set(workspace=request.workspace, todo_threshold=payload.todo_threshold,
                                   actor=Actor.for_api_key(request.auth))


def _delivery_out(delivery: SinkDelivery) -> dict:
    return SinkDeliveryOut.from_orm(delivery).model_dump(mode="json")


def _censored_out(row: CensoredRefusal) -> dict:
    return CensoredOut.from_orm(row).model_dump(mode="json")


@router.get("/gaps/sink", response=SinkOut, auth=require("admin"), summary="The workspace's issue tracker for TODOs")
def get_sink(request: HttpRequest):
    """The workspace's own tracker, else the deployment's default (source says which).
    The token is never shown: only its last characters."""
    return sinks.sink_settings(workspace=request.workspace)


@router.put("/gaps/sink", response=SinkOut, auth=require("admin"), summary="Set the workspace's issue tracker")
def set_sink(request: HttpRequest, payload: SinkIn):
    """Replaces the deployment's default for this workspace; `enabled: false` turns the
    tracker off for it. The token is write-only; omit it to keep the stored one."""
    token = payload.token.get_secret_value() if payload.token is not None else None
    sinks.sink_set(workspace=request.workspace, kind=payload.kind, base_url=payload.base_url, project=payload.project,
                   token=token, enabled=payload.enabled, actor=Actor.for_api_key(request.auth))
    return sinks.sink_settings(workspace=request.workspace)


@router.delete("/gaps/sink", response={204: None}, auth=require("admin"),
               summary="Remove the workspace's tracker (back to the deployment's default)")
def delete_sink(request: HttpRequest):
    sinks.sink_delete(workspace=request.workspace, actor=Actor.for_api_key(request.auth))
    return Status(204, None)


@router.post("/gaps/sink/test", response={201: SinkDeliveryOut}, auth=require("admin"),
             summary="Test the tracker settings: read the project, open nothing")
def test_sink(request: HttpRequest):
    """The answer is the logged test delivery: `status` delivered or failed, with the
    tracker's error. 409 when no tracker applies to this workspace."""
    return Status(201, _delivery_out(sinks.sink_test(workspace=request.workspace, actor=Actor.for_api_key(request.auth))))


@router.get("/gaps/sink/deliveries", response=SinkDeliveryPage, auth=require("admin"),
            summary="The tracker deliveries (issues opened, closed, reopened; tests), newest first")
def list_sink_deliveries(request: HttpRequest, paging: Query[PageIn]):
    return page(selectors.sink_deliveries(workspace=request.workspace), paging, _delivery_out)


@router.post("/gaps/sink/deliveries/{delivery_id}/retry", response={202: SinkDeliveryOut}, auth=require("admin"),
             summary="Send a failed tracker delivery again")
def retry_sink_delivery(request: HttpRequest, delivery_id: Id):
    """The delivery is pending again and sent in the background; its row says what came of
    it. 409 unless it failed (a test is re-run with POST /gaps/sink/test)."""
    delivery = services.sink_delivery_retry(workspace=request.workspace, delivery_id=delivery_id,
                                            actor=Actor.for_api_key(request.auth))
    return Status(202, _delivery_out(delivery))


@router.get("/gaps/censored", response=CensoredPage, auth=require("read"),
            summary="Refusals linked to a censor instead of counted as gaps")
def list_censored(request: HttpRequest, filters: Query[CensoredFilter], paging: Query[PageIn]):
    return page(selectors.censored_refusals(workspace=request.workspace, censor_id=filters.censor_id), paging,
                _censored_out)


@router.get("/gaps/{gap_id}", response=GapDetailOut, auth=require("read"), summary="One gap with its evidence")
def get_gap(request: HttpRequest, gap_id: Id, options: Query[ReadOptions]):
    gap = _gap(request, gap_id)
    evidence = [{
        "interaction_id": e.interaction_id, "external_id": e.interaction.external_id if e.interaction else None,
        "channel": e.interaction.channel if e.interaction else None, "relevance": e.relevance,
        "text": e.quote or (e.interaction.content[:300] if e.interaction else ""), "rule": e.rule, "reason": e.reason,
        "reported_by": e.reported_by, "occurred_at": e.occurred_at,
    } for e in selectors.gap_evidence(gap=gap)]
    answer = GapDetailOut.model_validate({**_gap_out(gap), "evidence": evidence}).model_dump(mode="json")
    return _redacted(answer) if options.redact else answer


@router.get("/gaps/{gap_id}/similar", response=list[SimilarGapOut], auth=require("read"),
            summary="Gaps that may be the same need in other words")
def similar_gaps(request: HttpRequest, gap_id: Id, options: Query[ReadOptions]):
    """Suggestions to merge, nearest first (never merged without a person: see
    POST /gaps/{id}/merge). Empty until the worker has embedded the gap."""
    rows = [{"gap": _gap_out(other), "similarity": round(1 - distance, 3)}
            for other, distance in selectors.gaps_similar(gap=_gap(request, gap_id))]
    if options.redact:
        for row in rows:
            row["gap"] = _redacted(row["gap"])
    return rows


@router.patch("/gaps/{gap_id}", response=GapOut, auth=require("write"), summary="Rename a gap or change its category")
def change_gap(request: HttpRequest, gap_id: Id, payload: GapChangeIn):
    return services.gap_rename(gap=_gap(request, gap_id), description=payload.description, category=payload.category,
                               actor=Actor.for_api_key(request.auth))


@router.post("/gaps/{gap_id}/transition", response=GapOut, auth=require("write"),
             summary="Confirm, dismiss (won't fix), resolve or reopen a gap")
def transition_gap(request: HttpRequest, gap_id: Id, payload: TransitionIn):
    """409 when the gap's status does not allow it (a resolved gap cannot be resolved)."""
    return services.gap_transition(gap=_gap(request, gap_id), action=payload.action, reason=payload.reason,
                                   actor=Actor.for_api_key(request.auth))


@router.post("/gaps/{gap_id}/merge", response=GapOut, auth=require("write"), summary="Merge a gap into another")
def merge_gap(request: HttpRequest, gap_id: Id, payload: MergeIn):
    return services.gap_merge(source=_gap(request, gap_id), target=_gap(request, payload.into),
                              actor=Actor.for_api_key(request.auth))

