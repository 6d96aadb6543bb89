"""Request and response models, one per schema component of /api/v1/openapi.json and named
as it is there (`InteractionIn`, `PackOut`, …). The client's tests compare each model with
the live server's schema, so a change on either side fails a test until both agree.

They repeat the server's schemas (conversations/schemas.py, memory/schemas.py, …) on
purpose: this package is installed into agents' environments and cannot import the server
(Django and all); tests/client/test_schema_drift.py keeps the two copies in step.

Requests (`…In`) forbid unknown fields, as the server does, and check types only: the
bounds (lengths, ranges) are the server's to enforce, and its answer (InvalidRequest with
the failing fields) is the one place they are stated. Responses ignore fields they do not
know, so an older client keeps working against a newer server."""

from __future__ import annotations

from datetime import date, datetime
from typing import Any, Literal
from uuid import UUID

from pydantic import BaseModel, ConfigDict, Field


class _In(BaseModel):
    model_config = ConfigDict(extra="forbid")


class _Out(BaseModel):
    model_config = ConfigDict(extra="ignore")


MemoryType = Literal["identity", "preference", "episodic", "fact", "procedure", "censor"]
Certainty = Literal["verbatim", "extracted", "inferred", "consolidated"]
RecallType = Literal["identity", "preference", "episodic", "fact", "procedure", "censor",
                     "interaction", "summary", "entity", "relationship"]
Outcome = Literal["success", "partial", "failure"]
GapCategory = Literal["integration", "data_access", "feature", "knowledge", "permission", "tool_error", "other"]


# --- errors ------------------------------------------------------------------------------------

class ErrorDetailOut(_Out):
    code: str
    message: str
    details: dict[str, Any]


class ErrorOut(_Out):
    error: ErrorDetailOut


# --- service ----------------------------------------------------------------------------------

class HealthOut(_Out):
    status: str


class WorkspaceOut(_Out):
    id: int
    slug: str
    name: str


class WorkerOut(_Out):
    last_seen_at: datetime | None
    hostname: str | None


class StatusOut(_Out):
    workspace: WorkspaceOut
    pending: dict[str, int]
    idle: bool
    worker: WorkerOut


# --- interactions -----------------------------------------------------------------------------

class InteractionIn(_In):
    """One message an agent heard or said. `external_id` makes logging it idempotent."""

    external_id: str | None = None
    channel: str
    channel_id: str
    sender_name: str = ""
    sender_kind: Literal["person", "agent", "service", "organisation"] = "person"
    thread: str = ""
    direction: Literal["inbound", "outbound", "system"] = "inbound"
    content: str
    occurred_at: datetime | None = None
    metadata: dict[str, Any] = Field(default_factory=dict)


class InteractionBatchIn(BaseModel):
    # Not closed, as on the server; each item is judged there on its own (Mnemo.log_batch).
    items: list[Any]


class ItemErrorOut(_Out):
    code: str
    message: str
    field: str | None = None
    rule: str | None = None
    errors: list[dict[str, Any]] | None = None


class InteractionResultOut(_Out):
    index: int
    id: int | None
    external_id: str | None
    status: Literal["created", "duplicate", "rejected"]
    conversation_id: int | None = None
    entity_id: int | None = None
    private_filtered: bool = False
    error: ItemErrorOut | None = None


class InteractionBatchOut(_Out):
    created: int
    duplicate: int
    rejected: int
    results: list[InteractionResultOut]


class InteractionOut(_Out):
    id: int
    external_id: str | None
    entity_id: int
    conversation_id: int
    channel: str
    channel_id: str
    sender_name: str
    thread: str
    direction: str
    content: str
    private_filtered: bool
    metadata: dict[str, Any]
    occurred_at: datetime
    created_at: datetime
    processed_at: datetime | None = None


class InteractionPage(_Out):
    count: int
    items: list[InteractionOut]


# --- recall and context packs -----------------------------------------------------------------

class RecallIn(_In):
    query: str
    types: list[RecallType] | None = None
    entity: int | None = None
    conversation: int | None = None
    channel: str | None = None
    agent: int | None = None  # what the API keys bound to this agent entity logged
    metadata: dict[str, Any] | None = None  # messages whose metadata contains this object
    limit: int = 10
    min_confidence: float | None = None
    include_candidates: bool = False
    include_archived: bool = False  # memories the nightly decay archived
    recency_weight: float | None = None
    as_of: datetime | None = None
    redact: bool = False


class ContextIn(RecallIn):
    budget_tokens: int = 2000
    budgets: dict[str, float | int] | None = None
    session: str | None = None


class SourceOut(_Out):
    interaction_id: int
    external_id: str | None


class ViaOut(_Out):
    memory_id: int
    text: str
    occurred_at: datetime | None


class ReachedOut(_Out):
    kind: Literal["interaction", "relationship"]  # the message it is next to, or the relationship whose end it is about
    id: int


