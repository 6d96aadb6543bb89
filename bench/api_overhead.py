"""Foundation benchmark: how long `make run` takes to answer, and what the API costs per
request before any feature work (health; status, which authenticates the key and asks the
database).

By default it starts its own Mnemo with the real launcher in a temporary var/ (a fresh
embedded PostgreSQL, gunicorn, Celery worker and beat), measures, and stops it:

    .venv/bin/python bench/api_overhead.py [--requests 2000] [--concurrency 8]

Against a Mnemo that is already running, pass its URL and a key instead:

    .venv/bin/python bench/api_overhead.py --url http://127.0.0.1:8000 --key mn_...
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from bench.harness import launched, machine  # noqa: E402

def measure(client: httpx.Client, path: str, key: str | None, requests: int, concurrency: int) -> dict:
    headers = {"Authorization": f"Bearer {key}"} if key else {}
    for _ in range(20):  # warm up connections and caches
        client.get(path, headers=headers)

    def one(_):
        t0 = time.perf_counter()
        response = client.get(path, headers=headers)
        elapsed = time.perf_counter() - t0
        if response.status_code != 200:
            raise SystemExit(f"{path} answered {response.status_code}: {response.text[:200]}")
        return elapsed

    wall = time.perf_counter()
    with ThreadPoolExecutor(max_workers=concurrency) as pool:
        timings = sorted(pool.map(one, range(requests)))
    wall = time.perf_counter() - wall
    q = statistics.quantiles(timings, n=100)
    return {"p50": q[49] * 1000, "p95": q[94] * 1000, "p99": q[98] * 1000, "rps": requests / wall}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--url")
    parser.add_argument("--key")
    parser.add_argument("--requests", type=int, default=2000)
    parser.add_argument("--concurrency", type=int, default=8)
    args = parser.parse_args()

    if args.url:
        if not args.key:
            parser.error("--url needs --key")
        run(args.url.rstrip("/"), args.key, args)
    else:
        print("starting Mnemo with the real launcher in a temporary var/ …", flush=True)
        with launched() as mnemo:
            print(f"cold start to healthy: {mnemo.seconds_to_healthy:.1f} s", flush=True)
            run(mnemo.url, mnemo.key, args)
    print(f"machine: {machine()} · {args.requests} requests per row")


def run(base: str, key: str, args) -> None:
    with httpx.Client(base_url=base, timeout=30, limits=httpx.Limits(max_connections=args.concurrency)) as client:
        for concurrency in (1, args.concurrency):
            for path, auth in (("/api/v1/health", None), ("/api/v1/status", key)):
                r = measure(client, path, auth, args.requests, concurrency)
                print(f"{path:<16} concurrency {concurrency:>2}: p50 {r['p50']:.1f} ms  p95 {r['p95']:.1f} ms  "
                      f"p99 {r['p99']:.1f} ms  {r['rps']:.0f} req/s", flush=True)


if __name__ == "__main__":
    main()
