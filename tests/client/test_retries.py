"""Retries and odd answers, with httpx.MockTransport standing in for the server (the live
server cannot be made to answer 503 or drop a connection on cue). Sleeps are recorded,
not slept: the assertions are about which waits were chosen, never about elapsed time."""

from __future__ import annotations

import asyncio
import json

import httpx
import pytest

from mnemo_client import (
    ApiError,
    AsyncMnemo,
    ConnectionFailed,
    InvalidRequest,
    Mnemo,
    RateLimited,
    RetryPolicy,
    ServerError,
    ServiceUnavailable,
    UnexpectedResponse,
)

OK_STATUS = {"workspace": {"id": 1, "slug": "acme", "name": "Acme"}, "pending": {}, "idle": True,
             "worker": {"last_seen_at": None, "hostname": None}}
RESULT = {"index": 0, "id": 7, "external_id": "e1", "status": "created"}


def envelope(code: str, **details) -> dict:
    return {"error": {"code": code, "message": code.replace("_", " "), "details": details}}


class Script:
    """Answers in order (a response, or an exception to raise), recording each request."""

    def __init__(self, *answers):
        self.answers = list(answers)
        self.requests: list[httpx.Request] = []

    def __call__(self, request: httpx.Request) -> httpx.Response:
        self.requests.append(request)
        answer = self.answers.pop(0)
        if isinstance(answer, Exception):
            raise answer
        return answer


def client(script: Script, **policy) -> tuple[Mnemo, list[float]]:
    mnemo = Mnemo("http://mnemo.test", "mn_k_s", retry=RetryPolicy(**policy), transport=httpx.MockTransport(script))
    slept: list[float] = []
    mnemo._sleep = slept.append
    return mnemo, slept


def test_429_is_retried_after_the_servers_retry_after():
    script = Script(httpx.Response(429, headers={"Retry-After": "7"}, json=envelope("rate_limited", retry_after=7)),
                    httpx.Response(429, headers={"Retry-After": "2"}, json=envelope("rate_limited", retry_after=2)),
                    httpx.Response(200, json=OK_STATUS))
    mnemo, slept = client(script)
    assert mnemo.status().idle is True
    assert slept == [7.0, 2.0] and len(script.requests) == 3


def test_retry_after_as_an_http_date_is_read():
    script = Script(httpx.Response(503, headers={"Retry-After": "Wed, 21 Oct 2015 07:28:00 GMT"},
                                   json=envelope("busy", retryable=True)),
                    httpx.Response(200, json=OK_STATUS))
    mnemo, slept = client(script)
    mnemo.status()
    assert slept == [0.0]  # a date in the past: send again at once


def test_503_busy_without_retry_after_backs_off_exponentially_with_jitter():
    busy = httpx.Response(503, json=envelope("busy", retryable=True))
    script = Script(busy, busy, busy, httpx.Response(200, json=OK_STATUS))
    mnemo, slept = client(script, backoff=1.0, max_backoff=3.0)
    mnemo.status()
    # Attempt n waits between half and all of min(max_backoff, backoff * 2**n).
    for wait, ceiling in zip(slept, [1.0, 2.0, 3.0], strict=True):
        assert ceiling / 2 <= wait <= ceiling


def test_a_provider_failure_that_retrying_cannot_fix_is_raised_at_once():
    script = Script(httpx.Response(503, json=envelope("provider_unavailable", retryable=False)))
    mnemo, slept = client(script)
    with pytest.raises(ServiceUnavailable) as caught:
        mnemo.recall("x")
    assert slept == [] and caught.value.details == {"retryable": False}


def test_when_the_retries_are_spent_the_last_answer_is_raised():
    limited = httpx.Response(429, headers={"Retry-After": "1"}, json=envelope("rate_limited", retry_after=1))
    script = Script(limited, limited, limited)
    mnemo, slept = client(script, max_retries=2)
    with pytest.raises(RateLimited) as caught:
        mnemo.status()
    assert slept == [1.0, 1.0] and caught.value.retry_after == 1.0 and caught.value.code == "rate_limited"


def test_other_errors_are_not_retried():
    script = Script(httpx.Response(422, json=envelope("validation_error", errors=[])))
    mnemo, slept = client(script)
    with pytest.raises(InvalidRequest):
        mnemo.status()
    assert slept == [] and len(script.requests) == 1


def test_a_refused_connection_is_retried_even_for_a_write():
    script = Script(httpx.ConnectError("refused"), httpx.Response(201, json=RESULT))
    mnemo, slept = client(script)
    assert mnemo.log("x", channel="cli", channel_id="me").id == 7
    assert len(slept) == 1


def test_a_broken_answer_is_retried_only_when_sending_again_is_harmless():
    # No external id: the server may have stored it, so a second send could log it twice.
    script = Script(httpx.ReadTimeout("slow"))
    mnemo, _ = client(script)
    with pytest.raises(ConnectionFailed):
        mnemo.log("x", channel="cli", channel_id="me")
    assert len(script.requests) == 1
    # With one, sending again answers `duplicate` at worst.
    script = Script(httpx.ReadTimeout("slow"), httpx.Response(200, json={**RESULT, "status": "duplicate"}))
    mnemo, slept = client(script)
    assert mnemo.log("x", channel="cli", channel_id="me", external_id="e1").status == "duplicate"
    assert len(script.requests) == 2 and json.loads(script.requests[1].content)["external_id"] == "e1"


