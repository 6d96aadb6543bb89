"""Issue 16: inputs PostgreSQL (or Python's parser) cannot take answer a 4xx in the error
shape and store nothing; before, each of these classes answered 500."""

from __future__ import annotations

import json

import pytest
from django.conf import settings

from conversations.models import Interaction
from core.input_types import MAX_JSON_DEPTH
from entities.models import DecisionRecord
from memory.models import Memory, Procedure, Scratchpad
from tests.helpers import assert_error

pytestmark = pytest.mark.django_db

HUGE = 2**70  # beyond bigint
INTERACTION = {"channel": "cli", "channel_id": "u1", "content": "hello"}


def _nothing_stored():
    return (Memory.objects.count(), Interaction.objects.count(), Scratchpad.objects.count(),
            Procedure.objects.count(), DecisionRecord.objects.count()) == (0, 0, 0, 0, 0)


# --- NUL characters ----------------------------------------------------------------------------

@pytest.mark.parametrize("path, body", [
    ("/memories", '{"text": "before\\u0000after"}'),
    ("/interactions", json.dumps({**INTERACTION, "content": "a\u0000b"})),
    ("/interactions", json.dumps({**INTERACTION, "metadata": {"k\u0000": 1}})),
    ("/procedures", json.dumps({"name": "deploy", "steps": ["build", "ship\u0000"]})),
    ("/decisions", json.dumps({"description": "db", "options": ["pg", "my\u0000sql"], "confidence": 0.5})),
    ("/memories", '{"text": "raw \x00 byte"}'),
])
def test_it_refuses_a_nul_anywhere_in_a_body_and_stores_nothing(api, path, body):
    assert_error(api.post(path, raw=body), 422, "nul_character")
    assert _nothing_stored()


def test_it_refuses_a_nul_in_a_scratchpad_state_and_stores_nothing(api):
    assert_error(api.put("/scratchpads/t1", raw='{"note": "a\\u0000b"}'), 422, "nul_character")
    assert not Scratchpad.objects.exists()


def test_an_escaped_backslash_before_u0000_is_ordinary_text(api):
    # JSON "\\u0000" is a backslash followed by "u0000": six printable characters.
    response = api.post("/memories", raw='{"text": "the escape \\\\u0000 in C"}')
    assert response.status_code == 201, response.content
    assert Memory.objects.get().text == "the escape \\u0000 in C"


@pytest.mark.parametrize("path", ["/memories?text=a%00b", "/interactions?q=%00", "/memories?ty%00pe=fact"])
def test_it_refuses_a_nul_in_the_query(api, path):
    assert_error(api.get(path), 422, "invalid_query")


def test_it_refuses_a_nul_in_the_path_and_stores_nothing(api):
    assert_error(api.get("/scratchpads/a%00b"), 422, "invalid_path")
    assert_error(api.put("/scratchpads/a%00b", {"x": 1}), 422, "invalid_path")
    assert_error(api.put("/trusted-state/k%00", {"value": "v"}), 422, "invalid_path")
    assert not Scratchpad.objects.exists()


def test_it_refuses_a_nul_in_a_header(api):
    api.headers["X-Client"] = "a\x00b"
    assert_error(api.get("/memories"), 422, "invalid_header")


def test_it_refuses_a_lone_surrogate_and_stores_nothing(api):
    assert_error(api.post("/memories", raw='{"text": "broken \\ud800 half"}'), 422, "invalid_unicode")
    assert _nothing_stored()
    # A whole pair is one character (U+1F600) and is kept.
    response = api.post("/memories", raw='{"text": "smile \\ud83d\\ude00"}')
    assert response.status_code == 201 and Memory.objects.get().text == "smile \U0001f600"


def test_it_refuses_numbers_jsonb_cannot_hold_and_stores_nothing(api):
    assert_error(api.post("/interactions", raw='{"channel": "cli", "channel_id": "u1", "content": "x", '
                                               '"metadata": {"score": NaN}}'), 422, "malformed_json")
    assert_error(api.post("/context", raw='{"query": "x", "budgets": {"entities": Infinity}}'), 422,
                 "malformed_json")
    # A number beyond a double: Python reads it as infinity, which jsonb cannot hold either.
    assert_error(api.post("/interactions", raw='{"channel": "cli", "channel_id": "u1", "content": "x", '
                                               '"metadata": {"score": 1e400}}'), 422, "malformed_json")
    assert _nothing_stored()


# --- bodies over the upload limit --------------------------------------------------------------

def test_a_body_over_the_upload_limit_is_a_413_and_stores_nothing(api):
    content = "x" * (settings.DATA_UPLOAD_MAX_MEMORY_SIZE + 1)
    assert_error(api.post("/interactions", {**INTERACTION, "content": content}), 413, "payload_too_large")
    assert_error(api.put("/scratchpads/big", {"blob": content}), 413, "payload_too_large")
    assert _nothing_stored()


# --- nesting -----------------------------------------------------------------------------------

