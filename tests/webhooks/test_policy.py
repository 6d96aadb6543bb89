"""The pure parts: which URLs an endpoint may have, what an answer means, the signature."""

from __future__ import annotations

import random
from datetime import datetime, timezone

import pytest

from webhooks import policy, signing

NOW = datetime(2026, 1, 1, 12, 0, tzinfo=timezone.utc)
RETRY = {"max_attempts": 5, "retry_after": None, "base": 10.0, "cap": 3600.0}


@pytest.mark.parametrize("url", ["https://hooks.example.com/mnemo", "http://10.0.0.7:8080/in", "http://localhost/x",
                                 "HTTPS://example.com", "http://[::1]:9000/"])
def test_it_accepts_http_urls_private_addresses_included(url):
    assert policy.url_problem(url) is None


@pytest.mark.parametrize("url, words", [
    ("ftp://example.com/", "http:// or https://"), ("javascript:alert(1)", "http:// or https://"),
    ("https://ann:pw@example.com/", "user name or password"), ("https://ann@example.com/", "user name or password"),
    ("http://", "host"), ("http://[::1/", "not valid"), ("http://example.com:99999/", "not valid"),
    ("http://example.com/a b", "spaces"), ("https://example.com/" + "a" * 2000, "longer than"),
])
def test_it_refuses_other_urls_and_says_why(url, words):
    assert words in policy.url_problem(url)


def test_a_2xx_is_delivered():
    assert policy.verdict(status_code=204, attempt=1, **RETRY).outcome == "delivered"


@pytest.mark.parametrize("status", [None, 408, 429, 500, 502, 503])
def test_what_waiting_may_fix_is_retried_with_a_growing_delay(status):
    first = policy.verdict(status_code=status, attempt=1, **RETRY, rng=random.Random(1))
    third = policy.verdict(status_code=status, attempt=3, **RETRY, rng=random.Random(1))
    assert first.outcome == third.outcome == "retry"
    assert 5 <= first.delay <= 10 and 20 <= third.delay <= 40


@pytest.mark.parametrize("status", [301, 400, 401, 404, 410, 422])
def test_what_waiting_cannot_fix_fails_at_once(status):
    assert policy.verdict(status_code=status, attempt=1, **RETRY).outcome == "failed"


def test_the_last_attempt_fails():
    assert policy.verdict(status_code=503, attempt=5, **RETRY).outcome == "failed"


def test_a_retry_after_longer_than_the_backoff_is_honoured():
    verdict = policy.verdict(status_code=429, attempt=1, **{**RETRY, "retry_after": 120.0})
    assert verdict == policy.Verdict("retry", 120.0)


def test_backoff_is_capped_and_jittered():
    delays = {policy.backoff(30, base=10, cap=100, rng=random.Random(seed)) for seed in range(20)}
    assert all(50 <= d <= 100 for d in delays) and len(delays) > 1


@pytest.mark.parametrize("value, seconds", [("30", 30.0), ("Thu, 01 Jan 2026 12:01:00 GMT", 60.0),
                                            ("Thu, 01 Jan 2026 11:00:00 GMT", 0.0), ("999999", 3600.0),
                                            ("soon", None), ("", None), (None, None)])
def test_retry_after_is_read_as_seconds_or_a_date(value, seconds):
    assert policy.retry_after_seconds(value, NOW) == seconds


def test_the_signature_is_an_hmac_over_the_timestamp_and_the_body():
    import hashlib
    import hmac

    body = signing.body_of({"b": 1, "a": "é"})
    assert body == '{"a":"é","b":1}'.encode()
    expected = hmac.new(b"s3cret", b"1700000000." + body, hashlib.sha256).hexdigest()
    assert signing.signature(secret="s3cret", timestamp=1700000000, body=body) == f"sha256={expected}"
    assert signing.verify(secret="s3cret", timestamp="1700000000", body=body, signature_header=f"sha256={expected}")
    assert not signing.verify(secret="other", timestamp="1700000000", body=body, signature_header=f"sha256={expected}")
