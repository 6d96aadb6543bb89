"""The one NinjaAPI at /api/v1/. Each app mounts its router here. Every error leaves in
one shape: {"error": {"code", "message", "details"}} (HOUSE_STYLE.md)."""

from __future__ import annotations

import json
import logging
import math

from django.core.exceptions import ObjectDoesNotExist, PermissionDenied
from django.db import OperationalError
from django.core.exceptions import ValidationError as DjangoValidationError
from django.http import Http404, HttpRequest, HttpResponse
from ninja import NinjaAPI, Schema
from ninja.errors import AuthenticationError, HttpError
from ninja.errors import ValidationError as NinjaValidationError
from ninja.parser import Parser

from conversations.api import conversations_router
from conversations.api import router as interactions_router
from conversations.api_rebuild import router as rebuild_router
from core.api import router as core_router
from core.api_archive import router as archive_router
from entities.api import router as entities_router
from entities.api_decisions import router as decisions_router
from memory.api import router as memory_router
from context.api import router as context_router
from review.api import router as review_router
from gaps.api import router as gaps_router
from webhooks.api import router as webhooks_router
from core.auth import MissingScope
from core.concurrency import is_retryable_conflict
from core.errors import ApiError, error_response
from core.safe_text import SECRET_CODE, SecretRefused
from core.providers.base import ProviderError
from core.logging import request_id_var
from core.ratelimit import RateLimited

logger = logging.getLogger("mnemo.api")


class StrictJsonParser(Parser):
    """JSON whose numbers PostgreSQL's jsonb takes: Python's parser also reads NaN and
    Infinity (not JSON) and turns 1e400 into infinity; here each is a malformed body (422)
    instead of a database error (issue 16)."""

    def parse_body(self, request: HttpRequest):
        return json.loads(request.body, parse_constant=_not_json, parse_float=_finite)


def _not_json(constant: str):
    raise ValueError(f"{constant} is not a JSON value")


def _finite(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise ValueError(f"{text} is beyond a double")
    return value


class ErrorDetailOut(Schema):
    code: str
    message: str
    details: dict


class ErrorOut(Schema):
    error: ErrorDetailOut


# The answers every operation may give besides its own (HOUSE_STYLE.md's error shape):
# (status, which operations, description).
_ERROR_ANSWERS = (
    (401, "authenticated", "No valid API key."),
    (403, "authenticated", "The key lacks the scope this operation needs."),
    (404, "authenticated", "Not found, or in another workspace."),
    (409, "write", "Conflicts with the current state (a version, a link another entity owns)."),
    (413, "body", "The body is larger than DATA_UPLOAD_MAX_MEMORY_SIZE."),
    (422, "all", "Invalid input: validation, malformed JSON, a NUL character, JSON nested too deep."),
    (429, "all", "Too many requests; retry after the Retry-After header's seconds."),
    (503, "authenticated", "A model provider (embedding model, LLM) failed; details.retryable says if retrying helps."),
)


class MnemoApi(NinjaAPI):
    def get_openapi_schema(self, *, path_prefix=None, path_params=None):
        """ninja documents only the answers an operation declares; the error answers come
        from handlers shared by all operations, so they are added here, to every operation
        they apply to, with the error shape as their schema."""
        schema = super().get_openapi_schema(path_prefix=path_prefix, path_params=path_params)
        error_schema = ErrorOut.model_json_schema(ref_template="#/components/schemas/{model}")
        components = schema["components"].setdefault("schemas", {})
        components.update(error_schema.pop("$defs"), ErrorOut=error_schema)
        for operations in schema["paths"].values():
            for method, operation in operations.items():
                applies = {"all": True, "authenticated": bool(operation.get("security")),
                           "write": method in ("post", "put", "patch", "delete"),
                           "body": "requestBody" in operation}
                for status, which, description in _ERROR_ANSWERS:
                    if applies[which]:
                        operation["responses"].setdefault(status, {
                            "description": description,
                            "content": {"application/json": {"schema": {"$ref": "#/components/schemas/ErrorOut"}}},
                        })
        return schema


api = MnemoApi(
    title="Mnemo API",
    version="1",
    description=(
        "Memory for AI agents that a team can see and correct. Authenticate with "
        "`Authorization: Bearer mn_<prefix>_<secret>`; the key decides the workspace."
    ),
    docs_url="/docs",
    urls_namespace="api",
    parser=StrictJsonParser(),
)


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


@api.exception_handler(RateLimited)
def _rate_limited(request: HttpRequest, exc: RateLimited) -> HttpResponse:
    response = error_response(429, "rate_limited", str(exc), {"limit": exc.limit, "retry_after": exc.retry_after})
    response["Retry-After"] = str(exc.retry_after)
    return response


@api.exception_handler(PermissionDenied)
def _forbidden(request: HttpRequest, exc: PermissionDenied) -> HttpResponse:
    return error_response(403, "forbidden", str(exc) or "Not allowed.")


def _field_name(err: dict) -> str:
    """`aliases[1]` for loc ("body", "payload", "aliases", 1): the request part and the
    endpoint's parameter name are left out; `at` is where inside a JSON value."""
    loc = list(err.get("loc", []))[1:]
    if err.get("loc", [None])[0] == "body" and len(loc) > 1:
        loc = loc[1:]
    name = ""
    for part in loc:
        name += f"[{part}]" if isinstance(part, int) else (f".{part}" if name else str(part))
    at = (err.get("ctx") or {}).get("at")
    if at:
        name += at if at.startswith("[") else f".{at}"
    return name


@api.exception_handler(NinjaValidationError)
def _invalid(request: HttpRequest, exc: NinjaValidationError) -> HttpResponse:
    errors = [
        {"loc": list(err.get("loc", [])), "msg": err.get("msg", ""), "type": err.get("type", "")}
        for err in exc.errors
    ]
    secret = next((err for err in exc.errors if err.get("type") == SECRET_CODE), None)
    if secret is not None:
        field, rule = _field_name(secret), secret["ctx"]["rule"]
        return error_response(422, SECRET_CODE, f"{field} {secret['msg']}",
                              {"field": field, "rule": rule, "errors": errors})
    return error_response(422, "validation_error", "The request did not validate.", {"errors": errors})


@api.exception_handler(SecretRefused)
def _secret_refused(request: HttpRequest, exc: SecretRefused) -> HttpResponse:
    return error_response(422, SECRET_CODE, "; ".join(exc.messages), {"field": exc.field, "rule": exc.rule})


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
api.add_router("/", archive_router)
api.add_router("/", rebuild_router)
api.add_router("/", interactions_router)
api.add_router("/", conversations_router)
api.add_router("/", entities_router)
api.add_router("/", decisions_router)
api.add_router("/", memory_router)
api.add_router("/", context_router)
api.add_router("/", review_router)
api.add_router("/", gaps_router)
api.add_router("/", webhooks_router)
