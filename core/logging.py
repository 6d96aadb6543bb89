"""Structured logs: one JSON object per line, carrying the id of the request (or task)
that produced it, so a request can be followed from the web process into Celery."""

from __future__ import annotations

import contextvars
import json
import logging
import re
import time
import uuid
from urllib.parse import unquote_plus

from gunicorn import glogging

from core.privacy import find_secrets

request_id_var: contextvars.ContextVar[str] = contextvars.ContextVar("request_id", default="-")
# Issue 20: the id of the API key the request authenticated with (core.auth sets it), so a
# review item opened deep inside a service knows which agent proposed it. None for pages,
# jobs and the worker.
api_key_var: contextvars.ContextVar[int | None] = contextvars.ContextVar("api_key", default=None)

# A client may pass its own id; accept only short, harmless ones so logs stay clean.
_CLIENT_ID = re.compile(r"^[A-Za-z0-9._:-]{1,64}$")


def new_request_id() -> str:
    return uuid.uuid4().hex


class RequestIdMiddleware:
    header = "X-Request-ID"

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        supplied = request.headers.get(self.header, "")
        request_id = supplied if _CLIENT_ID.match(supplied) else new_request_id()
        request.request_id = request_id
        token, key_token = request_id_var.set(request_id), api_key_var.set(None)
        started = time.perf_counter()
        try:
            response = self.get_response(request)
        finally:
            request_id_var.reset(token)
            api_key_var.reset(key_token)
        response[self.header] = request_id
        # Server time without the network or the client: what benchmarks report as server-side.
        response["Server-Timing"] = f"app;dur={(time.perf_counter() - started) * 1000:.2f}"
        return response


class RequestIdFilter(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        if not hasattr(record, "request_id"):
            record.request_id = request_id_var.get()
        return True


_STANDARD_ATTRS = set(vars(logging.makeLogRecord({}))) | {"message", "asctime", "request_id"}


def mask_secrets(text: str) -> str:
    """The text with every secret core.privacy finds replaced by `[secret:<rule>]`. A URL
    logged as sent may carry a secret percent-encoded (`token%3Dghp_…`): if decoding it
    reveals one, the decoded text is masked and kept. Emails and IP addresses stay: they
    are what an operator follows a request by."""
    masked = _mask(text)
    if "%" in masked or "+" in masked:
        decoded = unquote_plus(masked)
        if decoded != masked and find_secrets(decoded):
            return _mask(decoded)
    return masked


def _mask(text: str) -> str:
    for found in reversed(find_secrets(text)):
        text = f"{text[:found.start]}[secret:{found.rule}]{text[found.end:]}"
    return text


class SecretMaskingFilter(logging.Filter):
    """Issue 16: a request refused for carrying a secret in its path or query must not
    leave it in the logs either (django.request logs the path of every 4xx, gunicorn's
    access log every path). Attached to every handler, so no logging call has to remember:
    the formatted message, string extras, objects logged as extras (a request: its str
    holds the path) and tracebacks are masked before any handler formats the record."""

    def filter(self, record: logging.LogRecord) -> bool:
        message = record.getMessage()
        masked = mask_secrets(message)
        if masked != message:
            record.msg, record.args = masked, None
        for key, value in list(vars(record).items()):
            if key in _STANDARD_ATTRS or key.startswith("_"):
                continue
            text = value if isinstance(value, str) else None if _is_plain(value) else str(value)
            if text is not None:
                masked = mask_secrets(text)
                if masked != text:
                    setattr(record, key, masked)
        if record.exc_info and not record.exc_text:
            record.exc_text = logging.Formatter().formatException(record.exc_info)
        if record.exc_text:
            record.exc_text = mask_secrets(record.exc_text)
        return True


def _is_plain(value) -> bool:
    return value is None or isinstance(value, (bool, int, float))


class JsonFormatter(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        payload = {
            "at": self.formatTime(record, "%Y-%m-%dT%H:%M:%S"),
            "level": record.levelname,
            "logger": record.name,
            "message": record.getMessage(),
            "request_id": getattr(record, "request_id", request_id_var.get()),
        }
        for key, value in vars(record).items():
            if key not in _STANDARD_ATTRS and not key.startswith("_"):
                payload[key] = value
        if record.exc_text:
            payload["exc"] = record.exc_text
        elif record.exc_info:
            payload["exc"] = self.formatException(record.exc_info)
        return json.dumps(payload, default=str)


class GunicornLogger(glogging.Logger):
    """gunicorn's own logger (`--logger-class`): its access and error logs are written by
    handlers it makes itself, outside Django's LOGGING, so the same masking filter is put
    on each of them after every (re)configuration. The access log writes each path."""

    secret_filter = SecretMaskingFilter()

    def setup(self, cfg) -> None:
        super().setup(cfg)
        for log in (self.error_log, self.access_log):
            for handler in log.handlers:
                handler.addFilter(self.secret_filter)
