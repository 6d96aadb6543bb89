from datetime import datetime
from typing import Literal

from ninja import Schema
from pydantic import ConfigDict, Field

from core.input_types import Hours, Id
from core.safe_text import SafeContent, SafeStr

# Every layer's review kinds (review.registry; tests/review/test_api.py checks they agree).
KindName = Literal["memory", "conflict", "graduation", "low_effectiveness", "entity", "relationship", "profile_value",
                   "identity_link", "gap", "duplicate"]
StatusName = Literal["pending", "approved", "rejected", "withdrawn"]


class CandidateFilter(Schema):
    model_config = ConfigDict(extra="forbid")
    status: StatusName = "pending"
    kind: KindName | None = None
    type: str | None = Field(None, max_length=60, description="memory type, entity kind, predicate, profile key…")
    rule: str | None = Field(None, max_length=120)
    min_confidence: float | None = Field(None, ge=0, le=1)
    max_confidence: float | None = Field(None, ge=0, le=1)
    entity: Id | None = None
    source_interaction: Id | None = None
    older_than_hours: Hours | None = Field(None, description="Only items waiting at least this long.")
    newer_than_hours: Hours | None = Field(None, description="Only items opened within this many hours.")


class ProposerOut(Schema):
    key_id: int
    key_name: str
    key_prefix: str
    agent_id: int | None = Field(description="The agent entity the key is bound to, if any")
    agent: str | None
    label: str = Field(description='In words: "triage-bot (key ingest, mn_ab12…)"')


class CandidateOut(Schema):
    id: int
    kind: str
    target_id: int
    type: str
    text: str
    proposal: dict
    source_interaction_id: int | None
    span: list[int] | None
    entity_id: int | None
    rule: str
    prompt_version: str
    confidence: float
    status: str
    decision: str
    result: dict
    decided_by: str
    decided_at: datetime | None
    note: str
    created_at: datetime
    proposed_by: ProposerOut | None = Field(
        description="The API key (and its agent) whose call proposed the item or logged its source message")


class ClaimFilter(Schema):
    """Claims (pending by default) with a facet that matches every facet filter given."""

    model_config = ConfigDict(extra="forbid")
    status: Literal["pending", "decided"] = "pending"
    kind: KindName | None = None
    type: str | None = Field(None, max_length=60)
    rule: str | None = Field(None, max_length=120)
    min_confidence: float | None = Field(None, ge=0, le=1)
    max_confidence: float | None = Field(None, ge=0, le=1)
    entity: Id | None = None
    source_interaction: Id | None = None
    older_than_hours: Hours | None = None
    newer_than_hours: Hours | None = None


class CandidatePage(Schema):
    count: int
    items: list[CandidateOut]


class PromoteIn(Schema):
    """Approve; with `changes` the target is edited first (edit-then-approve); with
    `merge_into` it is folded into that existing item of its kind instead."""

    model_config = ConfigDict(extra="forbid")
    note: SafeStr = Field("", max_length=2000)
    changes: dict[str, SafeContent] | None = Field(None, description="Fields to change before approving (the kind says which).")
    merge_into: Id | None = Field(None, description="Id of an existing memory or entity to merge this one into.")


class RejectIn(Schema):
    model_config = ConfigDict(extra="forbid")
    note: SafeStr = Field("", max_length=2000)


class BulkIn(Schema):
    model_config = ConfigDict(extra="forbid")
    ids: list[Id] = Field(min_length=1, max_length=1000)
    note: SafeStr = Field("", max_length=2000)


class ClaimOut(Schema):
    id: int
    source_interaction_id: int | None
    span: list[int] | None
    quote: str
    label: str
    status: str
    decided_by: str
    decided_at: datetime | None
    note: str
    created_at: datetime
    facets: list[CandidateOut]


class ClaimPage(Schema):
    count: int
    items: list[ClaimOut]


class ClaimDecideIn(Schema):
    """Decide every pending facet of the claim. Facets named in `exclude` (unticked) take
    the other decision: approving with a facet excluded rejects that facet. `edits` edit
    facets being approved first ({facet id: {field: value}}, the fields its kind allows)."""

    model_config = ConfigDict(extra="forbid")
    note: SafeStr = Field("", max_length=2000)
    exclude: list[Id] = Field(default_factory=list, max_length=100)
    edits: dict[Id, dict[str, SafeContent]] = Field(default_factory=dict, max_length=100)


class FacetProblemOut(Schema):
    id: int
    kind: str
    message: str


class ClaimDecisionOut(Schema):
    claim: ClaimOut
    decided: list[CandidateOut]
    gone: list[FacetProblemOut]


class SkippedOut(Schema):
    id: int
    code: str
    message: str


class BulkOut(Schema):
    decided: list[CandidateOut]
    skipped: list[SkippedOut]


class RuleStatsOut(Schema):
    rule: str
    prompt_version: str
    decisions: int
    accepted: int
    rejected: int
    edited: int
    precision: float | None
    low: bool
    series: list[tuple[str, float, int]]


class StatsOut(Schema):
    days: int
    pending: int
    oldest_hours: float | None
    median_age_hours: float | None
    by_kind: dict[str, int]
    auto_approved: int
    human_approved: int
    rejected: int
    auto_share: float | None
    rules: list[RuleStatsOut]
