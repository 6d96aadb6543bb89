from datetime import datetime
from typing import Literal
from uuid import UUID

from ninja import Schema
from pydantic import ConfigDict, Field

from core.safe_text import SafeStr
from webhooks import events, policy

EventName = Literal[tuple([*events.EVENTS, events.ALL])]
Url = SafeStr  # plus the pattern and length below; the service says what else is wrong (422)
_URL = {"min_length": 8, "max_length": policy.MAX_URL_LENGTH, "pattern": policy.URL_PATTERN,
        "description": "http:// or https://, with no user name or password in it. Private addresses are allowed."}
_EVENTS = {"min_length": 1, "max_length": len(events.EVENTS) + 1,
           "description": "Event names from the catalogue (README, \"Webhooks\"), or [\"*\"] for every event."}


class WebhookIn(Schema):
    model_config = ConfigDict(extra="forbid")
    url: Url = Field(..., **_URL)
    events: list[EventName] = Field(..., **_EVENTS)
    description: SafeStr = Field("", max_length=500)
    active: bool = True


class WebhookPatchIn(Schema):
    model_config = ConfigDict(extra="forbid")
    url: Url | None = Field(None, **_URL)
    events: list[EventName] | None = Field(None, **_EVENTS)
    description: SafeStr | None = Field(None, max_length=500)
    active: bool | None = None


class WebhookOut(Schema):
    id: int
    url: str
    events: list[str]
    active: bool
    description: str
    secret_hint: str = Field(description="The secret's last characters; the whole secret is shown only once.")
    created_at: datetime
    created_by: str | None


class WebhookSecretOut(WebhookOut):
    secret: str = Field(description="The signing secret. Shown only in this answer; store it now.")


class DeliveryOut(Schema):
    id: int
    webhook_id: int
    event: str
    event_id: UUID
    status: str
    attempts: int
    last_status_code: int | None
    last_error: str
    next_attempt_at: datetime
    delivered_at: datetime | None
    created_at: datetime
    payload: dict


class WebhookPage(Schema):
    count: int
    items: list[WebhookOut]


class DeliveryPage(Schema):
    count: int
    items: list[DeliveryOut]