def test_a_batch_chunk_is_resent_only_when_every_item_has_an_external_id():
    batch_answer = {"created": 1, "duplicate": 0, "rejected": 0, "results": [RESULT]}
    script = Script(httpx.RemoteProtocolError("dropped"), httpx.Response(200, json=batch_answer))
    mnemo, _ = client(script)
    mnemo.log_batch([{"channel": "cli", "channel_id": "me", "content": "x", "external_id": "e1"}])
    assert len(script.requests) == 2
    script = Script(httpx.RemoteProtocolError("dropped"))
    mnemo, _ = client(script)
    with pytest.raises(ConnectionFailed):
        mnemo.log_batch([{"channel": "cli", "channel_id": "me", "content": "x"}])


def test_an_error_page_without_the_envelope_is_still_an_api_error():
    script = Script(httpx.Response(502, text="<html>Bad Gateway</html>"))
    mnemo, _ = client(script, max_retries=0)
    with pytest.raises(ServerError) as caught:
        mnemo.status()
    assert caught.value.status == 502 and caught.value.code == "http_502" and "Bad Gateway" in caught.value.message


def test_a_success_the_model_cannot_read_is_unexpected_response():
    for answer in (httpx.Response(200, text="not json"), httpx.Response(200, json={"workspace": "?"})):
        mnemo, _ = client(Script(answer))
        with pytest.raises(UnexpectedResponse) as caught:
            mnemo.status()
        assert caught.value.status == 200


def test_the_request_carries_the_key_and_the_given_fields_only():
    script = Script(httpx.Response(200, json={"results": []}))
    mnemo, _ = client(script)
    mnemo.recall("tea", limit=3)
    request = script.requests[0]
    assert request.headers["Authorization"] == "Bearer mn_k_s"
    assert request.url.path == "/api/v1/recall"
    assert json.loads(request.content) == {"query": "tea", "limit": 3}


def test_the_async_client_retries_the_same_way():
    script = Script(httpx.Response(429, headers={"Retry-After": "3"}, json=envelope("rate_limited", retry_after=3)),
                    httpx.ConnectError("refused"), httpx.Response(200, json=OK_STATUS))
    slept: list[float] = []

    async def record(seconds: float) -> None:
        slept.append(seconds)

    async def run():
        async with AsyncMnemo("http://mnemo.test", "k", transport=httpx.MockTransport(script)) as mnemo:
            mnemo._sleep = record
            return await mnemo.status()

    assert asyncio.run(run()).idle is True
    assert slept[0] == 3.0 and len(slept) == 2


def test_the_async_client_raises_when_retries_are_spent():
    script = Script(httpx.ReadTimeout("slow"))

    async def run():
        async with AsyncMnemo("http://mnemo.test", "k", transport=httpx.MockTransport(script)) as mnemo:
            await mnemo.log("x", channel="cli", channel_id="me")

    with pytest.raises(ConnectionFailed):
        asyncio.run(run())


def test_a_retry_after_that_is_neither_seconds_nor_a_date_falls_back_to_backoff():
    script = Script(httpx.Response(429, headers={"Retry-After": "soon"}, json=envelope("rate_limited")),
                    httpx.Response(200, json=OK_STATUS))
    mnemo, slept = client(script, backoff=1.0)
    mnemo.status()
    assert len(slept) == 1 and 0.5 <= slept[0] <= 1.0


def test_a_status_without_its_own_exception_is_an_api_error():
    script = Script(httpx.Response(418, json=envelope("teapot")))
    mnemo, _ = client(script)
    with pytest.raises(ApiError) as caught:
        mnemo.status()
    assert type(caught.value) is ApiError and (caught.value.status, caught.value.code) == (418, "teapot")


def test_iterate_skips_rows_a_newer_row_pushed_onto_the_next_page():
    def page(count, ids):
        return httpx.Response(200, json={"count": count, "items": [{**GAP, "id": i} for i in ids]})

    # A gap is reported between the first and the second page: everything moves down one.
    script = Script(page(4, [5, 4]), page(5, [4, 3]), page(5, [2]))
    mnemo, _ = client(script)
    assert [gap.id for gap in mnemo.iterate("gaps", page_size=2)] == [5, 4, 3, 2]
    assert [r.url.params["offset"] for r in script.requests] == ["0", "2", "4"]


def test_batch_and_page_sizes_beyond_the_servers_limits_are_refused():
    mnemo, _ = client(Script())
    with pytest.raises(ValueError, match="chunk_size"):
        mnemo.log_batch([{"content": "x"}], chunk_size=1001)
    with pytest.raises(ValueError, match="chunk_size"):
        mnemo.log_batch([{"content": "x"}], chunk_size=0)


GAP = {"description": "d", "category": "other", "frequency": 1, "status": "detected", "confirmed": False,
       "regression": False, "todo_ref": "", "todo_created_at": None, "reason": "", "entity_id": None, "rule": "",
       "first_seen": "2026-01-01T00:00:00Z", "last_seen": "2026-01-01T00:00:00Z"}
