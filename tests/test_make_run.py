"""`make run` end to end: the launcher brings up PostgreSQL, migrations, the first
workspace, gunicorn, a Celery worker and beat; the printed key works; Ctrl-C stops every
process, PostgreSQL included; a second run reuses everything and bootstraps nothing.
Under attack and failure: kill -9 of the launcher leaves no process behind (but spares a
database someone else uses), a killed web, worker or beat is restarted, kill -9 of
everything loses nothing, and an unknown process on the port is never taken for Mnemo.

It runs the real launcher in a temporary var/ on a free port, so it never touches the
checkout's own database."""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request
from pathlib import Path

import psutil
import psycopg
import pytest

from mnemo import embedded_db, supervision

# Under pytest-xdist (`make test`: -n 2 --dist loadgroup) these tests stay in one process,
# which starts the module's first run once; xdist hands out the largest group first, so
# they run beside the rest rather than alone at the end.
pytestmark = pytest.mark.xdist_group("launcher")

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
        # Its own process group, as `make run` has in a terminal: kill -9 of the group is
        # what the issue did.
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "mnemo.launcher"], cwd=ROOT, env=env,
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, start_new_session=True,
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
        """Wait for `text` until `timeout`, or until no process can print it any more.
        The launcher exiting is not that: the watchdog it started holds the same pipe and
        goes on printing after a kill -9 of the launcher. The pipe's end (the reader
        thread done) is."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if text in self.output:
                return True
            if not self.reader.is_alive():
                return text in self.output
            time.sleep(0.2)
        return text in self.output

    def get(self, path: str, key: str | None = None) -> tuple[int, bytes]:
        request = urllib.request.Request(f"http://127.0.0.1:{self.port}{path}")
        if key:
            request.add_header("Authorization", f"Bearer {key}")
        try:
            with urllib.request.urlopen(request, timeout=10) as response:
                return response.status, response.read()
        except urllib.error.HTTPError as err:
            return err.code, err.read()

    def post(self, path: str, body: dict, key: str) -> tuple[int, dict]:
        request = urllib.request.Request(f"http://127.0.0.1:{self.port}{path}", data=json.dumps(body).encode(),
                                         headers={"Authorization": f"Bearer {key}", "Content-Type": "application/json"})
        try:
            with urllib.request.urlopen(request, timeout=30) as response:
                return response.status, json.loads(response.read())
        except urllib.error.HTTPError as err:
            return err.code, json.loads(err.read())

    def children(self) -> list[psutil.Process]:
        try:
            return psutil.Process(self.proc.pid).children(recursive=True)
        except psutil.NoSuchProcess:
            return []

    def interrupt(self, timeout: float = 60) -> int:
        self.proc.send_signal(signal.SIGINT)
        return self.proc.wait(timeout=timeout)


def _temporary_root() -> Path:
    # Not under pytest's tmp_path: a concurrent pytest session resets /tmp/pytest-of-<user>
    # to 0700, and PostgreSQL runs as another user when the tests run as root.
    return Path(tempfile.mkdtemp(prefix="mnemo-run-"))


@pytest.fixture
def var_dir():
    root = _temporary_root()
    yield root / "var"
    embedded_db.stop(root / "var" / "pg")  # only if a failed assertion left it running
    shutil.rmtree(root, ignore_errors=True)


class FirstRun:
    """The module's one real first run: the launcher on an empty var/ (initdb, migrations,
    workspace, admin and key, static files). The first test checks it while it serves and
    stops it; the tests about later runs start from copies of the var/ it leaves."""

    def __init__(self):
        self.root = _temporary_root()
        self.var_dir = self.root / "var"
        self.run = Run(self.var_dir, free_port())

    def stop(self) -> int:
        """Ctrl-C, once; the launcher's exit code."""
        if self.run.proc.returncode is None:
            self.run.interrupt()
        return self.run.proc.returncode

    def stopped(self) -> tuple[Path, str]:
        """(The var/ of the finished first run, its API key), for copies; the run is stopped
        (cleanly) first if the first test did not run."""
        assert self.run.wait_for_line("Mnemo is serving", timeout=300), self.run.output
        assert self.stop() == 0, self.run.output
        assert embedded_db.running_server(self.var_dir / "pg") is None
        return self.var_dir, KEY.search(self.run.output).group(1)


@pytest.fixture(scope="module")
def first_run():
    """Started once per module: each test about a later run would otherwise spend most of
    its time on initdb and migrations, which the first test already covers."""
    first = FirstRun()
    try:
        yield first
    finally:
        if first.run.proc.poll() is None:
            first.run.interrupt()
        embedded_db.stop(first.var_dir / "pg")  # only if a failed assertion left it running
        shutil.rmtree(first.root, ignore_errors=True)


