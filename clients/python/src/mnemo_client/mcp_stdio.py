"""`mnemo mcp`: an MCP server on stdin/stdout for local MCP clients (Claude Desktop, IDEs,
agent frameworks that start their tools as commands), bridged to a running Mnemo's /mcp
endpoint over Streamable HTTP with an API key.

Every tool, resource and error is Mnemo's own: the bridge lists what the server lists and
passes each call through, so a scope refusal or a secret in an argument comes back exactly
as the server answered it. Nothing is stored locally.

The `mcp` package is an optional dependency (`pip install 'mnemo-client[mcp]'`); it is
imported only when the bridge runs. Run as a module with MNEMO_URL and MNEMO_API_KEY set:

    MNEMO_URL=http://127.0.0.1:8000 MNEMO_API_KEY=mn_… python -m mnemo_client.mcp_stdio
"""

from __future__ import annotations

import os
import sys
from contextlib import AsyncExitStack

# Tool calls wait for Mnemo as long as a REST call may (a context pack on a large workspace).
TIMEOUT_SECONDS = 60.0


def endpoint(url: str) -> str:
    """The /mcp endpoint of the Mnemo at `url` (the site's address, or the endpoint itself)."""
    url = url.rstrip("/")
    return url if url.endswith("/mcp") else url + "/mcp"


def main(url: str, api_key: str) -> int:
    """Serve MCP on stdin/stdout until the client closes stdin; 0 then, 1 when Mnemo cannot
    be reached or refuses the key, 2 when the `mcp` package is missing."""
    try:
        import anyio
        import httpx2
        from mcp import Client
        from mcp.client.streamable_http import streamable_http_client
        from mcp.server.lowlevel import Server
        from mcp.server.stdio import stdio_server
        from mcp.shared.exceptions import MCPError
    except ImportError as exc:
        print(f"mnemo mcp needs the MCP SDK ({exc.name} is missing): pip install 'mnemo-client[mcp]'",
              file=sys.stderr)
        return 2

    async def bridge() -> int:
        headers = {"Authorization": f"Bearer {api_key}"}
        async with AsyncExitStack() as stack:
            http = await stack.enter_async_context(httpx2.AsyncClient(headers=headers, timeout=TIMEOUT_SECONDS))
            try:
                remote = await stack.enter_async_context(Client(streamable_http_client(endpoint(url), http_client=http)))
                # Asked once before serving, so a wrong URL or key fails here, on stderr.
                await remote.list_tools()
            except Exception as exc:
                print(f"mnemo mcp: cannot use {endpoint(url)}: {_reason(exc)}", file=sys.stderr)
                return 1
            await _serve(remote)
        return 0

    async def _serve(remote) -> None:
        async def relay(call):
            # A protocol error from Mnemo (an unknown resource) is passed on as it came.
            try:
                return await call
            except MCPError:
                raise
            except Exception as exc:  # Mnemo went away mid-session: an error for this call, not a crash
                raise MCPError(code=-32603, message=f"Mnemo did not answer: {_reason(exc)}") from None

        server = Server(
            "mnemo", title="Mnemo", instructions=remote.instructions,
            on_list_tools=lambda ctx, params: relay(remote.list_tools(cursor=_cursor(params))),
            on_call_tool=lambda ctx, params: relay(remote.call_tool(params.name, params.arguments)),
            on_list_resources=lambda ctx, params: relay(remote.list_resources(cursor=_cursor(params))),
            on_list_resource_templates=lambda ctx, params: relay(
                remote.list_resource_templates(cursor=_cursor(params))),
            on_read_resource=lambda ctx, params: relay(remote.read_resource(str(params.uri))),
        )
        async with stdio_server() as (read_stream, write_stream):
            await server.run(read_stream, write_stream, server.create_initialization_options())

    return anyio.run(bridge)


def _cursor(params) -> str | None:
    return getattr(params, "cursor", None) if params is not None else None


def _reason(exc: BaseException) -> str:
    # anyio wraps what failed inside a task group: the first leaf says what happened.
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    return str(exc) or type(exc).__name__


if __name__ == "__main__":
    missing = [name for name in ("MNEMO_URL", "MNEMO_API_KEY") if not os.environ.get(name)]
    if missing:
        print(f"mnemo mcp: set {' and '.join(missing)}", file=sys.stderr)
        sys.exit(2)
    sys.exit(main(os.environ["MNEMO_URL"], os.environ["MNEMO_API_KEY"]))
