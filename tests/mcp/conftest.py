"""The MCP tests drive a live server (pytest-django's live_server, a real HTTP server in a
thread of the test process) with the official SDK's own client."""

from __future__ import annotations

import asyncio
import json

import pytest

GITHUB_TOKEN = "ghp_" + "aB3dE5gH7jK9mN1pQ3sT5vW7yZ9bC1dF3hJ5"


def run_mcp(url: str, key: str | None, session):
    """Connect the SDK's Client to `url` over Streamable HTTP with `key`, and run
    `await session(client)`; its result is returned."""
    import httpx2
    from mcp import Client
    from mcp.client.streamable_http import streamable_http_client

    async def go():
        headers = {"Authorization": f"Bearer {key}"} if key else {}
        async with httpx2.AsyncClient(headers=headers, timeout=60) as http:
            async with Client(streamable_http_client(url, http_client=http)) as client:
                return await session(client)

    try:
        return asyncio.run(go())
    except BaseExceptionGroup as group:  # anyio's task groups wrap what failed inside them
        while isinstance(group, BaseExceptionGroup) and len(group.exceptions) == 1:
            group = group.exceptions[0]
        raise group from None


def payload(result) -> dict:
    """What a tool answered: its JSON text, which is also its structured content."""
    [content] = result.content
    body = json.loads(content.text)
    assert result.structured_content == (body if isinstance(body, dict) else {"result": body})
    return body


def tool_error(result, code: str) -> dict:
    """A tool error carrying the REST error envelope with `code`."""
    assert result.is_error, result
    body = payload(result)
    assert set(body) == {"error"} and set(body["error"]) == {"code", "message", "details"}, body
    assert body["error"]["code"] == code, body
    return body["error"]


@pytest.fixture
def mcp_url(live_server) -> str:
    return live_server.url + "/mcp"


