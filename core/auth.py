"""API-key authentication for the NinjaAPI: `Authorization: Bearer mn_<prefix>_<secret>`.

The workspace comes from the key, never from the request body. Each operation names the
scope it needs: `auth=require("write")`. A missing, malformed, revoked or expired key is a
401; a valid key without the scope is a 403.

Every call counts against the client address's limit, a valid key against its own, and a
rejected key (unknown, wrong, revoked, expired) against the address's failed-key limit (core/ratelimit.py): past a
limit the answer is a 429, and a rejected key past it is no longer written to the audit log."""

from __future__ import annotations

from django.http import HttpRequest
from ninja.security.http import HttpAuthBase

from core import ratelimit
from core.errors import ApiError
from core.logging import api_key_var
from core.models import ApiKey, Scope
from core.selectors import workspace_importing
from core.services import api_key_rejection_record, api_key_verify


class MissingScope(Exception):
    def __init__(self, scope: str):
        self.scope = scope
        super().__init__(f"This API key lacks the {scope!r} scope.")


class WorkspaceImporting(ApiError):
    """An archive import is loading the key's workspace (core.models.ImportProgress): nothing
    of it is served until the import's last transaction commits."""

    status = 409
    code = "workspace_importing"

    def __init__(self):
        super().__init__("This workspace is being imported from an archive; it is usable once the import ends.")


class ApiKeyAuth(HttpAuthBase):
    openapi_scheme = "bearer"

    def __init__(self, scope: str, during_import: bool = False):
        if scope not in Scope.values:
            raise ValueError(f"unknown scope {scope!r}")
        self.scope = scope
        self.during_import = during_import
        super().__init__()

    def __call__(self, request: HttpRequest) -> ApiKey | None:
        api_key = authenticate(request, during_import=self.during_import)
        if api_key is not None:
            check_scope(api_key, self.scope)
        return api_key


def authenticate(request: HttpRequest, *, during_import: bool = False) -> ApiKey | None:
    """The request's valid API key, counted against the rate limits, with
    `request.workspace` set; None when none (or no valid one) was presented. The scope is
    the caller's to check: the REST API per operation, the MCP endpoint per tool. A key of
    a workspace an import is loading raises WorkspaceImporting unless `during_import` (the
    import's own state)."""
    ratelimit.api_request_count(request)
    # Unlike ninja's HttpBearer, never log the header: it carries the secret.
    header = request.headers.get("Authorization", "")
    scheme, _, token = header.partition(" ")
    token = token.strip() if scheme.lower() == "bearer" else ""
    if not token:
        return None  # nothing presented, nothing guessed: only the address's limit counts it
    api_key = api_key_verify(token)
    if api_key is None:
        # Counted first: past the limit the RateLimited raised here stops the audit row too.
        ratelimit.failed_auth_count(request)
        api_key_rejection_record(presented=token, client_address=ratelimit.client_address(request))
        return None
    ratelimit.api_key_count(request, key_prefix=api_key.prefix)
    if not during_import and workspace_importing(workspace_id=api_key.workspace_id):
        raise WorkspaceImporting()
    request.workspace = api_key.workspace
    api_key_var.set(api_key.pk)  # who proposes what this request opens for review (issue 20)
    return api_key


def check_scope(api_key: ApiKey, scope: str) -> None:
    if not api_key.has_scope(scope):
        raise MissingScope(scope)


_instances = {(scope, during): ApiKeyAuth(scope, during) for scope in Scope.values for during in (False, True)}


def require(scope: str, *, during_import: bool = False) -> ApiKeyAuth:
    """`during_import`: also while an import loads the workspace (only the import's state)."""
    return _instances[(scope, during_import)]
