"""Refuses, once for the whole API, requests that no view could store: before any view
runs, so no endpoint has to remember it (issue 16; the checks are core.input_types)."""

from __future__ import annotations

import logging

from django.core.exceptions import BadRequest, RequestDataTooBig, TooManyFieldsSent
from django.db import OperationalError
from django.http import HttpRequest, HttpResponse, HttpResponseNotAllowed
from django.template.response import TemplateResponse

from core.concurrency import is_retryable_conflict
from core.errors import error_response
from core.input_types import body_problem, text_problem

API_PREFIX = "/api/"
logger = logging.getLogger(__name__)


class ApiInputGuard:
    """Under /api/: a NUL (or lone surrogate) in the path, query or a header is a 422; a
    body over DATA_UPLOAD_MAX_MEMORY_SIZE is a 413; a body with a NUL, a
    lone surrogate or JSON nested too deep is a 422. All in the API's error shape, and so is
    ninja's 405 for a method a path does not take (ninja answers it itself, past the API's
    exception handlers)."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        if request.path.startswith(API_PREFIX):
            refusal = self.refusal(request)
            if refusal is not None:
                return refusal
            response = self.get_response(request)
            if isinstance(response, HttpResponseNotAllowed):
                return _method_not_allowed(request, response)
            return response
        return self.get_response(request)

    @staticmethod
    def refusal(request: HttpRequest) -> HttpResponse | None:
        """The error answer for a request no view could store, or None (also used by /mcp)."""
        problem = text_problem(request.path)
        if problem:
            return error_response(422, "invalid_path", f"The path {problem}.")
        for name, value in request.META.items():
            if name.startswith("HTTP_") and isinstance(value, str) and text_problem(value):
                return error_response(422, "invalid_header", f"The header {name[5:]} {text_problem(value)}.")
        try:
            query = request.GET
        except TooManyFieldsSent as exc:
            return error_response(422, "validation_error", str(exc))
        found = _field_problem(query)
        if found:
            key, problem = found
            return error_response(422, "invalid_query", f"The query parameter {key!r} {problem}.",
                                  {"loc": ["query", key]})
        if request.content_type == "multipart/form-data":
            # An upload (a workspace archive) is binary: its form fields are checked, its
            # files are streamed to disk by Django's upload handlers, not read in here.
            found = _field_problem(request.POST)
            return error_response(422, "invalid_form", f"The form field {found[0]!r} {found[1]}.") if found else None
        try:
            body = request.body
        except RequestDataTooBig as exc:
            return error_response(413, "payload_too_large", str(exc))
        found = body_problem(body) if body else None
        if found:
            code, message = found
            return error_response(422, code, message, {"loc": ["body"]})
        return None


def _field_problem(data) -> tuple[str, str] | None:
    """The first field of a QueryDict (a query or a form) whose name or a value PostgreSQL
    text could not hold, with the reason."""
    for key, values in data.lists():
        problem = text_problem(key) or next(filter(None, map(text_problem, values)), None)
        if problem:
            return key, problem
    return None


def _method_not_allowed(request: HttpRequest, response: HttpResponse) -> HttpResponse:
    allowed = sorted(method.strip() for method in response.get("Allow", "").split(",") if method.strip())
    answer = error_response(405, "method_not_allowed", f"{request.method} is not allowed here.",
                            {"allowed": allowed})
    answer["Allow"] = ", ".join(allowed)
    return answer


class PageInputGuard:
    """Outside /api/ (the dashboard, login, admin): a NUL (or lone surrogate) in the path,
    the query or a form field is a 400 page (templates/400.html), before any view puts it
    in a query PostgreSQL refuses with a 500. Django's forms refuse NUL already; this also
    covers the filters and search boxes views read from request.GET themselves."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        if not request.path.startswith(API_PREFIX):
            problem = self.problem(request)
            if problem:
                raise BadRequest(problem)
        return self.get_response(request)

    @staticmethod
    def problem(request: HttpRequest) -> str | None:
        if text_problem(request.path):
            return f"The path {text_problem(request.path)}."
        fields = [("query parameter", request.GET)]
        if request.method == "POST":
            fields.append(("form field", request.POST))
        for where, data in fields:
            found = _field_problem(data)
            if found:
                key, problem = found
                return f"The {where} {key!r} {problem}."
        return None


BUSY_RETRY_AFTER = 1  # seconds, as the API's 503 "busy" says (mnemo/api.py)


class PageBusy:
    """Outside /api/: a write that lost to conflicting writes past its retries
    (core.concurrency: a deadlock victim or a serialization failure, retried there a bounded
    number of times) is a 503 with Retry-After, not a 500 page. Nothing was stored: the
    transaction rolled back. A fetch or htmx request (the review queue's decisions) gets the
    sentence alone, which the page shows in its toast; a plain request gets templates/503.html.
    The API answers the same case itself in its error shape."""

    MESSAGE = "Mnemo was busy with conflicting writes and stored nothing; try again in a moment."

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        return self.get_response(request)

    def process_exception(self, request: HttpRequest, exception: Exception) -> HttpResponse | None:
        if request.path.startswith(API_PREFIX) or not isinstance(exception, OperationalError):
            return None
        if not is_retryable_conflict(exception):
            return None  # any other database error stays a 500, logged as one
        logger.warning("conflict retries exhausted", extra={"path": request.path,
                                                              "error": str(exception).splitlines()[0]})
        if request.headers.get("HX-Request") or request.headers.get("X-Requested-With"):
            response = HttpResponse(self.MESSAGE, status=503, content_type="text/plain; charset=utf-8")
        else:
            response = TemplateResponse(request, "503.html", {"message": self.MESSAGE}, status=503)
            response.render()
        response["Retry-After"] = str(BUSY_RETRY_AFTER)
        return response
