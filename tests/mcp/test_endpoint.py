"""/mcp answers every request, however odd, without a 5xx (in-process, Django's test client):
methods the stateless transport does not take, bodies that are not JSON-RPC, arguments of the
wrong shape, what core.middleware refuses for the REST API."""

from __future__ import annotations

import json

import pytest
from django.test import Client

from conversations.models import Interaction

ACCEPT = "application/json, text/event-stream"


def _call(name: str, arguments) -> dict:
    return {"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {"name": name, "arguments": arguments}}


@pytest.fixture
def post(workspace, make_key):
    _, key = make_key(workspace, scopes="read,write")
    client = Client()

    def send(body, content_type="application/json", **headers):
        raw = body if isinstance(body, (bytes, str)) else json.dumps(body)
        return client.post("/mcp", raw, content_type=content_type,
                           headers={"Authorization": f"Bearer {key}", "Accept": ACCEPT, **headers})

    send.client, send.key = client, key
    return send


@pytest.mark.parametrize("body", [
    b"", b"null", b"[]", b"{}", b"{not json", b'"a string"', b"1e400",
    {"jsonrpc": "2.0", "id": 1, "method": "no/such/method"},
    {"jsonrpc": "2.0", "id": 1, "method": "tools/call"},
    {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"arguments": {}}},
    _call("recall", [1, 2]), _call("recall", "query"), _call(7, {}),
    {"jsonrpc": "2.0", "id": 1, "method": "resources/read", "params": {"uri": "mnemo://entities/x/profile"}},
    {"jsonrpc": "2.0", "id": 1, "method": "resources/read", "params": {"uri": "mnemo://entities/99999999999999999999/profile"}},
    {"jsonrpc": "2.0", "id": 1, "method": "resources/read", "params": {"uri": "file:///etc/passwd"}},
    [_call("recall", {"query": "a"}), _call("recall", {"query": "b"})],  # a batch
    _call("log_interaction", {"channel": "cli", "channel_id": "x", "content": "a\u0000b"}),
    _call("log_interaction", {"channel": "cli", "channel_id": "x", "content": "\ud800"}),
    _call("put_scratchpad", {"task": "t", "state": json.loads("[" * 60 + "]" * 60)}),
    b'{"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "put_scratchpad", "arguments": {"task": "t", "state": '
    + b"[" * 5000 + b"]" * 5000 + b"}}}",
])
def test_odd_bodies_get_an_answer_never_a_5xx(post, body):
    answer = post(body)
    assert answer.status_code < 500, answer.content
    assert not Interaction.objects.exists()


@pytest.mark.parametrize("method", ["get", "put", "patch", "delete", "options", "head"])
def test_only_post_is_served_and_a_get_opens_no_stream(post, method):
    # A GET would open a server-sent-event stream that holds a worker thread for good.
    answer = getattr(post.client, method)("/mcp", headers={"Authorization": f"Bearer {post.key}", "Accept": ACCEPT})
    assert answer.status_code == 405 and answer["Allow"] == "POST"
    if method != "head":
        assert answer.json()["error"]["data"]["error"]["details"] == {"allowed": ["POST"]}


def test_a_wrong_content_type_or_accept_header_is_a_4xx(post):
    assert 400 <= post(_call("recall", {"query": "x"}), content_type="text/plain").status_code < 500
    assert 400 <= post(_call("recall", {"query": "x"}), Accept="text/html").status_code < 500


def test_a_tool_call_answers_in_the_post_body_without_a_session(post):
    answer = post(_call("recall", {"query": "anything"}))
    assert answer.status_code == 200 and answer["Content-Type"].startswith("application/json")
    assert "mcp-session-id" not in answer
    assert answer.json()["result"]["structuredContent"] == {"results": [], "followed": None}


def test_tools_run_in_the_thread_serving_the_request(post, monkeypatch):
    # So they use the request's database connection, closed when the request finishes,
    # and see its transaction: not a connection of asgiref's executor thread left open.
    import threading

    from mnemo.mcp import server

    threads, call_tool = [], server.call_tool
    monkeypatch.setattr(server, "call_tool", lambda *args: threads.append(threading.get_ident()) or call_tool(*args))
    assert post(_call("recall", {"query": "x"})).status_code == 200
    assert threads == [threading.get_ident()]


def test_each_tool_that_is_a_rest_operation_needs_that_operations_scope():
    from context import api as context_api
    from conversations import api as conversations_api
    from entities import api as entities_api
    from entities import api_decisions
    from gaps import api as gaps_api
    from memory import api as memory_api
    from mnemo.mcp.tools import TOOLS

    scopes = {op.view_func: op.auth_callbacks[0].scope
              for module in (context_api, conversations_api, entities_api, api_decisions, gaps_api, memory_api)
              for path_view in module.router.path_operations.values() for op in path_view.operations}
    direct = [tool for tool in TOOLS if tool.run in scopes]
    assert len(direct) >= 8
    assert [(tool.name, tool.scope) for tool in direct] == [(tool.name, scopes[tool.run]) for tool in direct]
