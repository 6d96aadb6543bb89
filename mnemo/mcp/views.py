"""/mcp: MCP's Streamable HTTP transport on the site's own WSGI workers.

The request is checked as an API request is (core.middleware's input refusals, the API
key and the rate limits of core.auth), then handed, as an ASGI request, to the SDK's
session manager in stateless, JSON-response mode: every POST carries one JSON-RPC
message and gets its answer in the response body, so no state outlives the request and
any web process can serve any call. asgiref runs the SDK's coroutine on an event loop of
its own while this thread waits, and runs the tools back in this thread
(mnemo.mcp.server). README "MCP" says why this and not an ASGI server."""

from __future__ import annotations

import json

import anyio
import mcp_types as types
from asgiref.sync import async_to_sync
from django.http import HttpRequest, HttpResponse
from django.views.decorators.csrf import csrf_exempt
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
from ninja.errors import AuthenticationError

from core.auth import WorkspaceImporting, authenticate
from core.errors import error_response
from core.middleware import ApiInputGuard
from core.ratelimit import RateLimited
from mnemo.api import api
from mnemo.mcp.server import current_request, server

# Headers of the SDK's answer that WSGI (or Django) sets itself.
_HOP_BY_HOP = {b"content-length", b"connection", b"transfer-encoding", b"keep-alive"}


def _refused(answer: HttpResponse) -> HttpResponse:
    """A REST error answer (the envelope) as a JSON-RPC error at the same HTTP status, which
    MCP clients surface as the request's error; Retry-After and WWW-Authenticate are kept."""
    envelope = json.loads(answer.content)
    body = {"jsonrpc": "2.0", "id": None,
            "error": {"code": types.INVALID_REQUEST, "message": envelope["error"]["message"], "data": envelope}}
    response = HttpResponse(json.dumps(body), status=answer.status_code, content_type="application/json")
    for header in ("Retry-After", "WWW-Authenticate", "Allow"):
        if header in answer:
            response[header] = answer[header]
    return response


@csrf_exempt
def mcp_endpoint(request: HttpRequest) -> HttpResponse:
    if request.method != "POST":
        # The transport would answer a GET with a server-sent-event stream that stays open
        # (holding a worker thread) and a DELETE with nothing to end: stateless servers
        # answer 405 to both, as the specification allows.
        answer = error_response(405, "method_not_allowed", f"{request.method} is not allowed here.",
                                {"allowed": ["POST"]})
        answer["Allow"] = "POST"
        return _refused(answer)
    refusal = ApiInputGuard.refusal(request)
    if refusal is not None:
        return _refused(refusal)
    try:
        api_key = authenticate(request)
    except (RateLimited, WorkspaceImporting) as exc:
        return _refused(api.on_exception(request, exc))
    if api_key is None:
        return _refused(api.on_exception(request, AuthenticationError()))
    request.auth = api_key
    return async_to_sync(_serve)(request)


def _scope(request: HttpRequest) -> dict:
    return {
        "type": "http", "asgi": {"version": "3.0"}, "http_version": "1.1", "method": request.method,
        "scheme": request.scheme, "path": request.path, "raw_path": request.path.encode(), "root_path": "",
        "query_string": request.META.get("QUERY_STRING", "").encode("latin-1"),
        # WSGI hands headers over as latin-1 text: back to the bytes they were.
        "headers": [(name.lower().encode("latin-1"), value.encode("latin-1")) for name, value in request.headers.items()],
        "client": (request.META.get("REMOTE_ADDR") or "", 0), "server": (request.get_host(), 0),
    }


async def _serve(request: HttpRequest) -> HttpResponse:
    current_request.set(request)
    answered = anyio.Event()
    start: dict = {}
    chunks: list[bytes] = []
    body_sent = False

    async def receive() -> dict:
        nonlocal body_sent
        if not body_sent:
            body_sent = True
            return {"type": "http.request", "body": request.body, "more_body": False}
        await answered.wait()  # the client stays connected until the answer is complete
        return {"type": "http.disconnect"}

    async def send(message: dict) -> None:
        if message["type"] == "http.response.start":
            start.update(message)
        elif message["type"] == "http.response.body":
            chunks.append(message.get("body", b""))
            if not message.get("more_body", False):
                answered.set()

    # A session manager lives for one request: stateless mode keeps nothing between them.
    manager = StreamableHTTPSessionManager(app=server, stateless=True, json_response=True)
    async with manager.run():
        await manager.handle_request(_scope(request), receive, send)
    answered.set()
    response = HttpResponse(b"".join(chunks), status=start.get("status", 500))
    for name, value in start.get("headers", []):
        if name.lower() not in _HOP_BY_HOP:
            response[name.decode("latin-1")] = value.decode("latin-1")
    return response
