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
import os
import platform
import re
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parent.parent
KEY = re.compile(r"API key\s+(mn_[A-Za-z0-9]{8}_[A-Za-z0-9]{40})")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def launch(var_dir: Path, port: int) -> tuple[subprocess.Popen, str, float]:
    env = {k: v for k, v in os.environ.items() if k not in {"DATABASE_URL", "CELERY_BROKER_URL"}}
    env.update(MNEMO_VAR_DIR=str(var_dir), MNEMO_PORT=str(port))
    started = time.monotonic()
    proc = subprocess.Popen([sys.executable, "-m", "mnemo.launcher"], cwd=ROOT, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    lines: list[str] = []
    threading.Thread(target=lambda: lines.extend(proc.stdout), daemon=True).start()
    url = f"http://127.0.0.1:{port}/api/v1/health"
    while time.monotonic() - started < 120:
        try:
            if httpx.get(url, timeout=1).status_code == 200:
                break
        except httpx.HTTPError:
            time.sleep(0.1)
    else:
        proc.send_signal(signal.SIGINT)
        raise SystemExit("Mnemo did not answer within 120 s:\n" + "".join(lines))
    to_health = time.monotonic() - started
    while not any(KEY.search(line) for line in lines):
        time.sleep(0.1)
    key = next(KEY.search(line).group(1) for line in lines if KEY.search(line))
    return proc, key, to_health


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

    proc = None
    tmp = None
    if args.url:
        if not args.key:
            parser.error("--url needs --key")
        base, key, to_health = args.url.rstrip("/"), args.key, None
    else:
        tmp = tempfile.TemporaryDirectory(prefix="mnemo-bench-")
        port = free_port()
        print("starting Mnemo with the real launcher in a temporary var/ …", flush=True)
        proc, key, to_health = launch(Path(tmp.name) / "var", port)
        base = f"http://127.0.0.1:{port}"
        print(f"cold start to healthy: {to_health:.1f} s", flush=True)
    try:
        with httpx.Client(base_url=base, timeout=30, limits=httpx.Limits(max_connections=args.concurrency)) as client:
            for concurrency in (1, args.concurrency):
                for path, auth in (("/api/v1/health", None), ("/api/v1/status", key)):
                    r = measure(client, path, auth, args.requests, concurrency)
                    print(f"{path:<16} concurrency {concurrency:>2}: p50 {r['p50']:.1f} ms  p95 {r['p95']:.1f} ms  "
                          f"p99 {r['p99']:.1f} ms  {r['rps']:.0f} req/s", flush=True)
    finally:
        if proc is not None:
            proc.send_signal(signal.SIGINT)
            proc.wait(timeout=60)
            tmp.cleanup()
    print(f"machine: {platform.node()} · {os.cpu_count()} cores · Python {platform.python_version()} · "
          f"{args.requests} requests per row")


if __name__ == "__main__":
    main()
