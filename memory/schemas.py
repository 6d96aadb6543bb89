from datetime import date, datetime
from typing import Annotated, Literal

from ninja import Schema
from pydantic import ConfigDict, Field

from core.input_types import NON_BLANK, Id, Timestamp
from core.safe_text import CONTENT_GUARD, SafeContent, SafeStr

MemoryTypeName = Literal["identity", "preference", "episodic", "fact", "procedure", "censor"]
CertaintyName = Literal["verbatim", "extracted", "inferred", "consolidated"]
StatusName = Literal["candidate", "active", "superseded", "invalid", "graduated", "archived"]


class ProcedureIn(Schema):
    model_config = ConfigDict(extra="forbid")
    name: SafeContent = Field(min_length=1, max_length=300)
    steps: list[Annotated[str, NON_BLANK, CONTENT_GUARD]] = Field(min_length=1, max_length=50)
    goals: list[SafeContent] = Field(default_factory=list, max_length=50)
    tools: list[SafeContent] = Field(default_factory=list, max_length=50)
    notes: list[SafeContent] = Field(default_factory=list, max_length=50)
    domain: SafeStr = Field("", max_length=100)


class CensorIn(Schema):
    model_config = ConfigDict(extra="forbid")
    trigger: SafeContent = Field(min_length=1, max_length=1000)
    reason: SafeContent = Field("", max_length=2000)
    action: Literal["warn", "block", "absolute"] = Field(
        "warn", description="absolute: blocks without override, never de-escalated (seed 003)")
    escalation_threshold: int = Field(3, ge=1, le=1000)


class MemoryIn(Schema):
    """An agent's "remember this". Certainty defaults to verbatim: the agent was told."""

    model_config = ConfigDict(extra="forbid")
    text: SafeContent = Field("", max_length=4000, description="Optional for procedures and censors (rendered from them).")
    type: MemoryTypeName = "fact"
    certainty: CertaintyName = "verbatim"
    confidence: float = Field(1.0, ge=0, le=1)
    importance: float = Field(0.5, ge=0, le=1)
    entity: Id | None = Field(None, description="The entity the memory is about.")
    interaction: Id | None = Field(None, description="An interaction that is its evidence.")
    quote: SafeStr = Field("", max_length=2000)
    attribute: SafeStr = Field("", max_length=120)
    value: SafeStr = Field("", max_length=300)
    polarity: Literal[1, -1] = 1
    occurred_at: Timestamp | None = Field(None, description="Without a zone, UTC")
    procedure: ProcedureIn | None = None
    censor: CensorIn | None = None
    outcome: Literal["success", "partial", "failure"] | None = Field(
        None, description="Episodes only: how it turned out. A failure proposes a censor; success or failure counts "
                          "a use of the procedure the episode matches.")


class MemoryPatch(Schema):
    model_config = ConfigDict(extra="forbid")
    text: SafeContent | None = Field(None, min_length=1, max_length=4000)
    type: MemoryTypeName | None = None
    confidence: float | None = Field(None, ge=0, le=1)
    importance: float | None = Field(None, ge=0, le=1)
    entity: Id | None = None
    note: SafeStr = Field("", max_length=2000)


class ReasonIn(Schema):
    model_config = ConfigDict(extra="forbid")
    reason: SafeStr = Field("", max_length=2000)


class MemoryFilter(Schema):
    type: MemoryTypeName | None = None
    status: StatusName | None = None
    entity: Id | None = None
    certainty: CertaintyName | None = None
    min_confidence: float | None = Field(None, ge=0, le=1)
    max_confidence: float | None = Field(None, ge=0, le=1)
    text: str | None = Field(None, max_length=500, description="Full-text search (web search syntax).")
    rule: str | None = Field(None, max_length=80)
    interaction: Id | None = None
    redact: bool = False


class EvidenceOut(Schema):
    interaction_id: int
    external_id: str | None
    quote: str
    start: int | None
    end: int | None
    occurred_at: datetime


class ProcedureOut(Schema):
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


class CensorOut(Schema):
    trigger: str
    reason: str
    action: str
    activation_count: int
    false_positive_count: int
    escalation_threshold: int
    escalated_at: datetime | None
    last_activated_at: datetime | None


class LearnedFromOut(Schema):
    kind: Literal["decision", "procedure", "episode"] = Field(description="What failed and taught this censor")
    id: int = Field(description="The decision's id, or the procedure's or episode's memory id")


class MemoryOut(Schema):
    id: int
    type: str
    certainty: str
    status: str
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
    graduated_to_id: int | None
    consolidated_into_id: int | None
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
    archived_reason: str = Field(
        description='why an archived memory is archived: "decay" (restorable) or "duplicate" '
                    "(folded into duplicate_of)")
    embedded: bool
    updated_at: datetime
    learned_from: LearnedFromOut | None = Field(None, description="A censor learned from a failure: its source")


class MemoryDetailOut(MemoryOut):
    evidence: list[EvidenceOut]
    procedure: ProcedureOut | None = None
    censor: CensorOut | None = None
    # A consolidated pattern: the memories it was consolidated from (issue 19 part 1).
    consolidated_from: list[int] = []


