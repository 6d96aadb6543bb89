"""`make run` end to end: the launcher brings up PostgreSQL, migrations, the first
workspace, gunicorn, a Celery worker and beat; the printed key works; Ctrl-C stops every
process, PostgreSQL included; a second run reuses everything and bootstraps nothing.

It runs the real launcher in a temporary var/ on a free port, so it never touches the
checkout's own database."""

from __future__ import annotations

import json
import os
import re
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from pathlib import Path

import psutil
import pytest

from mnemo import embedded_db

ROOT = Path(__file__).resolve().parent.parent
KEY = re.compile(r"API key\s+(mn_[A-Za-z0-9]{8}_[A-Za-z0-9]{40})")
PASSWORD = re.compile(r"user: admin\s+password: (\S+)")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Run:
    def __init__(self, var_dir: Path, port: int, keep_broker: bool = False):
        dropped = {"DATABASE_URL", "DJANGO_SETTINGS_MODULE"} | (set() if keep_broker else {"CELERY_BROKER_URL"})
        env = {k: v for k, v in os.environ.items() if k not in dropped}
        env.update(MNEMO_VAR_DIR=str(var_dir), MNEMO_PORT=str(port), WEB_CONCURRENCY="1", CELERY_CONCURRENCY="1")
        self.port = port
        self.lines: list[str] = []
        self.started = time.monotonic()
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "mnemo.launcher"], cwd=ROOT, env=env,
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
        )
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()

    def _read(self):
        try:
            for line in self.proc.stdout:
                self.lines.append(line)
        except (ValueError, OSError):
            pass  # a test closed the pipe on purpose

    @property
    def output(self) -> str:
        return "".join(self.lines)

    def wait_for_line(self, text: str, timeout: float) -> bool:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if text in self.output:
                return True
            if self.proc.poll() is not None:
                return False
            time.sleep(0.2)
        return False

    def get(self, path: str, key: str | None = None) -> tuple[int, bytes]:
        request = urllib.request.Request(f"http://127.0.0.1:{self.port}{path}")
        if key:
            request.add_header("Authorization", f"Bearer {key}")
        try:
            with urllib.request.urlopen(request, timeout=10) as response:
                return response.status, response.read()
        except urllib.error.HTTPError as err:
            return err.code, err.read()

    def children(self) -> list[psutil.Process]:
        try:
            return psutil.Process(self.proc.pid).children(recursive=True)
        except psutil.NoSuchProcess:
            return []

    def interrupt(self, timeout: float = 60) -> int:
        self.proc.send_signal(signal.SIGINT)
        return self.proc.wait(timeout=timeout)


@pytest.fixture
def var_dir(tmp_path):
    path = tmp_path / "var"
    yield path
    embedded_db.stop(path / "pg")  # only if a failed assertion left it running