@pytest.fixture
def used_var_dir(var_dir, first_run):
    """(var/ copied from the first run, its API key)."""
    template, key = first_run.stopped()
    # cp -a keeps the owners: PostgreSQL runs as another user when the tests run as root.
    subprocess.run(["cp", "-a", str(template), str(var_dir)], check=True)
    return var_dir, key


def test_make_run_serves_and_stops_cleanly(first_run):
    run = first_run.run
    pgdata = first_run.var_dir / "pg"
    try:
        # Waited for as long as the tests about later runs would (they start from this run's
        # var/): a start slower than the bar fails this test only.
        assert run.wait_for_line("Mnemo is serving", timeout=300), run.output
        # The bar: health answers within 90 seconds of starting.
        assert time.monotonic() - run.started < 90, run.output
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
        env["MNEMO_VAR_DIR"] = str(first_run.var_dir)
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
        code = first_run.stop()
    assert code == 0, run.output
    assert "all stopped" in run.output
    assert embedded_db.running_server(pgdata) is None
    assert not psutil.pid_exists(postmaster) or psutil.Process(postmaster).status() == psutil.STATUS_ZOMBIE
    assert not [p for p in processes if p.is_running() and p.status() != psutil.STATUS_ZOMBIE]


def test_a_later_run_reuses_everything_refuses_a_second_and_stops_when_nobody_reads_the_output(used_var_dir):
    # One later start, checked three ways: it bootstraps nothing again, a second `make run`
    # beside it is refused, and it stops cleanly with nobody reading its output.
    var_dir, key = used_var_dir
    run = Run(var_dir, free_port())
    try:
        assert run.wait_for_line("Mnemo is serving", timeout=90), run.output
        assert "First run" not in run.output
        assert run.get("/api/v1/status", key)[0] == 200

        second = Run(var_dir, free_port())
        assert second.proc.wait(timeout=60) == 1
        assert "already running" in second.output
        # The refused second run left the first one's database alone.
        assert run.get("/api/v1/ready")[0] == 200

        # A closed terminal or pipe once made the launcher die mid-shutdown (BrokenPipeError),
        # leaving gunicorn and a Celery worker running without their database.
        processes = run.children()
        run.proc.stdout.close()  # the reader goes away
        run.proc.send_signal(signal.SIGTERM)
        run.proc.wait(timeout=60)
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and any(p.is_running() and p.status() != psutil.STATUS_ZOMBIE for p in processes):
            time.sleep(0.2)
        assert not [p for p in processes if p.is_running() and p.status() != psutil.STATUS_ZOMBIE]
        assert embedded_db.running_server(var_dir / "pg") is None
    finally:
        if run.proc.poll() is None:  # a failed assertion above: stop it anyway
            run.interrupt()


def test_make_run_uses_celery_broker_url_when_set(used_var_dir, monkeypatch):
    var_dir, _ = used_var_dir
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


# -- under attack and failure ------------------------------------------------------------------
# Generous: these tests are about what survives, not speed, and the machine may be busy.
BOOT_TIMEOUT = 300
LIKINGS = ["sailing", "chess", "jazz", "pottery", "mountain biking", "sourdough baking", "astronomy",
           "knitting", "opera", "rock climbing", "origami", "birdwatching"]


def mnemo_processes(run: Run, pgdata: Path) -> list[psutil.Process]:
    """Every process of this run: the launcher's descendants (the watchdog included) and
    the embedded PostgreSQL with its backends."""
    postmaster = psutil.Process(embedded_db.running_server(pgdata).pid)
    return [psutil.Process(run.proc.pid), *run.children(), postmaster, *postmaster.children(recursive=True)]


def still_running(processes: list[psutil.Process]) -> list[psutil.Process]:
    alive = []
    for process in processes:
        try:
            if process.is_running() and process.status() != psutil.STATUS_ZOMBIE:
                alive.append(process)
        except psutil.NoSuchProcess:
            pass
    return alive


def wait_until_gone(processes: list[psutil.Process], timeout: float) -> list[psutil.Process]:
    deadline = time.monotonic() + timeout
    while (alive := still_running(processes)) and time.monotonic() < deadline:
        time.sleep(0.2)
    return alive


def serves_again(run: Run, timeout: float) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            if run.get("/api/v1/health")[0] == 200:
                return True
        except OSError:  # the restarted gunicorn is not listening yet
            pass
        time.sleep(0.5)
    return False