class ItemOut(_Out):
    kind: str
    id: int
    text: str
    score: float
    score_breakdown: dict[str, float]
    certainty: str
    confidence: float
    status: str
    type: str
    occurred_at: datetime | None
    speaker: str
    sources: list[SourceOut]
    via: ViaOut | None = None  # a pattern served in place of this source of it
    reached: ReachedOut | None = None  # what a second round reached it from (its `hop` credit)


class FollowedOut(_Out):
    entity_id: int
    entity_name: str | None  # None if the entity no longer exists
    reason: Literal["bridge"]  # the query named nobody; its best result was about this entity


class RecallOut(_Out):
    results: list[ItemOut]
    followed: FollowedOut | None = None  # the entity the ranking followed although the query named nobody


class DroppedOut(ItemOut):
    reason: str


class SectionOut(_Out):
    name: str
    budget_tokens: int
    inflow_tokens: int
    tokens_used: int
    items: list[ItemOut]
    dropped: list[DroppedOut]
    dropped_unlisted: int = 0


class WarningOut(_Out):
    kind: Literal["censor", "gap"] = "censor"
    id: int
    text: str
    score: float


class PackOut(_Out):
    pack_id: UUID
    query: str
    as_of: datetime | None
    created_at: datetime
    budget_tokens: int
    tokens_used: int
    sections: list[SectionOut]
    warnings: list[WarningOut]
    text: str
    followed: FollowedOut | None = None  # as RecallOut.followed


# --- memories, procedures, censors ------------------------------------------------------------

class ProcedureIn(_In):
    name: str
    steps: list[str]
    goals: list[str] = Field(default_factory=list)
    tools: list[str] = Field(default_factory=list)
    notes: list[str] = Field(default_factory=list)
    domain: str = ""


class CensorIn(_In):
    trigger: str
    reason: str = ""
    action: Literal["warn", "block", "absolute"] = "warn"  # absolute: a block with no override
    escalation_threshold: int = 3


class MemoryIn(_In):
    text: str = ""
    type: MemoryType = "fact"
    certainty: Certainty = "verbatim"
    confidence: float = 1.0
    importance: float = 0.5
    entity: int | None = None
    interaction: int | None = None
    quote: str = ""
    attribute: str = ""
    value: str = ""
    polarity: Literal[1, -1] = 1
    occurred_at: datetime | None = None
    procedure: ProcedureIn | None = None
    censor: CensorIn | None = None
    outcome: Literal["success", "partial", "failure"] | None = None  # episodes only: how it turned out


class EvidenceOut(_Out):
    interaction_id: int
    external_id: str | None
    quote: str
    start: int | None
    end: int | None
    occurred_at: datetime


class ProcedureOut(_Out):
    name: str
    domain: str
    goals: list[str]
    steps: list[str]
    tools: list[str]
    notes: list[str]
    activation_count: int
    success_count: int
    failure_count: int
    effectiveness: float
    last_activated_at: datetime | None
    flagged_at: datetime | None


class CensorOut(_Out):
    trigger: str
    reason: str
    action: str
    activation_count: int
    false_positive_count: int
    escalation_threshold: int
    escalated_at: datetime | None
    last_activated_at: datetime | None


class LearnedFromOut(_Out):
    kind: Literal["decision", "procedure", "episode"]
    id: int


class MemoryOut(_Out):
    id: int
    type: str
    certainty: str
    status: str
    archived_reason: str  # "decay" (restorable) or "duplicate"; empty unless archived
    text: str
    confidence: float
    importance: float
    entity_id: int | None
    attribute: str
    value: str
    polarity: int
    source: str
    rule: str
    model: str
    prompt_version: str
    supersedes_id: int | None
    conflicts_with_id: int | None
    duplicate_of_id: int | None
    consolidated_into_id: int | None  # the pattern this memory was consolidated into (issue 19)
    graduated_to_id: int | None
    conversation_id: int | None
    occurred_at: datetime | None
    event_first: date | None
    event_last: date | None
    learned_at: datetime
    reinforcement_count: int
    last_confirmed_at: datetime | None
    access_count: int
    last_accessed_at: datetime | None
    strength: float
    embedded: bool
    updated_at: datetime
    learned_from: LearnedFromOut | None = None  # a censor learned from a failure: its source


class MemoryDetailOut(MemoryOut):
    evidence: list[EvidenceOut]
    procedure: ProcedureOut | None = None
    censor: CensorOut | None = None
    consolidated_from: list[int] = []  # a pattern's source memories


class StoredOut(_Out):
    outcome: Literal["created", "reinforced", "conflict"]
    memory: MemoryDetailOut


class MemoryPage(_Out):
    count: int
    items: list[MemoryOut]


class TaskIn(_In):
    task: str
    limit: int = 5


class BandOut(_Out):
    band: Literal["core", "upper", "lower"]
    items: dict[str, list[str]]