def test_a_scratchpad_nested_deeper_than_the_cap_is_refused_and_not_stored(api):
    deep = "[" * 100_000 + "]" * 100_000  # beyond Python's recursion limit as well
    assert_error(api.put("/scratchpads/deep", raw=deep), 422, "too_deep")
    assert_error(api.put("/scratchpads/deep", raw='{"a":' * (MAX_JSON_DEPTH + 1) + "1" + "}" * (MAX_JSON_DEPTH + 1)),
                 422, "too_deep")
    assert not Scratchpad.objects.exists()


def test_a_scratchpad_at_the_cap_is_stored(api):
    state = "[" * MAX_JSON_DEPTH + "]" * MAX_JSON_DEPTH
    response = api.put("/scratchpads/deep", raw=state)
    assert response.status_code == 200, response.content
    assert Scratchpad.objects.get().state == state


def test_brackets_inside_strings_do_not_count_as_nesting(api):
    state = json.dumps({"text": "[" * 500})
    assert api.put("/scratchpads/brackets", raw=state).status_code == 200


def test_deep_metadata_is_refused_and_not_stored(api):
    metadata = json.loads('{"a":' * 200 + "1" + "}" * 200)
    assert_error(api.post("/interactions", {**INTERACTION, "metadata": metadata}), 422, "too_deep")
    assert _nothing_stored()


# --- integers beyond 64 bits -------------------------------------------------------------------

@pytest.mark.parametrize("path", [
    f"/memories?offset={HUGE}", f"/entities?offset={HUGE}", f"/interactions?offset={HUGE}",
    f"/candidates?older_than_hours={HUGE}", "/candidates?newer_than_hours=1e300",
    f"/memories?entity={HUGE}", f"/memories/{HUGE}", f"/entities/{HUGE}", f"/interactions/{HUGE}",
    f"/candidates/{HUGE}", f"/conversations/{HUGE}/context", f"/decisions/{HUGE}", "/keys?offset=-1",
])
def test_integers_postgresql_cannot_hold_are_a_422(admin_api, api, path):
    client = admin_api if path.startswith("/keys") else api
    assert_error(client.get(path), 422, "validation_error")


@pytest.mark.parametrize("path, body", [
    ("/memories", {"text": "x", "entity": HUGE}),
    ("/memories", {"text": "x", "interaction": HUGE, "quote": ""}),
    ("/candidates/promote", {"ids": [1, HUGE]}),
    ("/recall", {"query": "x", "conversation": HUGE}),
    ("/relationships", {"subject": HUGE, "predicate": "works_on", "object": 1}),
    (f"/memories/{HUGE}/invalidate", {}),
])
def test_integers_beyond_bigint_in_a_body_are_a_422_and_store_nothing(api, path, body):
    assert_error(api.post(path, body), 422, "validation_error")
    assert _nothing_stored()


# --- timestamps --------------------------------------------------------------------------------

def test_an_offset_postgresql_refuses_is_stored_as_the_same_instant_in_utc(api):
    # RFC 3339 allows offsets to ±23:59; PostgreSQL's timestamptz only to ±15:59.
    response = api.post("/interactions", {**INTERACTION, "occurred_at": "2026-03-01T12:00:00+23:59"})
    assert response.status_code == 201, response.content
    assert Interaction.objects.get().occurred_at.isoformat() == "2026-02-28T12:01:00+00:00"
    response = api.post("/memories", {"text": "the launch", "occurred_at": "2026-03-01T12:00:00-20:18"})
    assert response.status_code == 201, response.content
    assert Memory.objects.get().occurred_at.isoformat() == "2026-03-02T08:18:00+00:00"


@pytest.mark.parametrize("path", [
    "/interactions?since=2026-01-01T00:00:00%2B23:59", "/interactions?until=2026-01-01T00:00:00-20:18",
    "/entities/1/relationships?as_of=2026-01-01T00:00:00%2B20:18",
])
def test_filters_take_any_rfc3339_offset(api, path):
    response = api.get(path)
    assert response.status_code in (200, 404), response.content


def test_recall_as_of_takes_any_rfc3339_offset(api):
    response = api.post("/recall", {"query": "anything", "as_of": "2026-01-01T00:00:00+23:59"})
    assert response.status_code == 200, response.content


@pytest.mark.parametrize("value", ["0001-01-01T00:00:00+01:00", "9999-12-31T23:59:59-23:59"])
def test_a_time_outside_the_representable_years_in_utc_is_a_422_and_stores_nothing(api, value):
    assert_error(api.post("/interactions", {**INTERACTION, "occurred_at": value}), 422, "validation_error")
    assert_error(api.post("/recall", {"query": "x", "as_of": value}), 422, "validation_error")
    assert _nothing_stored()


@pytest.mark.parametrize("method, path, allowed", [
    ("delete", "/memories", "GET, POST"),
    ("post", "/status", "GET"),
    ("patch", "/trusted-state/a-key", "DELETE, GET, PUT"),
])
def test_a_wrong_method_is_a_405_in_the_error_shape_with_allow(api, method, path, allowed):
    response = getattr(api.client, method)(f"/api/v1{path}", headers=api.headers)

    error = assert_error(response, 405, "method_not_allowed")
    assert response["Allow"] == allowed
    assert error["details"] == {"allowed": allowed.split(", ")}


def test_a_wrong_method_is_a_405_without_a_key_too(anon_api):
    assert_error(anon_api.client.delete("/api/v1/memories"), 405, "method_not_allowed")
