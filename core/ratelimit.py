"""Request limits for the API, counted by django-ratelimit in the "ratelimit" cache
(settings.CACHES: Redis when MNEMO_CACHE_URL is set, else PostgreSQL through
core.cache.AtomicDatabaseCache), so every gunicorn worker sees the same counters.

Three fixed-window limits, each a "<count>/<period>" setting (README "Rate limits"):
per client address on every authenticated API request, per API key once the key is known,
and per address on rejected keys (unknown, wrong, revoked or expired)."""

from __future__ import annotations

import ipaddress

from django.conf import settings
from django.http import HttpRequest
from django_ratelimit.core import get_usage

# A client owns a whole IPv6 /64 (SLAAC): counting single addresses would give it 2^64.
_IPV6_PREFIX = 64
# When neither REMOTE_ADDR nor the trusted header holds an address (a Unix socket without
# a proxy header): one shared, valid address, so the limits still apply and axes can store it.
_UNKNOWN_ADDRESS = "0.0.0.0"


class RateLimited(Exception):
    def __init__(self, limit: str, retry_after: int):
        self.limit = limit
        self.retry_after = retry_after
        super().__init__(f"Too many requests ({limit} limit); retry in {retry_after} s.")


def _valid_ip(value: str) -> str | None:
    try:
        return str(ipaddress.ip_address(value.strip()))
    except ValueError:
        return None


def client_address(request: HttpRequest) -> str:
    """The client's IP address: REMOTE_ADDR, or with MNEMO_TRUSTED_PROXY_COUNT = n proxies in
    front, the X-Forwarded-For entry n places from the end (the one the outermost trusted
    proxy appended; what precedes it is whatever the client sent). Also django-axes' source
    of addresses (AXES_CLIENT_IP_CALLABLE), so logins and the API agree."""
    proxies = settings.MNEMO_TRUSTED_PROXY_COUNT
    if proxies > 0:
        forwarded = [part for part in request.META.get("HTTP_X_FORWARDED_FOR", "").split(",") if part.strip()]
        if len(forwarded) >= proxies:
            address = _valid_ip(forwarded[-proxies])
            if address:
                return address
    return _valid_ip(request.META.get("REMOTE_ADDR") or "") or _UNKNOWN_ADDRESS


def _address_bucket(request: HttpRequest) -> str:
    address = ipaddress.ip_address(client_address(request))
    if address.version == 6:
        return str(ipaddress.ip_network(f"{address}/{_IPV6_PREFIX}", strict=False).network_address)
    return str(address)


def _count(request: HttpRequest, *, limit: str, value: str, rate: str) -> None:
    """One more request in `value`'s current window; RateLimited once it is over `rate`."""
    usage = get_usage(request, group=f"mnemo.{limit}", key=lambda group, request: value, rate=rate, increment=True)
    if usage is not None and usage["should_limit"]:
        # time_left is -1 when the cache could not be reached (then django-ratelimit limits).
        raise RateLimited(limit, retry_after=max(1, usage["time_left"]))


def api_request_count(request: HttpRequest) -> None:
    _count(request, limit="address", value=_address_bucket(request), rate=settings.MNEMO_RATE_LIMIT_PER_ADDRESS)


def api_key_count(request: HttpRequest, *, key_prefix: str) -> None:
    _count(request, limit="key", value=key_prefix, rate=settings.MNEMO_RATE_LIMIT_PER_KEY)


def failed_auth_count(request: HttpRequest) -> None:
    _count(request, limit="failed_auth", value=_address_bucket(request), rate=settings.MNEMO_RATE_LIMIT_FAILED_AUTH)
