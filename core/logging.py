"""Structured logs: one JSON object per line, carrying the id of the request (or task)
that produced it, so a request can be followed from the web process into Celery."""

from __future__ import annotations

import contextvars
import json
import logging
import re
import time
import uuid

request_id_var: contextvars.ContextVar[str] = contextvars.ContextVar("request_id", default="-")

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
        token = request_id_var.set(request_id)
        started = time.perf_counter()
        try:
            response = self.get_response(request)
        finally:
            request_id_var.reset(token)
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
        if record.exc_info:
            payload["exc"] = self.formatException(record.exc_info)
        return json.dumps(payload, default=str)
