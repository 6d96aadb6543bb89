"""Signing a delivery (README, "Webhooks"): HMAC-SHA256 with the endpoint's secret over
`<timestamp>.<body>`, sent as `X-Mnemo-Signature: sha256=<hex>`. The timestamp is signed
so a receiver can refuse an old request replayed by someone who recorded it.

Pure: no Django; the receiver's side is the same five lines (tests/webhooks/receiver.py)."""

from __future__ import annotations

import hashlib
import hmac
import json
from typing import Any


def body_of(payload: dict[str, Any]) -> bytes:
    """The bytes sent: compact JSON, keys sorted, so every attempt sends the same body."""
    return json.dumps(payload, separators=(",", ":"), sort_keys=True, ensure_ascii=False).encode()


def signature(*, secret: str, timestamp: int, body: bytes) -> str:
    mac = hmac.new(secret.encode(), f"{timestamp}.".encode() + body, hashlib.sha256)
    return f"sha256={mac.hexdigest()}"


def headers(*, secret: str, event: str, event_id: str, timestamp: int, body: bytes) -> dict[str, str]:
    return {
        "Content-Type": "application/json",
        "User-Agent": "Mnemo-Webhooks/1",
        "X-Mnemo-Event": event,
        "X-Mnemo-Delivery": event_id,
        "X-Mnemo-Timestamp": str(timestamp),
        "X-Mnemo-Signature": signature(secret=secret, timestamp=timestamp, body=body),
    }


def verify(*, secret: str, timestamp: str, body: bytes, signature_header: str) -> bool:
    return hmac.compare_digest(signature(secret=secret, timestamp=int(timestamp), body=body), signature_header)
