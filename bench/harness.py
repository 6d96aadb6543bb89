"""Shared by the benchmarks: start a throw-away Mnemo with the real launcher (fresh
embedded PostgreSQL in a temporary var/, gunicorn, Celery worker and beat), and stop it."""

from __future__ import annotations

import json
import os
import platform
import re
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parent.parent
KEY = re.compile(r"API key\s+(mn_[A-Za-z0-9]{8}_[A-Za-z0-9]{40})")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@dataclass
class Mnemo:
    url: str
    key: str
    seconds_to_healthy: float
    var_dir: Path
    log: list[str] = field(default_factory=list)


@contextmanager
def launched(env_extra: dict[str, str] | None = None, timeout: float = 120):
    """A running Mnemo for the duration of the block (stopped on exit, also on SIGTERM)."""
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    with tempfile.TemporaryDirectory(prefix="mnemo-bench-") as tmp:
        var_dir = Path(tmp) / "var"
        port = free_port()
        env = {k: v for k, v in os.environ.items() if k not in {"DATABASE_URL", "CELERY_BROKER_URL"}}
        env.update(MNEMO_VAR_DIR=str(var_dir), MNEMO_PORT=str(port), **(env_extra or {}))
        started = time.monotonic()
        proc = subprocess.Popen([sys.executable, "-m", "mnemo.launcher"], cwd=ROOT, env=env,
                                stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        lines: list[str] = []
        threading.Thread(target=lambda: lines.extend(proc.stdout), daemon=True).start()
        url = f"http://127.0.0.1:{port}"
        try:
            while True:
                if time.monotonic() - started > timeout or proc.poll() is not None:
                    raise SystemExit("Mnemo did not come up:\n" + "".join(lines[-40:]))
                try:
                    if httpx.get(f"{url}/api/v1/health", timeout=1).status_code == 200:
                        break
                except httpx.HTTPError:
                    time.sleep(0.1)
            healthy = time.monotonic() - started
            while not any(KEY.search(line) for line in lines):
                time.sleep(0.05)
            key = next(KEY.search(line).group(1) for line in lines if KEY.search(line))
            yield Mnemo(url=url, key=key, seconds_to_healthy=healthy, var_dir=var_dir, log=lines)
        finally:
            proc.send_signal(signal.SIGINT)
            proc.wait(timeout=90)


def write_report(report: dict, path: str | Path | None) -> None:
    """Every number of a run as JSON, when the run was asked for a file (--json)."""
    if path:
        Path(path).write_text(json.dumps(report, indent=2, default=str))
        print(f"\nwritten to {path}")


def machine() -> str:
    return f"{platform.node()} · {os.cpu_count()} cores · Python {platform.python_version()}"


def percentiles(values: list[float]) -> dict[str, float]:
    import statistics

    q = statistics.quantiles(sorted(values), n=100)
    return {"p50": q[49], "p95": q[94], "p99": q[98]}


def workspace_key(mnemo: Mnemo, name: str) -> str:
    """A new workspace in the running Mnemo and a read/write key for it, through the
    command line (the API has no endpoint that creates workspaces)."""
    env = {k: v for k, v in os.environ.items() if k not in {"DATABASE_URL", "CELERY_BROKER_URL"}}
    env["MNEMO_VAR_DIR"] = str(mnemo.var_dir)
    run = lambda *args: subprocess.run([sys.executable, "manage.py", *args], cwd=ROOT, env=env, check=True,  # noqa: E731
                                       capture_output=True, text=True).stdout.strip()
    slug = run("create_workspace", name)
    return run("create_api_key", "--workspace", slug, "--name", "bench")
