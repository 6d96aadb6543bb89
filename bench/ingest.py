"""Ingest benchmark (issue: interaction log). Starts a throw-away Mnemo with the real
launcher and measures, through the public API only:

1. batch ingest: batches of 500 interactions, one client, embedding deferred to Celery;
2. worker throughput: interactions embedded per second while draining that backlog;
3. single-item POST /interactions latency (p50/p95/p99), with the worker idle;
4. lag from ingest to searchable (embedded) at a steady 20 interactions/s, from each
   interaction's own created_at and processed_at.

    .venv/bin/python bench/ingest.py [--batches 40] [--singles 1000] [--steady-seconds 60]
    .venv/bin/python bench/ingest.py --broker redis   # CELERY_BROKER_URL=redis://127.0.0.1:6379/14

Message texts are LoCoMo turns when ../shared/bench is present (realistic lengths for
the embedder), otherwise generated sentences.
"""

from __future__ import annotations

import argparse
import itertools
import statistics
import sys
import time
from datetime import datetime
from pathlib import Path

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from bench import locomo_data  # noqa: E402
from bench.harness import launched, machine, percentiles  # noqa: E402


def texts() -> itertools.cycle:
    if locomo_data.available():
        turns = [item["content"] for sample in locomo_data.load() for item in locomo_data.interactions(sample)]
        return itertools.cycle(turns)
    words = "garden launch budget painting hiking review puppy lake support deploy".split()
    return itertools.cycle(f"Note {i}: the {words[i % 10]} went well and the {words[(i * 7) % 10]} is next." for i in range(5000))


def item(n: int, text: str) -> dict:
    sender = f"user-{n % 50}"
    return {"external_id": f"bench-{n}", "channel": "chat", "channel_id": sender, "sender_name": sender,
            "thread": f"thread-{n % 200}", "content": text}


def pending(client: httpx.Client) -> int:
    return client.get("/api/v1/status").json()["pending"]["interactions"]


def wait_drained(client: httpx.Client, timeout: float = 1800) -> float:
    started = time.monotonic()
    while pending(client) > 0:
        if time.monotonic() - started > timeout:
            raise SystemExit("the worker did not drain the backlog in time")
        time.sleep(0.5)
    return time.monotonic() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--batches", type=int, default=40)
    parser.add_argument("--batch-size", type=int, default=500)
    parser.add_argument("--singles", type=int, default=1000)
    parser.add_argument("--steady-seconds", type=int, default=60)
    parser.add_argument("--rate", type=float, default=20.0)
    parser.add_argument("--broker", choices=["filesystem", "redis"], default="filesystem")
    args = parser.parse_args()
    env = {"CELERY_BROKER_URL": "redis://127.0.0.1:6379/14"} if args.broker == "redis" else {}
    source = texts()
    counter = itertools.count()

    print(f"starting Mnemo (broker: {args.broker}) …", flush=True)
    with launched(env) as mnemo, httpx.Client(base_url=mnemo.url, timeout=120,
                                              headers={"Authorization": f"Bearer {mnemo.key}"}) as client:
        # 1. batches
        total = args.batches * args.batch_size
        latencies = []
        started = time.monotonic()
        for _ in range(args.batches):
            batch = [item(next(counter), next(source)) for _ in range(args.batch_size)]
            t0 = time.perf_counter()
            response = client.post("/api/v1/interactions/batch", json={"items": batch})
            latencies.append(time.perf_counter() - t0)
            body = response.json()
            if response.status_code != 200 or body["created"] != args.batch_size:
                raise SystemExit(f"batch failed: {response.status_code} {str(body)[:300]}")
        ingest_seconds = time.monotonic() - started
        left = pending(client)
        print(f"1. batch ingest: {total} interactions in {ingest_seconds:.1f} s = {total / ingest_seconds:.0f}/s "
              f"(batch of {args.batch_size}: p50 {statistics.median(latencies) * 1000:.0f} ms, "
              f"max {max(latencies) * 1000:.0f} ms); {left} not yet embedded when the last batch returned", flush=True)

        # 2. worker throughput
        drain = wait_drained(client)
        print(f"2. worker: all {total} embedded {ingest_seconds + drain:.1f} s after the first batch "
              f"= {total / (ingest_seconds + drain):.0f}/s overall; the last {left} in {drain:.1f} s "
              f"= {left / drain if drain else float('nan'):.0f}/s with ingest finished", flush=True)

        # 3. single POSTs
        singles = []
        for _ in range(args.singles):
            t0 = time.perf_counter()
            response = client.post("/api/v1/interactions", json=item(next(counter), next(source)))
            singles.append((time.perf_counter() - t0) * 1000)
            if response.status_code != 201:
                raise SystemExit(f"single POST failed: {response.status_code} {response.text[:300]}")
        p = percentiles(singles)
        print(f"3. single POST (n={args.singles}): p50 {p['p50']:.1f} ms  p95 {p['p95']:.1f} ms  p99 {p['p99']:.1f} ms",
              flush=True)
        wait_drained(client)

        # 4. steady rate: lag from created_at to processed_at
        ids = []
        interval = 1.0 / args.rate
        start = time.monotonic()
        n = int(args.steady_seconds * args.rate)
        for i in range(n):
            delay = start + i * interval - time.monotonic()
            if delay > 0:
                time.sleep(delay)
            response = client.post("/api/v1/interactions", json=item(next(counter), next(source)))
            ids.append(response.json()["id"])
        achieved = n / (time.monotonic() - start)
        wait_drained(client)
        lags = []
        for interaction_id in ids:
            row = client.get(f"/api/v1/interactions/{interaction_id}").json()
            created = datetime.fromisoformat(row["created_at"])
            processed = datetime.fromisoformat(row["processed_at"])
            lags.append((processed - created).total_seconds())
        p = percentiles(lags)
        print(f"4. steady {achieved:.1f}/s for {args.steady_seconds} s (n={n}): ingest → embedded lag "
              f"p50 {p['p50']:.2f} s  p95 {p['p95']:.2f} s  max {max(lags):.2f} s", flush=True)
    print(f"machine: {machine()} · broker {args.broker} · cold start {mnemo.seconds_to_healthy:.1f} s")


if __name__ == "__main__":
    main()
