"""Errors that services and API handlers raise to produce a specific API error."""

from __future__ import annotations


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
