"""What an MCP tool call costs over the REST call it wraps (issue 20), on the real launcher
(gunicorn sync workers serving /mcp through the SDK's stateless JSON-response transport).

Each pair calls the same operation both ways, one request at a time, alternating REST and
MCP so that a busy machine slows both alike: REST `GET /api/v1/entity-kinds` against the
MCP `tools/list` (the key and the transport, no database work beyond the key),
`GET /api/v1/entities/{id}` against `get_entity`, `POST /api/v1/recall` against `recall`,
and `POST /api/v1/interactions` against `log_interaction`. MCP calls are single JSON-RPC
POSTs, as a stateless client sends them; one more row times the SDK's own Client (httpx2)
calling `recall`, which adds the client's side.

    .venv/bin/python bench/mcp_overhead.py [--requests 300]
    .venv/bin/python bench/mcp_overhead.py --url http://127.0.0.1:8000 --key mn_...
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import statistics
import sys
import time
from pathlib import Path

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from bench.harness import launched, machine  # noqa: E402

ACCEPT = "application/json, text/event-stream"
_ids = itertools.count(1)


def _quantiles(timings: list[float]) -> dict:
    q = statistics.quantiles(timings, n=100)
    return {"p50": q[49] * 1000, "p95": q[94] * 1000}


def _timed_pair(first, second, requests: int) -> tuple[dict, dict]:
    for _ in range(20):  # warm up connections, caches and the query embedder
        first(), second()
    timings: tuple[list[float], list[float]] = ([], [])
    for _ in range(requests):
        for call, into in ((first, timings[0]), (second, timings[1])):
            t0 = time.perf_counter()
            call()
            into.append(time.perf_counter() - t0)
    return _quantiles(timings[0]), _quantiles(timings[1])


def _check(response: httpx.Response, mcp: bool = False) -> None:
    if response.status_code >= 300 or (mcp and response.json().get("result", {}).get("isError")):
        raise SystemExit(f"{response.request.url} answered {response.status_code}: {response.text[:300]}")


def run(base: str, key: str, requests: int) -> None:
    headers = {"Authorization": f"Bearer {key}"}
    counter = itertools.count()

    def message(n: int) -> dict:
        return {"channel": "bench", "channel_id": "mcp-bench", "content": f"bench message {n} about the release",
                "external_id": f"mcp-bench-{n}"}

    with httpx.Client(base_url=base, headers=headers, timeout=60) as client:
        def mcp(method: str, params: dict | None = None):
            body = {"jsonrpc": "2.0", "id": next(_ids), "method": method, "params": params or {}}
            response = client.post("/mcp", json=body, headers={"Accept": ACCEPT})
            _check(response, mcp=True)

        def tool(name: str, arguments: dict):
            return mcp("tools/call", {"name": name, "arguments": arguments})

        def rest(method: str, path: str, body: dict | None = None):
            _check(client.request(method, f"/api/v1{path}", json=body))

        recall = {"query": "what about the release", "limit": 10}
        rest("POST", "/interactions", message(next(counter)))
        entity = client.get("/api/v1/entities", params={"q": "mcp-bench"}).json()["items"][0]["id"]
        pairs = [
            ("key only: entity-kinds · tools/list", lambda: rest("GET", "/entity-kinds"), lambda: mcp("tools/list")),
            ("get an entity", lambda: rest("GET", f"/entities/{entity}"),
             lambda: tool("get_entity", {"entity_id": entity})),
            ("recall", lambda: rest("POST", "/recall", recall), lambda: tool("recall", recall)),
            ("log an interaction", lambda: rest("POST", "/interactions", message(next(counter))),
             lambda: tool("log_interaction", message(next(counter)))),
        ]
        print(f"{'operation':<38} {'REST p50':>9} {'p95':>8} {'MCP p50':>9} {'p95':>8} {'overhead p50':>13}")
        for name, rest_call, mcp_call in pairs:
            r, m = _timed_pair(rest_call, mcp_call, requests)
            print(f"{name:<38} {r['p50']:>7.1f}ms {r['p95']:>6.1f}ms {m['p50']:>7.1f}ms {m['p95']:>6.1f}ms "
                  f"{m['p50'] - r['p50']:>+11.1f}ms", flush=True)
    sdk = asyncio.run(_sdk_recall(base, key, recall, requests))
    print(f"{'recall through the SDK Client':<38} {'':>9} {'':>8} {sdk['p50']:>7.1f}ms {sdk['p95']:>6.1f}ms")


async def _sdk_recall(base: str, key: str, arguments: dict, requests: int) -> dict:
    import httpx2
    from mcp import Client
    from mcp.client.streamable_http import streamable_http_client

    async with httpx2.AsyncClient(headers={"Authorization": f"Bearer {key}"}, timeout=60) as http:
        async with Client(streamable_http_client(f"{base}/mcp", http_client=http)) as client:
            for _ in range(20):
                await client.call_tool("recall", arguments)
            timings = []
            for _ in range(requests):
                t0 = time.perf_counter()
                result = await client.call_tool("recall", arguments)
                timings.append(time.perf_counter() - t0)
                if result.is_error:
                    raise SystemExit(f"recall failed: {result.content}")
    return _quantiles(timings)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--url")
    parser.add_argument("--key", help="a key with the read and write scopes")
    parser.add_argument("--requests", type=int, default=300)
    args = parser.parse_args()
    if args.url:
        if not args.key:
            parser.error("--url needs --key")
        run(args.url.rstrip("/"), args.key, args.requests)
    else:
        print("starting Mnemo with the real launcher in a temporary var/ …", flush=True)
        with launched() as mnemo:
            run(mnemo.url, mnemo.key, args.requests)
    print(f"machine: {machine()} · {args.requests} calls per cell, one at a time")


if __name__ == "__main__":
    main()
