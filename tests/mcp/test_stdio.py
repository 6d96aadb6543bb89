"""`mnemo mcp` (clients/python/src/mnemo_client/mcp_stdio.py): an stdio MCP server bridged
to a live Mnemo's /mcp, spawned as a local MCP client spawns it and driven with the SDK's
own stdio client. Run by its path: the module needs nothing else of the client package."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
from pathlib import Path

import pytest

from conversations.models import Interaction
from tests.mcp.conftest import GITHUB_TOKEN, payload, tool_error

pytestmark = pytest.mark.django_db(transaction=True)

MODULE = Path(__file__).resolve().parents[2] / "clients" / "python" / "src" / "mnemo_client" / "mcp_stdio.py"


def _environment(url: str | None, key: str | None) -> dict:
    env = dict(os.environ)
    env.pop("MNEMO_URL", None)
    env.pop("MNEMO_API_KEY", None)
    if url:
        env["MNEMO_URL"] = url
    if key:
        env["MNEMO_API_KEY"] = key
    return env


def run_stdio(url: str, key: str, session):
    from mcp import Client
    from mcp.client.stdio import StdioServerParameters

    params = StdioServerParameters(command=sys.executable, args=[str(MODULE)], env=_environment(url, key))

    async def go():
        async with Client(params) as client:
            return await session(client)

    return asyncio.run(go())


def test_a_local_client_uses_mnemo_through_the_stdio_bridge(live_server, write_key):
    async def session(client):
        tools = await client.list_tools()
        templates = await client.list_resource_templates()
        logged = payload(await client.call_tool("log_interaction", {"channel": "cli", "channel_id": "dev",
                                                                    "content": "The build server is ci-7."}))
        recalled = payload(await client.call_tool("recall", {"query": "build server"}))
        profile = await client.read_resource(f"mnemo://entities/{logged['entity_id']}/profile")
        return tools, templates, logged, recalled, profile, client.instructions

    tools, templates, logged, recalled, profile, instructions = run_stdio(live_server.url, write_key, session)
    assert "get_context_pack" in {tool.name for tool in tools.tools}
    assert len(templates.resource_templates) == 2 and "context pack" in instructions
    assert Interaction.objects.get(pk=logged["id"]).content == "The build server is ci-7."
    assert recalled["results"][0]["id"] == logged["id"]
    assert '"channel_id": "dev"' in profile.contents[0].text


def test_refusals_pass_through_the_bridge_as_mnemo_answered_them(live_server, read_key, outsider_key):
    async def reader(client):
        return (await client.call_tool("remember", {"text": "x"}),
                await client.call_tool("recall", {"query": GITHUB_TOKEN}),
                await client.call_tool("recall", {"limit": 0}))

    refused, secret, invalid = run_stdio(live_server.url + "/mcp/", read_key, reader)  # the endpoint works too
    assert tool_error(refused, "forbidden")["message"] == "This API key lacks the 'write' scope."
    assert tool_error(secret, "secret_detected")["details"]["field"] == "query"
    assert tool_error(invalid, "validation_error")

    async def outsider(client):
        from mcp.shared.exceptions import MCPError

        with pytest.raises(MCPError) as missing:
            await client.read_resource("mnemo://entities/1/profile")
        return await client.call_tool("get_entity", {"entity_id": 1}), missing.value

    not_found, missing = run_stdio(live_server.url, outsider_key, outsider)
    assert tool_error(not_found, "not_found") and missing.error.code == -32002


def _spawn(url: str | None, key: str | None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(MODULE)], env=_environment(url, key), input="", capture_output=True,
                          text=True, timeout=120)


def test_a_wrong_key_or_address_fails_at_start_on_stderr(live_server):
    wrong_key = _spawn(live_server.url, "mn_wrong_key")
    assert wrong_key.returncode == 1 and wrong_key.stdout == ""
    assert "A valid API key is required" in wrong_key.stderr
    assert "mn_wrong_key" not in wrong_key.stderr

    nobody = _spawn("http://127.0.0.1:9", "mn_some_key")  # the discard port: nothing listens
    assert nobody.returncode == 1 and "cannot use http://127.0.0.1:9/mcp" in nobody.stderr


def test_without_its_settings_it_says_which_are_missing(db):
    missing = _spawn(None, None)
    assert missing.returncode == 2 and "MNEMO_URL and MNEMO_API_KEY" in missing.stderr


def test_main_takes_the_address_and_key_as_arguments(live_server, read_key):
    # What the client package's `mnemo mcp` calls: main(url, key) -> exit code.
    code = ("import importlib.util, sys; "
            f"spec = importlib.util.spec_from_file_location('mcp_stdio', {str(MODULE)!r}); "
            "bridge = importlib.util.module_from_spec(spec); spec.loader.exec_module(bridge); "
            f"sys.exit(bridge.main({live_server.url!r}, 'mn_x_y'))")
    finished = subprocess.run([sys.executable, "-c", code], env=_environment(None, None), input="",
                              capture_output=True, text=True, timeout=120)
    assert finished.returncode == 1 and "A valid API key is required" in finished.stderr