def tell_likings(run: Run, key: str, likings: list[str]) -> list[int]:
    items = [{"channel": "cli", "channel_id": "tess", "sender_name": "Tess", "thread": "hobbies",
              "content": f"I love {liking}."} for liking in likings]
    status, body = run.post("/api/v1/interactions/batch", {"items": items}, key)
    assert status == 200 and body["created"] == len(likings), (body, run.output)
    return [result["id"] for result in body["results"]]


def processing(pgdata: Path, ids: list[int]) -> tuple[int, int, dict[int, int]]:
    """Of these interactions: how many are indexed, how many still wait, and per
    interaction how many liking memories it is evidence for."""
    with psycopg.connect(embedded_db.running_server(pgdata).dsn()) as conn:
        indexed = conn.execute("SELECT count(*) FROM conversations_interactionindex WHERE interaction_id = ANY(%s)",
                               [ids]).fetchone()[0]
        waiting = conn.execute("SELECT count(*) FROM conversations_interactionbacklog WHERE interaction_id = ANY(%s)",
                               [ids]).fetchone()[0]
        evidence = dict(conn.execute(
            "SELECT e.interaction_id, count(*) FROM memory_memoryevidence e JOIN memory_memory m ON m.id = e.memory_id "
            "WHERE m.rule = 'preference.love' AND e.interaction_id = ANY(%s) GROUP BY 1", [ids]).fetchall())
    return indexed, waiting, evidence


def assert_processed_exactly_once(pgdata: Path, ids: list[int], timeout: float = 150) -> None:
    # A task lost with a killed worker is caught by beat's backlog drain within ~90 s.
    deadline = time.monotonic() + timeout
    while (state := processing(pgdata, ids))[:2] != (len(ids), 0) and time.monotonic() < deadline:
        time.sleep(1)
    indexed, waiting, evidence = state
    assert (indexed, waiting) == (len(ids), 0)
    assert evidence == {pk: 1 for pk in ids}


def test_kill_9_of_the_launcher_leaves_nothing_running_but_a_database_still_in_use(used_var_dir):
    var_dir, key = used_var_dir
    pgdata = var_dir / "pg"
    run = Run(var_dir, free_port())
    try:
        assert run.wait_for_line("Mnemo is serving", timeout=BOOT_TIMEOUT), run.output
        processes = mnemo_processes(run, pgdata)
        names = " ".join(" ".join(p.cmdline()) for p in processes)
        assert all(name in names for name in ("gunicorn", "worker", "beat", "mnemo.watchdog", "postgres"))
        postmaster = embedded_db.running_server(pgdata).pid
        [watchdog] = [p for p in processes if "mnemo.watchdog" in p.cmdline()]
        database = [p for p in processes if p.pid == postmaster or p.ppid() == postmaster]
        # Someone else's session on the database, like a manage.py shell in another terminal.
        other = psycopg.connect(embedded_db.running_server(pgdata).dsn())
        os.killpg(run.proc.pid, signal.SIGKILL)  # the launcher's whole process group, as in the issue
        run.proc.wait(timeout=10)
        left = wait_until_gone([p for p in processes if p not in database and p != watchdog], timeout=10)
        assert not left, [p.cmdline() for p in left]
        assert embedded_db.running_server(pgdata).pid == postmaster
        assert other.execute("SELECT 1").fetchone() == (1,)
        assert run.wait_for_line("stays up while 1 other connection(s) use it", timeout=10), run.output

        other.close()
        assert not wait_until_gone(processes, timeout=10)  # the watchdog stopped PostgreSQL, then itself
        assert embedded_db.running_server(pgdata) is None
    finally:
        if run.proc.poll() is None:
            run.interrupt()

    again = Run(var_dir, free_port())
    try:
        assert again.wait_for_line("Mnemo is serving", timeout=BOOT_TIMEOUT), again.output
        assert "earlier run" not in again.output  # nothing was left over
        assert again.get("/api/v1/status", key)[0] == 200
    finally:
        assert again.interrupt() == 0
    assert embedded_db.running_server(pgdata) is None


SUPERVISED = ("web", "worker", "beat")


def recorded_pids(var_dir: Path) -> dict[str, int]:
    """The pids of the supervised processes in the launcher's pid files (var/run/, which
    also records the watchdog)."""
    return {record.name: record.pid for record in supervision.PidFiles(var_dir / "run").read_all()
            if record.name in SUPERVISED}


