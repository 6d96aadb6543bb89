"""Decision memory over the API (seed 003): record a decision and see how similar ones
went, add deliberation, record the choice made, review the outcome once, and read the
calibration report."""

from datetime import datetime
from typing import Literal

from django.http import HttpRequest
from ninja import Query, Router, Schema, Status
from ninja.pagination import paginate
from pydantic import ConfigDict, Field

from core.auth import require
from core.errors import ApiError
from core.input_types import Id
from core.providers import ProviderError
from core.safe_text import SafeStr
from core.services import Actor
from entities import decisions
from entities.models import DecisionRecord

router = Router(tags=["decisions"])


# --- schemas --------------------------------------------------------------------------------------

class DecisionIn(Schema):
    model_config = ConfigDict(extra="forbid")
    description: SafeStr = Field(min_length=1, max_length=5000)
    options: list[SafeStr] = Field(default_factory=list, max_length=20)
    chosen: SafeStr = Field("", max_length=5000)
    confidence: float = Field(ge=0, le=1, description="How sure the agent is that this choice will work out")


class ThoughtIn(Schema):
    model_config = ConfigDict(extra="forbid")
    text: SafeStr = Field(min_length=1, max_length=10000)


class DecisionOutcomeIn(Schema):
    model_config = ConfigDict(extra="forbid")
    outcome: Literal["success", "partial", "failure"]
    result: SafeStr = Field("", max_length=10000, description="What happened")


class DecisionPatch(Schema):
    model_config = ConfigDict(extra="forbid")
    chosen: SafeStr = Field(min_length=1, max_length=5000, description="The option chosen after deliberation")
    confidence: float | None = Field(None, ge=0, le=1, description="The confidence in it, when that changed")


class DecisionFilter(Schema):
    outcome: Literal["success", "partial", "failure", "pending"] | None = None


class CalibrationFilter(Schema):
    bins: int = Field(5, ge=1, le=20)


class DecisionOut(Schema):
    id: int = Field(alias="pk", description="The decision entity's id")
    description: str
    options: list[str]
    chosen: str
    confidence: float = Field(alias="stated_confidence")
    outcome: Literal["success", "partial", "failure"] | None = Field(description="null until the outcome is reviewed")
    outcome_result: str
    outcome_at: datetime | None
    created_at: datetime

    @staticmethod
    def resolve_outcome(obj: DecisionRecord) -> str | None:
        return obj.outcome or None


class ThoughtOut(Schema):
    id: int
    decision_id: int
    text: str
    created_at: datetime


class DecisionDetailOut(DecisionOut):
    thoughts: list[ThoughtOut]


class SimilarDecisionOut(DecisionOut):
    similarity: float = Field(description="Cosine similarity of the descriptions, 1 = same meaning")


class DecisionRecordedOut(Schema):
    decision: DecisionOut
    similar: list[SimilarDecisionOut]


class CalibrationBinOut(Schema):
    model_config = ConfigDict(populate_by_name=True)
    from_: float = Field(alias="from")
    to: float
    count: int
    mean_confidence: float | None
    success_rate: float | None = Field(description="Mean outcome: success 1, partial 0.5, failure 0")


class CalibrationOut(Schema):
    count: int
    brier: float | None = Field(description="Mean squared error of confidence against outcome; 0 is perfect")
    bins: list[CalibrationBinOut]
    overconfidence: float | None = Field(description="Mean confidence minus mean outcome; above 0 is overconfident")


# --- endpoints ------------------------------------------------------------------------------------

def _actor(request) -> Actor:
    return Actor.for_api_key(request.auth)


def _decision(request, decision_id: int) -> DecisionRecord:
    return decisions.decision_get(workspace=request.workspace, decision_id=decision_id)


@router.post("/decisions", response={201: DecisionRecordedOut}, auth=require("write"),
             summary="Record a decision; answers how similar past decisions turned out")
def record_decision(request: HttpRequest, payload: DecisionIn):
    """Creates a `decision` entity. `similar` holds the workspace's five nearest earlier
    decisions by meaning, with their outcomes (null when not reviewed yet)."""
    try:
        record = decisions.decision_record(workspace=request.workspace, actor=_actor(request), **payload.model_dump())
    except ProviderError as exc:
        raise ApiError("The embedding model is unavailable; nothing was recorded.", status=503,
                       code="embedder_unavailable", details={"retryable": exc.retryable}) from exc
    return Status(201, {"decision": record, "similar": decisions.decision_similar(decision=record)})


@router.get("/decisions", response=list[DecisionOut], auth=require("read"), summary="List decisions, newest first")
@paginate
def list_decisions(request: HttpRequest, filters: Query[DecisionFilter]):
    return decisions.decision_list(workspace=request.workspace, outcome=filters.outcome)


# Declared before /decisions/{decision_id}, which would otherwise capture "calibration".
@router.get("/decisions/calibration", response=CalibrationOut, by_alias=True, auth=require("read"),
            summary="Stated confidence against reviewed outcomes")
def get_calibration(request: HttpRequest, filters: Query[CalibrationFilter]):
    return decisions.decision_calibration(workspace=request.workspace, bins=filters.bins)


@router.get("/decisions/{decision_id}", response=DecisionDetailOut, auth=require("read"),
            summary="One decision with its deliberation")
def get_decision(request: HttpRequest, decision_id: Id):
    return _decision(request, decision_id)


@router.patch("/decisions/{decision_id}", response=DecisionOut, auth=require("write"),
              summary="Record the choice made after deliberation (409 once the outcome is reviewed)")
def choose(request: HttpRequest, decision_id: Id, payload: DecisionPatch):
    """When the decision lists options, the choice is one of them (422 otherwise)."""
    return decisions.decision_choose(decision=_decision(request, decision_id), actor=_actor(request),
                                     **payload.model_dump())


@router.post("/decisions/{decision_id}/thoughts", response={201: ThoughtOut}, auth=require("write"),
             summary="Append a thought to the deliberation")
def add_thought(request: HttpRequest, decision_id: Id, payload: ThoughtIn):
    thought = decisions.decision_add_thought(decision=_decision(request, decision_id), actor=_actor(request),
                                             text=payload.text)
    return Status(201, thought)


@router.post("/decisions/{decision_id}/outcome", response=DecisionOut, auth=require("write"),
             summary="Review how the decision turned out (once; 409 after)")
def record_outcome(request: HttpRequest, decision_id: Id, payload: DecisionOutcomeIn):
    return decisions.decision_record_outcome(decision=_decision(request, decision_id), actor=_actor(request),
                                             **payload.model_dump())