def test_make_run_serves_stops_cleanly_and_restarts_without_duplicates(var_dir):
    pgdata = var_dir / "pg"
    run = Run(var_dir, free_port())
    try:
        assert run.wait_for_line("Mnemo is serving", timeout=90), run.output
        # The bar: health answers within 90 seconds of starting.
        assert time.monotonic() - run.started < 90
        key = KEY.search(run.output).group(1)
        assert PASSWORD.search(run.output)

        assert run.get("/api/v1/health") == (200, b'{"status": "ok"}')
        status, body = run.get("/api/v1/status", key)
        assert status == 200 and json.loads(body)["workspace"]["slug"] == "default"
        assert run.get("/api/v1/status", key[:-2] + "zz")[0] == 401
        status, body = run.get("/api/v1/ready")
        assert status == 200, body
        assert run.get("/login/")[0] == 200
        status, docs = run.get("/api/v1/docs")
        assert status == 200
        # Swagger UI from django-ninja's collected static files (hashed names), no CDN.
        bundle = re.search(rb'src="(/static/ninja/swagger-ui-bundle\.[0-9a-f]+\.js)"', docs)
        assert bundle, docs
        assert run.get(bundle.group(1).decode())[0] == 200
        status, css = run.get("/static/css/mnemo.css")
        assert status == 200 and b"--accent" in css

        # A manage.py command from a second terminal finds the running database.
        env = {k: v for k, v in os.environ.items() if k not in {"DATABASE_URL", "DJANGO_SETTINGS_MODULE"}}
        env["MNEMO_VAR_DIR"] = str(var_dir)
        made = subprocess.run(
            [sys.executable, "manage.py", "create_api_key", "--workspace", "default", "--scopes", "read"],
            cwd=ROOT, env=env, capture_output=True, text=True, timeout=120,
        )
        assert made.returncode == 0, made.stderr
        assert "started the embedded PostgreSQL" not in made.stderr
        assert run.get("/api/v1/status", made.stdout.strip())[0] == 200

        names = " ".join(" ".join(p.cmdline()) for p in run.children())
        assert "gunicorn" in names and "worker" in names and "beat" in names
        processes = run.children()
        postmaster = embedded_db.running_server(pgdata).pid
    finally:
        code = run.interrupt()
    assert code == 0, run.output
    assert "all stopped" in run.output
    assert embedded_db.running_server(pgdata) is None
    assert not psutil.pid_exists(postmaster)
    assert not [p for p in processes if p.is_running() and p.status() != psutil.STATUS_ZOMBIE]

    again = Run(var_dir, free_port())
    try:
        assert again.wait_for_line("Mnemo is serving", timeout=90), again.output
        assert "First run" not in again.output
        assert again.get("/api/v1/status", key)[0] == 200
    finally:
        assert again.interrupt() == 0
    assert embedded_db.running_server(pgdata) is None


def test_a_second_make_run_is_refused_while_one_runs(var_dir):
    first = Run(var_dir, free_port())
    try:
        assert first.wait_for_line("Mnemo is serving", timeout=90), first.output
        second = Run(var_dir, free_port())
        assert second.proc.wait(timeout=60) == 1
        assert "already running" in second.output
        # The refused second run left the first one's database alone.
        assert first.get("/api/v1/ready")[0] == 200
    finally:
        assert first.interrupt() == 0


def test_make_run_uses_celery_broker_url_when_set(var_dir, monkeypatch):
    import socket as _socket

    try:
        _socket.create_connection(("127.0.0.1", 6379), timeout=0.5).close()
    except OSError:
        pytest.skip("no Redis on 127.0.0.1:6379 on this machine")
    monkeypatch.setenv("CELERY_BROKER_URL", "redis://127.0.0.1:6379/13")
    run = Run(var_dir, free_port(), keep_broker=True)
    try:
        assert run.wait_for_line("Mnemo is serving", timeout=90), run.output
        status, body = run.get("/api/v1/ready")
        assert status == 200, body
        assert json.loads(body)["checks"]["broker"]["detail"].startswith("redis://")
        time.sleep(3)  # beat and the worker stay up (beat once died here for want of its folder)
        assert run.proc.poll() is None and "exited with status" not in run.output, run.output
    finally:
        assert run.interrupt() == 0


def test_stopping_works_even_when_nobody_reads_the_output_any_more(var_dir):
    # A closed terminal or pipe once made the launcher die mid-shutdown (BrokenPipeError),
    # leaving gunicorn and a Celery worker running without their database.
    run = Run(var_dir, free_port())
    assert run.wait_for_line("Mnemo is serving", timeout=90), run.output
    processes = run.children()
    run.proc.stdout.close()  # the reader goes away
    run.proc.send_signal(signal.SIGTERM)
    run.proc.wait(timeout=60)
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and any(p.is_running() and p.status() != psutil.STATUS_ZOMBIE for p in processes):
        time.sleep(0.2)
    assert not [p for p in processes if p.is_running() and p.status() != psutil.STATUS_ZOMBIE]
    assert embedded_db.running_server(var_dir / "pg") is None
