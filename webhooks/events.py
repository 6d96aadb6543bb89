"""The events Mnemo sends to webhook endpoints, and the envelope every payload has.

Pure: no Django. An app announces one of these through `webhooks.services.webhooks_emit`;
a name missing here is a programming error, refused there."""

from __future__ import annotations

from datetime import datetime
from typing import Any

EVENTS: dict[str, str] = {
    "review.decided": "A review item was decided (approved, edited, merged, kept both or rejected).",
    "memory.activated": "A memory became active: approved, auto-approved by the trust policy, edited, or kept "
                        "beside the memory it contradicted.",
    "entity.erased": "An entity was erased. The data holds its id and the receipt's counts, never what was erased.",
    "gap.todo_created": "A capability gap became a TODO.",
    "gap.resolved": "A capability gap was resolved.",
    "webhook.ping": "A test event sent from the dashboard or POST /webhooks/{id}/ping.",
}
ALL = "*"  # an endpoint subscribed to every event


def envelope(*, event: str, event_id: str, occurred_at: datetime, workspace: str, data: dict[str, Any]) -> dict:
    """The payload of every event: the same five keys, the event's own fields in `data`."""
    return {"event": event, "event_id": event_id, "occurred_at": occurred_at.isoformat(), "workspace": workspace,
            "data": data}