class StoredOut(Schema):
    outcome: Literal["created", "reinforced", "conflict"]
    memory: MemoryDetailOut


class MemoryPage(Schema):
    count: int
    items: list[MemoryOut]


class HistoryOut(Schema):
    id: int
    at: datetime
    verb: str
    actor: str
    memory_id: int | None
    data: dict


class GraduationOut(Schema):
    id: int
    memory_id: int
    signal: str
    status: str
    proposal: dict
    entity_id: int | None
    created_at: datetime
    decided_at: datetime | None


class TaskIn(Schema):
    model_config = ConfigDict(extra="forbid")
    task: SafeStr = Field(min_length=1, max_length=2000)
    limit: int = Field(5, ge=1, le=50)


class BandOut(Schema):
    band: Literal["core", "upper", "lower"]
    items: dict[str, list[str]]


class ProcedureMatchOut(Schema):
    id: int
    name: str
    score: float
    similarity: float
    lexical: float
    effectiveness: float
    activation_count: int
    bands: list[BandOut]


class OutcomeIn(Schema):
    model_config = ConfigDict(extra="forbid")
    outcome: Literal["success", "failure"]
    note: SafeStr = Field("", max_length=2000)


class ActionIn(Schema):
    model_config = ConfigDict(extra="forbid")
    action: SafeStr = Field(min_length=1, max_length=2000)


class CensorMatchOut(Schema):
    id: int
    trigger: str
    reason: str
    action: str
    score: float
    lexical: float
    similarity: float
    activation_count: int
    escalated: bool


class CensorCheckOut(Schema):
    verdict: Literal["allow", "warn", "block"]
    overridable: bool = Field(description="false when an absolute censor matched: the block admits no override")
    matches: list[CensorMatchOut]


class FalsePositiveIn(Schema):
    model_config = ConfigDict(extra="forbid")
    note: SafeStr = Field("", max_length=2000)


class FocusItemIn(Schema):
    model_config = ConfigDict(extra="forbid")
    content: SafeContent = Field(min_length=1, max_length=4000)
    attention: float = Field(0.5, ge=0, le=1)
    key: SafeStr = Field("", max_length=200)
    kind: SafeStr = Field("", max_length=40)
    memory_id: Id | None = None


class WorkingMemoryIn(Schema):
    model_config = ConfigDict(extra="forbid")
    items: list[FocusItemIn] = Field(max_length=200)
    capacity: int | None = Field(None, ge=1, le=50)
    task: SafeContent | None = Field(None, max_length=2000)


class FocusItemOut(Schema):
    key: str
    content: str
    kind: str
    attention: float
    memory_id: int | None
    status: str
    loaded_at: datetime
    evicted_at: datetime | None


class WorkingMemoryOut(Schema):
    session: str
    task: str
    capacity: int
    items: list[FocusItemOut]
    evicted: list[FocusItemOut]
    updated_at: datetime


class CheckpointIn(Schema):
    model_config = ConfigDict(extra="forbid")
    label: SafeStr = Field("", max_length=200)


class RestoreIn(Schema):
    model_config = ConfigDict(extra="forbid")
    checkpoint_id: Id | None = None
    label: SafeStr | None = Field(None, max_length=200)


class CheckpointOut(Schema):
    id: int
    label: str
    version: int
    created_at: datetime


class TrustedStateIn(Schema):
    model_config = ConfigDict(extra="forbid")
    value: SafeContent = Field(min_length=1, max_length=4000)
    note: SafeStr = Field("", max_length=2000)


class TrustedStateOut(Schema):
    key: str
    value: str
    version: int
    deleted: bool
    set_by: str
    note: str
    created_at: datetime


class TrustPolicyIn(Schema):
    model_config = ConfigDict(extra="forbid")
    auto_certainties: list[CertaintyName] = Field(max_length=4)
    auto_types: list[MemoryTypeName] = Field(max_length=6)
    min_confidence: float = Field(ge=0, le=1)


class TrustPolicyOut(Schema):
    auto_certainties: list[str]
    auto_types: list[str]
    min_confidence: float


class ConsolidationPolicyIn(Schema):
    model_config = ConfigDict(extra="forbid")
    enabled: bool = True
    source_types: list[Literal["episodic", "preference", "procedure", "fact"]] = Field(max_length=4)
    min_support: int = Field(ge=2, le=100)
    strong_support: int = Field(ge=2, le=1000)
    max_distance: float = Field(gt=0, lt=1)
    window_days: int = Field(ge=1, le=36500)
    max_patterns_per_run: int = Field(ge=1, le=1000)


class ConsolidationPolicyOut(Schema):
    enabled: bool
    source_types: list[str]
    min_support: int
    strong_support: int
    max_distance: float
    window_days: int
    max_patterns_per_run: int


class ConsolidationRunIn(Schema):
    model_config = ConfigDict(extra="forbid")
    conversation_id: Id | None = None
    max_seeds: int = Field(2000, ge=1, le=2000)


class ConsolidationRunOut(Schema):
    seeds: int
    groups: int
    created: int
    reinforced: int
    sources: int
