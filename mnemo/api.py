"""The one NinjaAPI at /api/v1/. Each app mounts its router here. Every error leaves in
one shape: {"error": {"code", "message", "details"}} (HOUSE_STYLE.md)."""

from __future__ import annotations

import json
import logging

from django.core.exceptions import ObjectDoesNotExist, PermissionDenied
from django.db import OperationalError
from django.core.exceptions import ValidationError as DjangoValidationError
from django.http import Http404, HttpRequest, HttpResponse
from ninja import NinjaAPI
from ninja.errors import AuthenticationError, HttpError
from ninja.errors import ValidationError as NinjaValidationError

from conversations.api import conversations_router
from conversations.api import router as interactions_router
from core.api import router as core_router
from entities.api import router as entities_router
from entities.api_decisions import router as decisions_router
from memory.api import router as memory_router
from context.api import router as context_router
from review.api import router as review_router
from core.concurrency import is_retryable_conflict
from core.errors import ApiError
from core.providers.base import ProviderError
from core.logging import request_id_var
from mnemo.auth import MissingScope

logger = logging.getLogger("mnemo.api")

api = NinjaAPI(
    title="Mnemo API",
    version="1",
    description=(
        "Memory for AI agents that a team can see and correct. Authenticate with "
        "`Authorization: Bearer mn_<prefix>_<secret>`; the key decides the workspace."
    ),
    docs_url="/docs",
    urls_namespace="api",
)


def error_response(status: int, code: str, message: str, details=None) -> HttpResponse:
    body = {"error": {"code": code, "message": message, "details": details if details is not None else {}}}
    return HttpResponse(json.dumps(body, default=str), status=status, content_type="application/json")


_STATUS_CODES = {
    400: "bad_request",
    401: "unauthorized",
    403: "forbidden",
    404: "not_found",
    405: "method_not_allowed",
    409: "conflict",
    422: "validation_error",
    429: "rate_limited",
}


@api.exception_handler(ApiError)
def _api_error(request: HttpRequest, exc: ApiError) -> HttpResponse:
    return error_response(exc.status, exc.code, exc.message, exc.details)


@api.exception_handler(AuthenticationError)
def _unauthorized(request: HttpRequest, exc: AuthenticationError) -> HttpResponse:
    response = error_response(
        401, "unauthorized", "A valid API key is required: Authorization: Bearer mn_<prefix>_<secret>."
    )
    response["WWW-Authenticate"] = "Bearer"
    return response


@api.exception_handler(MissingScope)
def _missing_scope(request: HttpRequest, exc: MissingScope) -> HttpResponse:
    return error_response(403, "forbidden", str(exc), {"required_scope": exc.scope})


@api.exception_handler(PermissionDenied)
def _forbidden(request: HttpRequest, exc: PermissionDenied) -> HttpResponse:
    return error_response(403, "forbidden", str(exc) or "Not allowed.")


@api.exception_handler(NinjaValidationError)
def _invalid(request: HttpRequest, exc: NinjaValidationError) -> HttpResponse:
    errors = [
        {"loc": list(err.get("loc", [])), "msg": err.get("msg", ""), "type": err.get("type", "")}
        for err in exc.errors
    ]
    return error_response(422, "validation_error", "The request did not validate.", {"errors": errors})


@api.exception_handler(DjangoValidationError)
def _invalid_model(request: HttpRequest, exc: DjangoValidationError) -> HttpResponse:
    details = exc.message_dict if hasattr(exc, "error_dict") else {"errors": exc.messages}
    return error_response(422, "validation_error", "; ".join(exc.messages), details)


@api.exception_handler(HttpError)
def _http_error(request: HttpRequest, exc: HttpError) -> HttpResponse:
    # ninja turns an unparseable body into HttpError(400, "Cannot parse request body").
    if exc.status_code == 400 and isinstance(exc.__cause__, ValueError):
        return error_response(422, "malformed_json", "The request body is not valid JSON.")
    return error_response(exc.status_code, _STATUS_CODES.get(exc.status_code, "error"), str(exc))


@api.exception_handler(Http404)
def _not_found(request: HttpRequest, exc: Exception) -> HttpResponse:
    return error_response(404, "not_found", "Not found.")


@api.exception_handler(ObjectDoesNotExist)
def _does_not_exist(request: HttpRequest, exc: Exception) -> HttpResponse:
    return error_response(404, "not_found", "Not found.")


@api.exception_handler(ProviderError)
def _provider_unavailable(request: HttpRequest, exc: ProviderError) -> HttpResponse:
    # The embedding model (or LLM) behind a request failed: the query itself may be fine.
    logger.warning("provider failed", extra={"path": request.path, "error": str(exc)})
    return error_response(503, "provider_unavailable", f"The model provider failed: {exc}",
                          {"retryable": exc.retryable})


@api.exception_handler(OperationalError)
def _database_busy(request: HttpRequest, exc: OperationalError) -> HttpResponse:
    # A deadlock or serialization failure the service's retries did not get past
    # (core.concurrency): nothing was stored, and the same request can be sent again.
    if not is_retryable_conflict(exc):
        return _server_error(request, exc)
    logger.warning("conflict retries exhausted", extra={"path": request.path, "error": str(exc).splitlines()[0]})
    response = error_response(503, "busy", "The database was busy with conflicting writes; nothing was stored. "
                              "Send the request again.", {"retryable": True})
    response["Retry-After"] = "1"
    return response


@api.exception_handler(Exception)
def _server_error(request: HttpRequest, exc: Exception) -> HttpResponse:
    logger.exception("unhandled API error", extra={"path": request.path})
    return error_response(
        500, "server_error", "Internal error; the request id helps find it in the logs.",
        {"request_id": request_id_var.get()},
    )


api.add_router("/", core_router)
api.add_router("/", interactions_router)
api.add_router("/", conversations_router)
api.add_router("/", entities_router)
api.add_router("/", decisions_router)
api.add_router("/", memory_router)
api.add_router("/", context_router)
api.add_router("/", review_router)