class ProcedureMatchOut(_Out):
    id: int
    name: str
    score: float
    similarity: float
    lexical: float
    effectiveness: float
    activation_count: int
    bands: list[BandOut]


class ActionIn(_In):
    action: str


class CensorMatchOut(_Out):
    id: int
    trigger: str
    reason: str
    action: str
    score: float
    lexical: float
    similarity: float
    activation_count: int
    escalated: bool


class CensorCheckOut(_Out):
    verdict: Literal["allow", "warn", "block"]
    overridable: bool  # false when an absolute censor matched
    matches: list[CensorMatchOut]


# --- working memory and scratchpads -----------------------------------------------------------

class FocusItemIn(_In):
    content: str
    attention: float = 0.5
    key: str = ""
    kind: str = ""
    memory_id: int | None = None


class WorkingMemoryIn(_In):
    items: list[FocusItemIn]
    capacity: int | None = None
    task: str | None = None


class FocusItemOut(_Out):
    key: str
    content: str
    kind: str
    attention: float
    memory_id: int | None
    status: str
    loaded_at: datetime
    evicted_at: datetime | None


class WorkingMemoryOut(_Out):
    session: str
    task: str
    capacity: int
    items: list[FocusItemOut]
    evicted: list[FocusItemOut]
    updated_at: datetime


class ScratchpadOut(_Out):
    """A task's state as stored (any JSON value). Not a schema component: the server writes
    this answer by hand so that `state` is byte for byte what the agent sent."""

    task: str
    version: int
    updated_at: datetime
    state: Any


class CheckpointIn(_In):
    label: str = ""


class CheckpointOut(_Out):
    id: int
    label: str
    version: int
    created_at: datetime


class RestoreIn(_In):
    checkpoint_id: int | None = None
    label: str | None = None


# --- entities and decisions -------------------------------------------------------------------

class EntityOut(_Out):
    id: int
    kind: str
    name: str
    aliases: list[str]
    description: str
    status: str
    confidence: float
    merged_into_id: int | None
    created_at: datetime
    updated_at: datetime


class PagedEntityOut(_Out):
    items: list[EntityOut]
    count: int


class IdentityOut(_Out):
    id: int
    entity_id: int
    channel: str
    channel_id: str
    display_name: str
    confidence: str
    verified_at: datetime | None
    created_at: datetime


class ProfileValueOut(_Out):
    id: int
    entity_id: int
    key: str
    value: str
    confidence: float
    status: str
    supersedes_id: int | None
    evidence_id: int | None
    quote: str
    source: str
    created_at: datetime
    decided_at: datetime | None


class EntityDetailOut(EntityOut):
    identities: list[IdentityOut]
    profile: list[ProfileValueOut]


class DecisionIn(_In):
    description: str
    options: list[str] = Field(default_factory=list)
    chosen: str = ""
    confidence: float


class DecisionOutcomeIn(_In):
    outcome: Outcome
    result: str = ""


class DecisionOut(_Out):
    id: int
    description: str
    options: list[str]
    chosen: str
    confidence: float
    outcome: Outcome | None
    outcome_result: str
    outcome_at: datetime | None
    created_at: datetime


class SimilarDecisionOut(DecisionOut):
    similarity: float


class DecisionRecordedOut(_Out):
    decision: DecisionOut
    similar: list[SimilarDecisionOut]


class ThoughtOut(_Out):
    id: int
    decision_id: int
    text: str
    created_at: datetime


class DecisionDetailOut(DecisionOut):
    thoughts: list[ThoughtOut]


class PagedDecisionOut(_Out):
    items: list[DecisionOut]
    count: int


# --- capability gaps --------------------------------------------------------------------------

class GapIn(_In):
    description: str
    category: GapCategory = "other"
    reason: str = ""
    interaction_id: int | None = None


class GapOut(_Out):
    id: int
    description: str
    category: str
    frequency: int
    status: Literal["detected", "todo_created", "resolved", "wont_fix"]
    confirmed: bool
    regression: bool
    todo_ref: str
    todo_created_at: datetime | None
    reason: str
    entity_id: int | None
    rule: str
    first_seen: datetime
    last_seen: datetime


class GapPage(_Out):
    count: int
    items: list[GapOut]


# --- administration: rebuild from the log, export and import (admin keys) -------------------------

class RebuildIn(BaseModel):
    # The server's RebuildIn does not forbid unknown fields (ninja's default): nor does this.
    layers: list[str] | None = None


class RebuildOut(_Out):
    id: UUID
    layers: list[str]
    status: str
    phase: str
    total: int
    done: int
    report: dict[str, Any]
    created_at: datetime
    finished_at: datetime | None


class ArchiveJobOut(_Out):
    id: UUID
    kind: str
    status: str
    size: int | None
    report: dict[str, Any]
    created_at: datetime
    finished_at: datetime | None


class ExportStartedOut(ArchiveJobOut):
    download_url: str
