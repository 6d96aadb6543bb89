"""core.input_types without Django: the body checks and the bounded types."""

from __future__ import annotations

import json
from datetime import datetime, timezone

import pytest
from hypothesis import given
from hypothesis import strategies as st
from pydantic import TypeAdapter, ValidationError

from core.input_types import (
    BIGINT_MAX,
    MAX_JSON_DEPTH,
    AwareTimestamp,
    Id,
    Offset,
    Timestamp,
    body_problem,
    json_depth_exceeds,
)


def _depth(value) -> int:
    if isinstance(value, list):
        return 1 + max((_depth(v) for v in value), default=0)
    if isinstance(value, dict):
        return 1 + max((_depth(v) for v in value.values()), default=0)
    return 0


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(alphabet='[]{}"\\ ab'),
    lambda children: st.lists(children, max_size=3) | st.dictionaries(st.text(alphabet='[]{}"\\a'), children,
                                                                    max_size=3),
    max_leaves=40,
)


@given(json_values, st.integers(min_value=0, max_value=12))
def test_depth_check_agrees_with_the_parsed_depth(value, limit):
    body = json.dumps(value).encode()
    assert json_depth_exceeds(body, limit) == (_depth(value) > limit)


def test_nesting_far_past_the_recursion_limit_is_found_without_recursing():
    assert json_depth_exceeds(b"[" * 1_000_000)
    assert body_problem(b'{"a":' * (MAX_JSON_DEPTH + 1))[0] == "too_deep"
    assert body_problem(b"[" * MAX_JSON_DEPTH + b"]" * MAX_JSON_DEPTH) is None


@pytest.mark.parametrize("body", [b'"\\u0000"', b'["a", "b\\u0000"]', b'"\\\\\\u0000"', b'"\x00"'])
def test_a_nul_is_found_raw_or_escaped(body):
    assert body_problem(body)[0] == "nul_character"


@pytest.mark.parametrize("body", [b'"\\\\u0000"', b'"u0000"', b'"\\u0001"', b'"\\u00a0"'])
def test_an_escaped_backslash_or_another_escape_is_not_a_nul(body):
    assert body_problem(body) is None


@pytest.mark.parametrize("body, problem", [
    (b'"\\ud800"', "invalid_unicode"), (b'"\\udc00"', "invalid_unicode"), (b'"\\ud800x"', "invalid_unicode"),
    (b'"\\ud83d\\ude00"', None), (b'"\\\\ud800"', None),
])
def test_only_lone_surrogate_escapes_are_refused(body, problem):
    found = body_problem(body)
    assert (found[0] if found else None) == problem


@pytest.mark.parametrize("kind, value, ok", [
    (Id, 1, True), (Id, BIGINT_MAX, True), (Id, BIGINT_MAX + 1, False), (Id, 0, False),
    (Offset, 0, True), (Offset, BIGINT_MAX, True), (Offset, 2**70, False), (Offset, -1, False),
])
def test_integer_bounds(kind, value, ok):
    adapter = TypeAdapter(kind)
    if ok:
        assert adapter.validate_python(value) == value
    else:
        with pytest.raises(ValidationError):
            adapter.validate_python(value)


def test_timestamps_come_out_in_utc_at_the_same_instant():
    value = TypeAdapter(AwareTimestamp).validate_python("2026-03-01T12:00:00+23:59")
    assert value.tzinfo is timezone.utc
    assert value == datetime(2026, 2, 28, 12, 1, tzinfo=timezone.utc)
    assert TypeAdapter(Timestamp).validate_python("2026-03-01T12:00:00") == datetime(2026, 3, 1, 12, tzinfo=timezone.utc)


def test_an_aware_timestamp_needs_its_zone():
    with pytest.raises(ValidationError):
        TypeAdapter(AwareTimestamp).validate_python("2026-03-01T12:00:00")


@pytest.mark.parametrize("value", ["0001-01-01T00:00:00+01:00", "9999-12-31T23:59:59-23:59"])
def test_a_timestamp_outside_the_years_in_utc_is_a_validation_error(value):
    with pytest.raises(ValidationError):
        TypeAdapter(Timestamp).validate_python(value)


def test_an_unterminated_string_full_of_escaped_quotes_is_read_once():
    # Read again from each quote inside it, 100,000 escaped quotes took hours; the string
    # runs to the end of the body, so its brackets never count.
    body = b"[]" * (MAX_JSON_DEPTH + 1) + b'"' + b'\\"[' * 100_000
    assert not json_depth_exceeds(body)
    assert json_depth_exceeds(b"[" * (MAX_JSON_DEPTH + 1) + body)
