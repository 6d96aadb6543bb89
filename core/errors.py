"""Errors that services and API handlers raise to produce a specific API error."""

from __future__ import annotations

import json

from django.http import HttpResponse


class ApiError(Exception):
    status = 400
    code = "bad_request"

    def __init__(self, message: str, *, details: dict | None = None, status: int | None = None, code: str | None = None):
        super().__init__(message)
        self.message = message
        self.details = details or {}
        if status is not None:
            self.status = status
        if code is not None:
            self.code = code


class Conflict(ApiError):
    status = 409
    code = "conflict"


class NotFound(ApiError):
    status = 404
    code = "not_found"


def error_response(status: int, code: str, message: str, details=None) -> HttpResponse:
    """The API's one error shape (HOUSE_STYLE.md): {"error": {"code", "message", "details"}}."""
    body = {"error": {"code": code, "message": message, "details": details if details is not None else {}}}
    return HttpResponse(json.dumps(body, default=str), status=status, content_type="application/json")
