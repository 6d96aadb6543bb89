"""Exceptions. Every answer the API refuses arrives in one envelope,
`{"error": {"code", "message", "details"}}`; the client raises the subclass of `ApiError`
that its status names and keeps the envelope on it, so callers branch on the class and
read `code` and `details` for the rest (the rule a secret broke, the field that failed)."""

from __future__ import annotations

from datetime import datetime, timezone
from email.utils import parsedate_to_datetime
from typing import Any

import httpx


class MnemoError(Exception):
    """Anything this client raises."""


class ConnectionFailed(MnemoError):
    """The server could not be reached, or the connection broke before an answer came
    (refused, DNS, timeout). Raised after the retries the request allowed."""


class UnexpectedResponse(MnemoError):
    """The server answered something this client cannot read as the documented shape:
    not JSON, or JSON that does not match the model (a proxy's error page, a server
    newer than the client)."""

    def __init__(self, message: str, *, status: int, body: str):
        super().__init__(message)
        self.status = status
        self.body = body


class ApiError(MnemoError):
    """The API answered with an error envelope. `status` is the HTTP status (None for a
    request refused here before sending), `envelope` the whole decoded body."""

    def __init__(self, *, status: int | None, code: str, message: str, details: dict[str, Any] | None = None,
                 envelope: dict[str, Any] | None = None, request_id: str | None = None,
                 retry_after: float | None = None):
        self.status = status
        self.code = code
        self.message = message
        self.details = details or {}
        self.envelope = envelope if envelope is not None else {
            "error": {"code": code, "message": message, "details": self.details}}
        self.request_id = request_id
        self.retry_after = retry_after
        super().__init__(f"{status or 'not sent'} {code}: {message}")


class InvalidRequest(ApiError):
    """400/422: the input did not validate, the JSON was malformed, or a secret was found
    in it (code `secret_detected`, details name the field and the rule; nothing stored).
    Also raised before sending when the arguments do not fit the request model."""


class Unauthorized(ApiError):
    """401: no key, or a key that is unknown, revoked or expired."""


class PermissionDenied(ApiError):
    """403: the key lacks the scope (details.required_scope), e.g. a read key writing."""


class NotFound(ApiError):
    """404: no such id, or an id of another workspace (the API never tells them apart)."""


class Conflict(ApiError):
    """409: a stale version, an outcome recorded twice, a handle another entity owns."""


class PayloadTooLarge(ApiError):
    """413: the body is larger than the server accepts; send smaller batches."""


class RateLimited(ApiError):
    """429 after the retries: `retry_after` says how many seconds to wait."""


class ServiceUnavailable(ApiError):
    """503 after the retries: the database was busy (nothing stored) or a model provider
    failed; `details.retryable` says whether sending again can help."""


class ServerError(ApiError):
    """Any other 5xx: a bug on the server; `request_id` finds it in the server's logs."""


_BY_STATUS: dict[int, type[ApiError]] = {
    400: InvalidRequest, 401: Unauthorized, 403: PermissionDenied, 404: NotFound, 409: Conflict,
    413: PayloadTooLarge, 422: InvalidRequest, 429: RateLimited, 503: ServiceUnavailable,
}


def retry_after_seconds(response: httpx.Response) -> float | None:
    """The Retry-After header as seconds: a number of seconds or an HTTP date (RFC 9110)."""
    value = response.headers.get("Retry-After")
    if value is None:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=timezone.utc)
    return max(0.0, (when - datetime.now(timezone.utc)).total_seconds())


def error_from_response(response: httpx.Response) -> ApiError | UnexpectedResponse:
    """The exception for an error answer. An answer without the envelope (a proxy's page)
    is still an ApiError of its status, with code `http_<status>`."""
    request_id = response.headers.get("X-Request-ID")
    retry_after = retry_after_seconds(response)
    try:
        envelope = response.json()
        error = envelope["error"]
        code, message, details = str(error["code"]), str(error["message"]), dict(error.get("details") or {})
    except (ValueError, KeyError, TypeError):
        envelope, code = None, f"http_{response.status_code}"
        message = f"{response.reason_phrase or 'error'}: {response.text[:200]}".rstrip(": ")
        details = {}
    cls = _BY_STATUS.get(response.status_code)
    if cls is None:
        cls = ServerError if response.status_code >= 500 else ApiError
    return cls(status=response.status_code, code=code, message=message, details=details, envelope=envelope,
               request_id=request_id, retry_after=retry_after)
