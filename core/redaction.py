"""Redaction on read (`?redact=true`): masks emails, phone numbers, IPs and keys in the
text fields of an API answer, after it has been serialised."""

from typing import Any

from core import privacy

# People's names are text too: a name can be an email address or a phone number.
# A recall item's `speaker` falls back to the sender's channel id (an email address).
TEXT_FIELDS = {"content", "text", "sender_name", "entity_name", "speaker", "name", "channel_id", "thread", "metadata",
               "topic", "status_reason"}


def redact_all(value: Any) -> Any:
    """Redact every string in a JSON-like value (webhook payloads: all of it leaves Mnemo)."""
    if isinstance(value, str):
        return privacy.redact(value)
    if isinstance(value, list):
        return [redact_all(v) for v in value]
    if isinstance(value, dict):
        return {k: redact_all(v) for k, v in value.items()}
    return value


def redact_answer(value: Any) -> Any:
    """Redact the known text fields anywhere in a JSON-like answer."""
    if isinstance(value, list):
        return [redact_answer(v) for v in value]
    if isinstance(value, dict):
        return {k: (redact_all(v) if k in TEXT_FIELDS else redact_answer(v)) for k, v in value.items()}
    return value
