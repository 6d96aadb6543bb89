from datetime import datetime
from typing import Literal

from ninja import Schema
from pydantic import ConfigDict, Field

from core.input_types import AwareTimestamp, Id
from entities.kinds import PREDICATES, all_kinds

# The registries as closed sets, so the schema lists what the services accept.
KindName = Literal[tuple(all_kinds())]
PredicateName = Literal[tuple(PREDICATES)]

from core.safe_text import SafeStr


class EntityIn(Schema):
    model_config = ConfigDict(extra="forbid")
    kind: KindName
    name: SafeStr = Field(min_length=1, max_length=300)
    aliases: list[SafeStr] = Field(default_factory=list, max_length=50)
    description: SafeStr = Field("", max_length=5000)


class EntityPatch(Schema):
    model_config = ConfigDict(extra="forbid")
    name: SafeStr | None = Field(None, min_length=1, max_length=300)
    aliases: list[SafeStr] | None = Field(None, max_length=50)
    description: SafeStr | None = Field(None, max_length=5000)


class IdentityOut(Schema):
    id: int
    entity_id: int
    channel: str
    channel_id: str
    display_name: str
    confidence: str
    verified_at: datetime | None
    created_at: datetime


class EntityOut(Schema):
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


class EntityPage(Schema):
    count: int
    items: list[EntityOut]


class EntityFilter(Schema):
    q: str | None = Field(None, max_length=200, description="Name or alias; tolerant of typos")
    kind: KindName | None = None
    status: Literal["candidate", "active", "superseded", "invalid"] | None = None
    include_merged: bool = False


class ProfileValueOut(Schema):
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


class IdentityIn(Schema):
    model_config = ConfigDict(extra="forbid")
    channel: SafeStr = Field(min_length=1, max_length=40, pattern=r"^[A-Za-z0-9][A-Za-z0-9_.-]*$")
    channel_id: SafeStr = Field(min_length=1, max_length=255)
    display_name: SafeStr = Field("", max_length=300)
    confidence: Literal["confirmed", "suggested", "inferred"] = "confirmed"


class ProfileIn(Schema):
    model_config = ConfigDict(extra="forbid")
    key: SafeStr = Field(min_length=1, max_length=80)
    value: SafeStr = Field(min_length=1, max_length=5000)
    confidence: float = Field(1.0, ge=0, le=1)


class RelationshipIn(Schema):
    model_config = ConfigDict(extra="forbid")
    subject: Id
    predicate: PredicateName
    object: Id
    valid_from: AwareTimestamp | None = None
    valid_to: AwareTimestamp | None = None
    confidence: float = Field(1.0, ge=0, le=1)


class EntityRefOut(Schema):
    id: int
    name: str
    kind: str


class RelationshipOut(Schema):
    id: int
    subject: EntityRefOut
    predicate: str
    object: EntityRefOut
    status: str
    confidence: float
    valid_from: datetime | None
    valid_to: datetime | None
    supersedes_id: int | None
    evidence_id: int | None
    quote: str
    source: str
    created_at: datetime


class RelationshipFilter(Schema):
    as_of: AwareTimestamp | None = Field(None, description="Only what was true at this time (valid time)")
    known_at: AwareTimestamp | None = Field(None, description="Only what had been learned by this time")
    include_candidates: bool = False


class MergeIn(Schema):
    model_config = ConfigDict(extra="forbid")
    into: Id = Field(description="The entity that absorbs this one")


class MergeOut(Schema):
    id: int
    source_id: int
    target_id: int
    moved: dict[str, list[int]]
    merged_at: datetime
    split_at: datetime | None


class SuggestionOut(Schema):
    id: int
    identity: IdentityOut
    entity: EntityRefOut
    score: float
    reasons: list[str]
    status: str
    created_at: datetime


class SuggestionPage(Schema):
    count: int
    items: list[SuggestionOut]


class SuggestionFilter(Schema):
    status: Literal["pending", "accepted", "rejected"] | None = "pending"


class ErasureOut(Schema):
    erased: bool
    receipt: dict[str, int]


class KindOut(Schema):
    name: str
    description: str
    who: bool


class PredicateOut(Schema):
    name: str
    description: str
    functional: bool
