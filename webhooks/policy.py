"""What a delivery attempt's answer means, and which URLs an endpoint may have.

Pure: no Django, tested in microseconds (tests/webhooks/test_policy.py).

Retrying (README, "Webhooks"): a 2xx is delivered. A connection error, a timeout, 408,
429 and 5xx may pass if tried again later: retried with exponential backoff and full
jitter (so endpoints that failed together are not all retried in the same second),
honouring a Retry-After the receiver sent, until the attempts run out. Any other answer
(a 3xx we do not follow, 4xx) will not change by waiting: failed at once."""

from __future__ import annotations

import random
from dataclasses import dataclass
from datetime import datetime, timezone
from email.utils import parsedate_to_datetime
from urllib.parse import urlsplit

MAX_URL_LENGTH = 2000
URL_PATTERN = r"^[hH][tT][tT][pP][sS]?://"  # the schema's own check; url_problem says the rest
RETRY_AFTER_CAP = 3600.0  # a receiver cannot park a delivery for longer than an hour per attempt


@dataclass(frozen=True)
class Verdict:
    outcome: str  # "delivered", "retry" or "failed"
    delay: float = 0.0  # seconds before the next attempt, for "retry"


def url_problem(url: str) -> str | None:
    """Why this URL cannot be an endpoint, or None. Private addresses are allowed: Mnemo
    is self-hosted, and its receivers are often on the same network (README)."""
    if len(url) > MAX_URL_LENGTH:
        return f"The URL is longer than {MAX_URL_LENGTH} characters."
    try:
        parts = urlsplit(url)
        parts.port  # noqa: B018 - raises ValueError for a port that is not a number in range
    except ValueError:
        return "The URL is not valid."
    if parts.scheme.lower() not in ("http", "https"):
        return "The URL must start with http:// or https://."
    if not parts.hostname:
        return "The URL needs a host name."
    if parts.username is not None or parts.password is not None:
        return "The URL must not hold a user name or password; the signature authenticates Mnemo."
    if any(c.isspace() or ord(c) < 32 or ord(c) == 127 for c in url):
        return "The URL must not contain spaces or control characters."
    return None


def retry_after_seconds(value: str | None, now: datetime) -> float | None:
    """Retry-After as seconds (RFC 9110: a number of seconds or an HTTP date), or None."""
    if not value:
        return None
    value = value.strip()
    if value.isdigit():
        return min(float(value), RETRY_AFTER_CAP)
    try:
        when = parsedate_to_datetime(value)
    except (TypeError, ValueError, IndexError):
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=timezone.utc)
    return min(max(0.0, (when - now).total_seconds()), RETRY_AFTER_CAP)


def backoff(attempt: int, *, base: float, cap: float, rng: random.Random | None = None) -> float:
    """Seconds before attempt `attempt + 1`: base·2^(attempt-1), capped, with full jitter
    over its upper half (never less than half the step, so the growth stays visible)."""
    step = min(cap, base * 2 ** max(0, attempt - 1))
    return step / 2 + (rng or random).uniform(0, step / 2)


def verdict(*, status_code: int | None, attempt: int, max_attempts: int, retry_after: float | None,
            base: float, cap: float, rng: random.Random | None = None) -> Verdict:
    """`status_code` None means no answer (a connection error or a timeout). `attempt` is
    the number of the attempt just made, from 1."""
    if status_code is not None and 200 <= status_code < 300:
        return Verdict("delivered")
    retryable = status_code is None or status_code in (408, 429) or status_code >= 500
    if not retryable or attempt >= max_attempts:
        return Verdict("failed")
    delay = backoff(attempt, base=base, cap=cap, rng=rng)
    if retry_after is not None:
        delay = max(delay, retry_after)
    return Verdict("retry", delay)
