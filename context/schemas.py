import json
from datetime import datetime
from typing import Literal
from uuid import UUID

from ninja import Schema
from pydantic import ConfigDict, Field, field_validator

from context.services import RECALL_TYPES
from core.input_types import AwareTimestamp, Id

# A filter names a few keys ({"run_id": "…"}); a bigger one is a mistake, not a query.
METADATA_FILTER_BYTES = 2048
RecallType = Literal[RECALL_TYPES]  # the kinds context.services accepts, listed in the schema

from core.safe_text import SafeJson, SafeStr


class RecallIn(Schema):
    model_config = ConfigDict(extra="forbid")
    query: SafeStr = Field(min_length=1, max_length=2000)
    types: list[RecallType] | None = Field(None, max_length=10,
                                           description="memory types and/or interaction, summary, entity, relationship; all when omitted")
    entity: Id | None = None
    conversation: Id | None = None
    channel: SafeStr | None = Field(None, max_length=40)
    agent: Id | None = Field(None, description="Only what the API keys bound to this agent entity logged, "
                                               "and what was derived from it")
    metadata: SafeJson | None = Field(None, description='Only messages whose metadata contains this JSON object '
                                                        '(e.g. {"run_id": "r-42"}), and what was derived from them')
    limit: int = Field(10, ge=1, le=100)
    min_confidence: float | None = Field(None, ge=0, le=1)
    include_candidates: bool = False
    include_archived: bool = Field(False, description="also memories archived by decay (restorable; "
                                                      "never those archived as duplicates)")
    recency_weight: float | None = Field(None, ge=0, le=10)
    as_of: AwareTimestamp | None = None
    redact: bool = False

    @field_validator("metadata")
    @classmethod
    def _metadata_small(cls, value: dict | None) -> dict | None:
        if value is not None and len(json.dumps(value, default=str).encode()) > METADATA_FILTER_BYTES:
            raise ValueError(f"the metadata filter is over {METADATA_FILTER_BYTES} bytes as JSON")
        return value


class ContextIn(RecallIn):
    budget_tokens: int = Field(2000, ge=100, le=32_000, description="100–32,000 (context.services MIN_BUDGET, MAX_BUDGET)")
    budgets: dict[str, float | int] | None = Field(None, description="per section: a share (0.25) or tokens (300)")
    session: SafeStr | None = Field(None, max_length=200, description="include this session's working memory")


class SourceOut(Schema):
    interaction_id: int
    external_id: str | None


class ViaOut(Schema):
    memory_id: int
    text: str
    occurred_at: datetime | None


class ReachedOut(Schema):
    kind: Literal["interaction", "relationship"]
    id: int


class ItemOut(Schema):
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
    via: ViaOut | None = Field(None, description="a pattern served in place of this source of it; "
                                                 "`sources` are then that source's interactions")
    reached: ReachedOut | None = Field(None, description="an interaction a second round joined: the result it "
                                                         "was reached from — the interaction it is next to, or the "
                                                         "relationship whose end it is about; its `hop` credit is a "
                                                         "share of that result's score")


class FollowedOut(Schema):
    entity_id: int
    entity_name: str | None = Field(description="its name now (masked with `redact`); null if it no longer exists")
    reason: Literal["bridge"] = Field(description='"bridge": the query named nobody but referred to a person, and '
                                                  'its best result was about this one entity; every result was '
                                                  'scored as if the query had named it (its "entity" credit)')


class RecallOut(Schema):
    results: list[ItemOut]
    followed: FollowedOut | None = Field(None, description="the entity the ranking followed although the query "
                                                           "named nobody; null when it followed none")


class DroppedOut(ItemOut):
    reason: str = Field(description='why it is not in the pack: "budget" (did not fit), "duplicate" (served '
                                    'once already), "covered" (items in the pack already state every message '
                                    'it cites) or "empty"')


class SectionOut(Schema):
    name: str
    budget_tokens: int
    inflow_tokens: int
    tokens_used: int
    items: list[ItemOut]
    dropped: list[DroppedOut]
    dropped_unlisted: int = Field(0, description="dropped items not listed (MNEMO_PACK_DROPPED_LISTED per section)")


class WarningOut(Schema):
    kind: Literal["censor", "gap"] = Field("censor", description="a censor memory, or an open capability gap near the query")
    id: int
    text: str
    score: float


class PackOut(Schema):
    pack_id: UUID
    query: str
    as_of: datetime | None
    created_at: datetime
    budget_tokens: int
    tokens_used: int
    sections: list[SectionOut]
    warnings: list[WarningOut]
    text: str
    followed: FollowedOut | None = Field(None, description="the entity the ranking followed although the query "
                                                           "named nobody; null when it followed none")
