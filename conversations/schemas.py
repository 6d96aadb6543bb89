import json
from datetime import datetime
from typing import Annotated, Any, Literal
from uuid import UUID

from django.conf import settings
from django.core.exceptions import ObjectDoesNotExist
from ninja import Schema
from pydantic import ConfigDict, Field, field_validator

from core.input_types import Id, Timestamp
from core.privacy.guard import first_secret
from core.safe_text import SafeContent, SafeJson, SafeStr


class InteractionIn(Schema):
    """One message an agent heard or said."""

    model_config = ConfigDict(extra="forbid")

    external_id: SafeStr | None = Field(None, min_length=1, max_length=255, description="Idempotency key, unique per workspace")
    channel: SafeStr = Field(min_length=1, max_length=40, pattern=r"^[a-z0-9][a-z0-9_.-]*$", description="matrix, email, slack, cli, …")
    channel_id: SafeStr = Field(min_length=1, max_length=255, description="The sender's handle in that channel")
    sender_name: SafeStr = Field("", max_length=300)
    sender_kind: Literal["person", "agent", "service", "organisation"] = "person"
    thread: SafeStr = Field("", max_length=255, description="The client's conversation key")
    direction: Literal["inbound", "outbound", "system"] = "inbound"
    content: SafeContent = Field(min_length=1)
    occurred_at: Timestamp | None = Field(None, description="When it happened; defaults to now; without a zone, UTC")
    metadata: SafeJson = Field(default_factory=dict)

    @field_validator("channel", mode="before")
    @classmethod
    def _lower_channel(cls, value):
        # A secret is judged as sent: lowercasing must not disguise one (SafeStr then refuses it).
        return value.strip().lower() if isinstance(value, str) and not first_secret(value) else value

    @field_validator("channel_id", "sender_name", "thread", mode="before")
    @classmethod
    def _strip(cls, value):
        return value.strip() if isinstance(value, str) else value

    @field_validator("content")
    @classmethod
    def _content_size(cls, value: str) -> str:
        if not value.strip():
            raise ValueError("content is empty")
        limit = settings.MNEMO_MAX_CONTENT_CHARS
        if len(value) > limit:
            raise ValueError(f"content has {len(value)} characters; the limit is {limit}")
        return value

    @field_validator("metadata")
    @classmethod
    def _metadata_size(cls, value: dict) -> dict:
        size = len(json.dumps(value, default=str).encode())
        if size > settings.MNEMO_MAX_METADATA_BYTES:
            raise ValueError(f"metadata is {size} bytes as JSON; the limit is {settings.MNEMO_MAX_METADATA_BYTES}")
        return value


class InteractionBatchIn(Schema):
    items: list[Any] = Field(min_length=1, max_length=1000, description="Up to 1,000 interactions, logged in order")


class ItemErrorOut(Schema):
    code: str
    message: str
    field: str | None = None
    rule: str | None = None
    errors: list[dict] | None = None


class InteractionResultOut(Schema):
    index: int
    id: int | None
    external_id: str | None
    status: Literal["created", "duplicate", "rejected"]
    conversation_id: int | None = None
    entity_id: int | None = None
    private_filtered: bool = False
    error: ItemErrorOut | None = None


class InteractionBatchOut(Schema):
    created: int
    duplicate: int
    rejected: int
    results: list[InteractionResultOut]


class InteractionOut(Schema):
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
    metadata: dict
    occurred_at: datetime
    created_at: datetime
    processed_at: datetime | None = Field(None, description="When background processing (embedding) finished")

    @staticmethod
    def resolve_processed_at(obj) -> datetime | None:
        if isinstance(obj, dict):  # an answer already serialised (then redacted)
            return obj.get("processed_at")
        try:
            return obj.index.processed_at
        except ObjectDoesNotExist:
            return None


class InteractionPage(Schema):
    count: int
    items: list[InteractionOut]


class InteractionFilter(Schema):
    entity: Id | None = None
    channel: str | None = None
    conversation: Id | None = None
    since: Timestamp | None = None
    until: Timestamp | None = None
    q: str | None = Field(None, max_length=500, description="Full-text search (web search syntax)")
    redact: bool = False


class SummaryOut(Schema):
    id: int
    conversation_id: int
    text: str
    source_first_id: int
    source_last_id: int
    source_count: int
    tone: dict
    pending_actions: list[dict]
    supersedes_id: int | None
    made_by: str
    created_at: datetime


class ConversationOut(Schema):
    id: int
    entity_id: int
    entity_name: str
    channel: str
    channel_id: str
    thread: str
    topic: str
    status: str
    status_reason: str
    interaction_count: int
    first_interaction_at: datetime | None
    last_interaction_at: datetime | None
    current_summary: SummaryOut | None

    @staticmethod
    def resolve_entity_name(obj) -> str:
        return obj["entity_name"] if isinstance(obj, dict) else obj.entity.name


class ConversationFilter(Schema):
    channel: str | None = None
    status: Literal["active", "idle", "closed"] | None = None
    entity: Id | None = None
    redact: bool = False


class ReadOptions(Schema):
    channel: str | None = Field(None, description="Only answer if the conversation is on this channel")
    redact: bool = False


class ContextOut(Schema):
    conversation: ConversationOut
    summary: SummaryOut | None
    recent: list[InteractionOut]


class ConversationPage(Schema):
    count: int
    items: list[ConversationOut]


class RebuildIn(Schema):
    # A layer's name is lower-case words: nothing else is echoed back in an error.
    layers: list[Annotated[str, Field(max_length=40, pattern=r"^[a-z][a-z_]*$")]] | None = Field(
        None, min_length=1, max_length=20,
        description="The layers to rebuild, e.g. memories (default: every layer that can be: interactions, entities, "
                    "memories, concepts, gaps).")


class RebuildOut(Schema):
    id: UUID
    layers: list[str]
    status: str
    phase: str
    total: int = Field(description="Interactions to read again.")
    done: int
    report: dict = Field(description="Rows forgotten per layer; the error if it failed.")
    created_at: datetime
    finished_at: datetime | None
