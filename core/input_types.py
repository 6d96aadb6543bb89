"""Input types every API schema reuses, so that anything the schema accepts PostgreSQL can
store or compare (issue 16: inputs the database refused became 500s).

- Integers: PostgreSQL's bigint holds -2^63 .. 2^63-1; a larger id, offset or count in a
  query made PostgreSQL raise "bigint out of range". `Id`, `Offset` and `BigInt` carry
  the bound in the schema (so clients and the OpenAPI document see it too).
- Timestamps: RFC 3339 allows offsets up to ±23:59, PostgreSQL's timestamptz only up to
  ±15:59. `Timestamp` / `AwareTimestamp` convert every value to UTC before it reaches the
  database: the same instant, an offset PostgreSQL always accepts.
- Request bodies: `body_problem` finds what PostgreSQL text cannot hold (NUL, lone UTF-16
  surrogates) and JSON nested deeper than `MAX_JSON_DEPTH` (Python's json parser and
  PostgreSQL's jsonb both recurse per level). core.middleware applies it to every API
  request before any view runs.

No Django imports: pure functions and pydantic types, tested in tests/core/test_input_types.py.
"""

from __future__ import annotations

import re
from datetime import datetime, timezone
from itertools import accumulate
from typing import Annotated

from pydantic import AfterValidator, AwareDatetime, Field

BIGINT_MAX = 2**63 - 1
BIGINT_MIN = -(2**63)

# A database id: positive and within bigint.
Id = Annotated[int, Field(ge=1, le=BIGINT_MAX)]
# Any integer a query compares or stores in a bigint column.
BigInt = Annotated[int, Field(ge=BIGINT_MIN, le=BIGINT_MAX)]
# A page offset: a slice start PostgreSQL's OFFSET takes as a bigint.
Offset = Annotated[int, Field(ge=0, le=BIGINT_MAX)]
# Hours back from now; a century is far more than any queue waits, and keeps
# `now - timedelta(hours=...)` inside the years datetime can represent.
Hours = Annotated[float, Field(ge=0, le=24 * 366 * 100)]
# Text that must say something (a procedure step): not empty, not only whitespace.
NON_BLANK = Field(min_length=1, pattern=r"\S")


def _in_utc(value: datetime) -> datetime:
    if value.tzinfo is None:  # a timestamp without a zone is UTC (as the API documents)
        return value.replace(tzinfo=timezone.utc)
    try:
        return value.astimezone(timezone.utc)
    except OverflowError:  # 0001-01-01T00:00+01:00 is before the first representable instant
        raise ValueError("the timestamp is outside the years 1–9999 in UTC") from None


# Zone optional (without one: UTC); stored as UTC.
Timestamp = Annotated[datetime, AfterValidator(_in_utc)]
# Zone required; stored as UTC.
AwareTimestamp = Annotated[AwareDatetime, AfterValidator(_in_utc)]


# --- request bodies ---------------------------------------------------------------------------

MAX_JSON_DEPTH = 64

# A JSON string, up to its closing quote or the end of the body, matched possessively: an
# unterminated one is read once, not again from each quote inside it (which made a crafted
# 40 KB body take minutes).
_STRING = re.compile(rb'"(?:[^"\\]++|\\.?)*+"?', re.DOTALL)
_NOT_BRACKETS = bytes(b for b in range(256) if b not in b"[]{}")
_STEP = {ord("["): 1, ord("{"): 1, ord("]"): -1, ord("}"): -1}
# \u0000 as a JSON escape: a backslash that is not itself escaped, then u0000.
_NUL_ESCAPE = re.compile(rb"(?<!\\)(?:\\\\)*\\u0000")
# A UTF-16 surrogate escape that is not half of a pair: a high one not followed by a low
# one, or a low one not preceded by a high one. UTF-8 (and PostgreSQL) cannot encode them.
_LONE_SURROGATE = re.compile(
    rb"(?<!\\)(?:\\\\)*(?:\\u[dD][89abAB][0-9a-fA-F]{2}(?!\\u[dD][c-fC-F][0-9a-fA-F]{2})"
    rb"|(?<!\\u[dD][89abAB][0-9a-fA-F]{2})\\u[dD][c-fC-F][0-9a-fA-F]{2})"
)


def json_depth_exceeds(body: bytes, limit: int = MAX_JSON_DEPTH) -> bool:
    """Whether the JSON text nests arrays/objects more than `limit` levels deep. Counts
    without parsing (parsing is what overflows the stack), in C-speed passes: strings
    removed (brackets inside them do not count), then the running depth over the brackets
    left. Invalid JSON is left to the parser."""
    if body.count(b"[") + body.count(b"{") <= limit:
        return False
    brackets = _STRING.sub(b"", body).translate(None, _NOT_BRACKETS)
    return max(accumulate(map(_STEP.__getitem__, brackets)), default=0) > limit


def text_problem(text: str) -> str | None:
    """Why PostgreSQL text could not hold `text` (a path or a decoded query), or None."""
    if "\x00" in text:
        return "contains a NUL character (\\u0000), which PostgreSQL text cannot hold"
    if _has_surrogate(text):
        return "contains a lone UTF-16 surrogate, which is not valid Unicode"
    return None


def _has_surrogate(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return True
    return False


def body_problem(body: bytes) -> tuple[str, str] | None:
    """(code, reason) when a request body holds what the API refuses everywhere, else None."""
    if b"\x00" in body or (b"\\u" in body and _NUL_ESCAPE.search(body)):
        return "nul_character", "The body contains a NUL character (\\u0000), which PostgreSQL text cannot hold."
    if b"\\u" in body and _LONE_SURROGATE.search(body):
        return "invalid_unicode", "The body contains a lone UTF-16 surrogate escape, which is not valid Unicode."
    if json_depth_exceeds(body):
        return "too_deep", f"The JSON body nests deeper than {MAX_JSON_DEPTH} levels."
    return None