def test_a_killed_worker_web_or_beat_is_restarted_and_the_backlog_is_processed_exactly_once(used_var_dir):
    var_dir, key = used_var_dir
    pgdata = var_dir / "pg"
    run = Run(var_dir, free_port())
    try:
        assert run.wait_for_line("Mnemo is serving", timeout=BOOT_TIMEOUT), run.output
        pids = recorded_pids(var_dir)

        ids = tell_likings(run, key, LIKINGS[:8])
        os.kill(pids["worker"], signal.SIGKILL)  # the master, with the backlog waiting or in hand
        assert run.wait_for_line("worker exited (killed by SIGKILL)", timeout=30), run.output
        assert run.wait_for_line("restarting it in 1 s (restart 1)", timeout=5), run.output
        os.kill(pids["web"], signal.SIGKILL)
        os.kill(pids["beat"], signal.SIGKILL)
        for name in ("web", "beat"):
            assert run.wait_for_line(f"{name} exited (killed by SIGKILL)", timeout=30), run.output
        deadline = time.monotonic() + 30
        while (time.monotonic() < deadline
               and min(run.output.count(f"started {name} (pid") for name in pids) < 2):
            time.sleep(0.5)
        restarted = recorded_pids(var_dir)
        assert all(restarted[name] not in (None, pids[name]) for name in pids), run.output
        assert all(f"started {name} (pid {restarted[name]})" in run.output for name in pids)

        assert serves_again(run, timeout=90), run.output
        ids += tell_likings(run, key, LIKINGS[8:])  # the restarted web takes new work
        assert_processed_exactly_once(pgdata, ids)
        assert run.proc.poll() is None and "stopping everything" not in run.output, run.output
    finally:
        assert run.interrupt() == 0
    assert embedded_db.running_server(pgdata) is None


def test_after_kill_9_of_everything_the_next_run_clears_what_is_left_and_loses_nothing(used_var_dir):
    var_dir, key = used_var_dir
    pgdata = var_dir / "pg"
    run = Run(var_dir, free_port())
    try:
        assert run.wait_for_line("Mnemo is serving", timeout=BOOT_TIMEOUT), run.output
        ids = tell_likings(run, key, LIKINGS[:6])
        processes = mnemo_processes(run, pgdata)
        web = recorded_pids(var_dir)["web"]
        # One gunicorn worker survives, frozen, holding the port: the orphan of the issue.
        [orphan] = psutil.Process(web).children()
        orphan.suspend()
        # The watchdog first: it would otherwise clean up after the others.
        processes.sort(key=lambda p: "mnemo.watchdog" not in " ".join(p.cmdline()))
        for process in processes:
            if process.pid != orphan.pid:
                with contextlib.suppress(psutil.NoSuchProcess):  # a short-lived one may be gone already
                    process.kill()
        run.proc.wait(timeout=10)
        # A process killed while it pages in a large library (a worker still importing torch
        # right after a quick boot) takes a moment to die: wait for it, not just look.
        left = wait_until_gone([p for p in processes if p.pid != orphan.pid], timeout=10)
        assert not left, [p.cmdline() for p in left]
        assert still_running([orphan]) == [orphan]
    finally:
        if run.proc.poll() is None:
            run.interrupt()

    again = Run(var_dir, run.port)
    try:
        assert again.wait_for_line("Mnemo is serving", timeout=BOOT_TIMEOUT), again.output
        assert f"stopped web (pid {web}), left running by an earlier run" in again.output
        assert not still_running([orphan])
        assert again.get("/api/v1/status", key)[0] == 200
        ids += tell_likings(again, key, LIKINGS[6:])
        assert_processed_exactly_once(pgdata, ids)
    finally:
        assert again.interrupt() == 0
    assert embedded_db.running_server(pgdata) is None


def test_a_start_is_refused_while_an_unknown_process_answers_on_the_port(var_dir, tmp_path):
    # An orphan of a run from before pid files (or anything else) answers /health: the
    # launcher must neither claim to serve nor stop the database that orphan may use.
    port = free_port()
    (tmp_path / "site" / "api" / "v1").mkdir(parents=True)
    (tmp_path / "site" / "api" / "v1" / "health").write_text('{"status": "ok"}')
    impostor = subprocess.Popen([sys.executable, "-m", "http.server", str(port), "--bind", "127.0.0.1",
                                 "--directory", str(tmp_path / "site")],
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    server, _ = embedded_db.start(var_dir / "pg")
    try:
        deadline = time.monotonic() + 30
        while supervision.port_holder("127.0.0.1", port) is None and time.monotonic() < deadline:
            time.sleep(0.1)
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/api/v1/health", timeout=10) as response:
            assert response.status == 200  # it passes for a healthy Mnemo
        run = Run(var_dir, port)
        assert run.proc.wait(timeout=60) == 1
        assert f"port {port} on 127.0.0.1 is in use by pid {impostor.pid}" in run.output
        assert "MNEMO_PORT" in run.output and "serving" not in run.output
        assert embedded_db.running_server(var_dir / "pg").pid == server.pid
        assert impostor.poll() is None
    finally:
        impostor.kill()
        impostor.wait()
