"""`make run`: everything Mnemo needs on one machine, in one terminal.

Starts (or reuses) the embedded PostgreSQL, migrates, bootstraps the first workspace on
the first run, then runs gunicorn, a Celery worker and Celery beat, and supervises them
like a process manager: a child that exits is restarted with capped exponential backoff
(a crash loop stops everything), children never outlive the launcher (the kernel kills
them when it dies, a watchdog process kills what they forked and stops PostgreSQL), and
a start first cleans up what an earlier run left behind (pid files in var/run/). Ctrl-C
(or SIGTERM) stops every process, PostgreSQL included unless another process still uses
it. A second `make run` while one is running is refused instead of fighting over the port
and the database.
"""

from __future__ import annotations

import atexit
import fcntl
import os
import signal
import subprocess
import sys
import time
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path

import psutil
import psycopg

from mnemo import embedded_db, supervision

BASE_DIR = Path(__file__).resolve().parent.parent
VAR_DIR = Path(os.environ.get("MNEMO_VAR_DIR", BASE_DIR / "var"))
LOCK_PATH = VAR_DIR / "run.lock"
PID_FILES = supervision.PidFiles(VAR_DIR / "run")
BIN = Path(sys.executable).parent
WORKER_NICENESS = int(os.environ.get("MNEMO_WORKER_NICE", "10"))
# gunicorn's access log as JSON lines, like the application's, with the same request id.
ACCESS_LOG_FORMAT = (
    '{"at": "%(t)s", "logger": "access", "method": "%(m)s", "path": "%(U)s", "status": %(s)s, '
    '"duration_ms": %(M)s, "bytes": "%(B)s", "request_id": "%({x-request-id}o)s"}'
)

# Masks secrets in the access and error logs (a refused request's path may carry one).
GUNICORN_LOGGER = "core.logging.GunicornLogger"


def say(message: str) -> None:
    # Never let a closed terminal or pipe (BrokenPipeError) stop a shutdown half-way:
    # children left running would keep consuming the broker's tasks.
    try:
        print(f"[mnemo] {message}", flush=True)
    except (BrokenPipeError, OSError):
        pass


def application_name(launcher_pid: int) -> str:
    """PGAPPNAME of a launcher's processes: their connections are told from others'."""
    return f"mnemo-run-{launcher_pid}"


def uses_embedded_database() -> bool:
    return not os.environ.get("DATABASE_URL")


def launcher_running() -> bool:
    """Whether a `make run` holds the lock (then it owns the embedded database)."""
    if not LOCK_PATH.exists():
        return False
    with open(LOCK_PATH, "a+") as handle:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return True
        fcntl.flock(handle, fcntl.LOCK_UN)
    return False


def embedded_database_for_command() -> None:
    """For a manage.py command: use the running embedded server, or start one for the
    command and stop it afterwards unless `make run` or another client is using it."""
    server, started = embedded_db.start(embedded_db.DEFAULT_PGDATA)
    if not started:
        return
    print(f"[mnemo] started the embedded PostgreSQL in {embedded_db.DEFAULT_PGDATA} for this command", file=sys.stderr)

    def stop_if_unused() -> None:
        try:
            from django.db import connections

            connections.close_all()
        except Exception:
            pass
        if launcher_running() or embedded_db.other_clients(server) > 0:
            return
        embedded_db.stop(embedded_db.DEFAULT_PGDATA)

    atexit.register(stop_if_unused)


def _child_setup(nice: int):
    """Popen's preexec_fn: die with the launcher (the kernel's guarantee, even when the
    launcher is killed -9), then lower the priority if asked."""
    def setup() -> None:
        supervision.die_with_parent(signal.SIGKILL)
        if nice:
            os.nice(nice)
    return setup


def _describe_exit(code: int) -> str:
    if code < 0:
        try:
            return f"killed by {signal.Signals(-code).name}"
        except ValueError:  # a real-time signal has no name
            return f"killed by signal {-code}"
    return f"status {code}"


@dataclass
class Child:
    name: str
    argv: list[str]
    env: dict[str, str]
    nice: int = 0
    process: subprocess.Popen | None = None
    started_at: float = 0.0
    restart_at: float | None = None  # set while waiting out the backoff
    restarts: int = 0
    backoff: supervision.Backoff = field(default_factory=supervision.Backoff)


class Launcher:
    def __init__(self) -> None:
        self.host = os.environ.get("MNEMO_HOST", "127.0.0.1")
        self.port = int(os.environ.get("MNEMO_PORT", "8000"))
        self.children: dict[str, Child] = {}
        self.embedded = uses_embedded_database()
        self.database_claimed = False  # this run started or took over the embedded database
        self.watchdog: subprocess.Popen | None = None
        self.stopping = False
        self._lock_handle = None
        # Every connection of this run carries it (libpq reads PGAPPNAME), so that the
        # database is stopped only when no *other* process uses it.
        os.environ["PGAPPNAME"] = application_name(os.getpid())

    # -- steps ------------------------------------------------------------------------
    def acquire_lock(self) -> None:
        VAR_DIR.mkdir(parents=True, exist_ok=True)
        self._lock_handle = open(LOCK_PATH, "a+")
        try:
            fcntl.flock(self._lock_handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            say(f"Mnemo is already running from {BASE_DIR} (lock {LOCK_PATH}). Stop it first with Ctrl-C.")
            sys.exit(1)

    def clean_up_leftovers(self) -> None:
        """Processes an earlier run left behind (it was killed before it could stop them,
        or its watchdog was killed too): each pid file names one, with its start time."""
        for record in PID_FILES.read_all():
            if supervision.stop_leftover(record, grace=10):
                say(f"stopped {record.name} (pid {record.pid}), left running by an earlier run")
            PID_FILES.remove(record.name)

    def refuse_if_port_taken(self) -> None:
        # Something else answering on the port would pass for this run's web server.
        holder = supervision.port_holder(self.host, self.port)
        if holder:
            say(f"port {self.port} on {self.host} is in use by {holder}, not by a process this launcher "
                f"recorded. Stop it (kill <pid>) or choose another port with MNEMO_PORT, then run again.")
            sys.exit(1)

    def start_watchdog(self) -> None:
        me = psutil.Process()
        self.watchdog = subprocess.Popen(
            [sys.executable, "-m", "mnemo.watchdog", str(me.pid), repr(me.create_time())],
            start_new_session=True,  # out of reach of a kill of the launcher's process group
        )
        PID_FILES.write("watchdog", self.watchdog.pid)

    def start_database(self) -> None:
        if not self.embedded:
            say("using the database from DATABASE_URL")
            return
        self.database_claimed = True
        server, started = embedded_db.start(embedded_db.DEFAULT_PGDATA)
        verb = "started" if started else "reusing the running"
        say(f"{verb} embedded PostgreSQL (pid {server.pid}, data in {embedded_db.DEFAULT_PGDATA})")
        buffers = os.environ.get("MNEMO_PG_SHARED_BUFFERS")
        if buffers and not started:
            say("MNEMO_PG_SHARED_BUFFERS applies when this launcher starts the database; it was running")
        elif buffers:
            # PostgreSQL's page cache: its default of 128 MB holds little of a large workspace.
            try:
                restarted = embedded_db.ensure_restart_setting(embedded_db.DEFAULT_PGDATA, "shared_buffers", buffers)
            except Exception as exc:  # a value PostgreSQL does not take ("4 gigs"): say so, start nothing
                say(f"MNEMO_PG_SHARED_BUFFERS={buffers!r} was not applied: {exc}")
                sys.exit(1)
            if restarted.pid != server.pid:
                say(f"restarted embedded PostgreSQL with shared_buffers = {buffers} (pid {restarted.pid})")

    def prepare(self) -> None:
        os.environ.setdefault("DJANGO_SETTINGS_MODULE", "mnemo.settings")
        import django

        django.setup()
        from django.core.management import call_command
        from django.db import connections

        from core.services import bootstrap_first_run
        from mnemo.celery import ensure_celery_dirs

        say("applying migrations (creates the vector and pg_trgm extensions on a new database)")
        call_command("migrate", interactive=False, verbosity=1)
        call_command("collectstatic", interactive=False, verbosity=0)
        ensure_celery_dirs()
        from review.services import review_backfill

        # Candidates proposed before the review queue existed get their items (idempotent).
        opened = review_backfill()
        if opened:
            say(f"opened review items for {opened} earlier candidates")
        result = bootstrap_first_run()
        if result is not None:
            line = "=" * 72
            print(
                f"\n{line}\nFirst run: created workspace '{result.workspace.slug}', an admin user and an API key.\n"
                f"They are shown once; keep them.\n\n"
                f"  Dashboard  http://{self.host}:{self.port}/   user: {result.username}   password: {result.password}\n"
                f"  API key    {result.api_key}\n{line}\n",
                flush=True,
            )
        connections.close_all()

    def spawn(self, name: str, argv: list[str], env: dict[str, str] | None = None, nice: int = 0) -> None:
        self.children[name] = child = Child(name=name, argv=argv, env={**os.environ, **(env or {})}, nice=nice)
        self.start_child(child)

    def start_child(self, child: Child) -> None:
        # Own session: a Ctrl-C in the terminal reaches only this launcher, which then
        # stops the children in order instead of racing them; and the child's pid is the
        # group of everything it forks, which one killpg reaches.
        # Called from the main thread only: the parent-death signal follows the thread.
        child.process = subprocess.Popen(
            child.argv, start_new_session=True, env=child.env, preexec_fn=_child_setup(child.nice),
        )
        child.started_at = time.monotonic()
        child.restart_at = None
        PID_FILES.write(child.name, child.process.pid)
        say(f"started {child.name} (pid {child.process.pid})")

    def start_processes(self) -> None:
        web_workers = os.environ.get("WEB_CONCURRENCY", "2")
        self.spawn("web", [
            str(BIN / "gunicorn"), "mnemo.wsgi:application",
            "--bind", f"{self.host}:{self.port}", "--workers", web_workers, "--threads", "4",
            "--timeout", "60", "--graceful-timeout", "10", "--access-logfile", "-",
            # gunicorn closes an idle kept-alive connection after 2 s by default: an agent that
            # sends its next request about then races the close and gets no answer at all
            # (the load bench's one "status 0" in ~1,450 requests, with 0.5–2 s between calls).
            # Idle connections wait in gthread's poller, not on a thread, so a longer wait is cheap.
            "--keep-alive", "75",
            "--access-logformat", ACCESS_LOG_FORMAT, "--logger-class", GUNICORN_LOGGER,
        ], env={"MNEMO_TORCH_THREADS": "1",  # the web only ever embeds one query at a time
                "MNEMO_WARM_UP": "1"})  # the model loads at boot, not on the first query
        concurrency = int(os.environ.get("CELERY_CONCURRENCY", "2"))
        worker = [
            str(BIN / "celery"), "-A", "mnemo", "worker", "--loglevel", "INFO", "--concurrency", str(concurrency),
        ]
        from django.conf import settings

        if settings.CELERY_BROKER_URL.startswith("filesystem://"):
            # The filesystem transport has no broadcast worth the polling it costs.
            worker += ["--without-gossip", "--without-mingle", "--without-heartbeat"]
        torch_threads = os.environ.get("MNEMO_TORCH_THREADS") or str(max(1, (os.cpu_count() or 1) // concurrency))
        # Background work yields the CPU to requests an agent is waiting on: on a small
        # machine the embedding bursts would otherwise show up in API latency.
        self.spawn("worker", worker, env={"MNEMO_TORCH_THREADS": torch_threads}, nice=WORKER_NICENESS)
        self.spawn("beat", [
            str(BIN / "celery"), "-A", "mnemo", "beat", "--loglevel", "INFO",
            "--schedule", str(settings.CELERY_BEAT_SCHEDULE_FILE),
        ])

    def wait_until_serving(self, timeout: float = 60) -> bool:
        url = f"http://{self.host}:{self.port}/api/v1/health"
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.children["web"].process.poll() is not None:
                return False
            try:
                with urllib.request.urlopen(url, timeout=2) as response:
                    if response.status == 200:
                        return True
            except OSError:
                time.sleep(0.3)
        return False

    def supervise(self) -> int:
        """Restart a child that exits, after a capped exponential backoff; stop everything
        only when one keeps crashing soon after each start (supervision.Backoff)."""
        while True:
            now = time.monotonic()
            for child in self.children.values():
                if child.restart_at is not None:
                    if now >= child.restart_at:
                        child.restarts += 1
                        self.start_child(child)
                    continue
                code = child.process.poll()
                if code is None:
                    continue
                ran_for = now - child.started_at
                self.reap_group(child)
                delay = child.backoff.after_exit(ran_for)
                if delay is None:
                    say(f"{child.name} exited ({_describe_exit(code)}) {child.backoff.quick_crashes} times in a row, "
                        f"each within {child.backoff.stable_seconds:.0f} s of starting: a crash loop; "
                        f"stopping everything (its output above says why)")
                    return 1
                say(f"{child.name} exited ({_describe_exit(code)}) after {ran_for:.0f} s; "
                    f"restarting it in {delay:g} s (restart {child.restarts + 1})")
                child.restart_at = now + delay
            time.sleep(0.5)

    def reap_group(self, child: Child) -> None:
        """After a child's exit: kill what it forked and left behind (gunicorn workers
        still holding the port), so that its restart starts clean."""
        supervision.kill_group(child.process.pid, signal.SIGKILL)
        if not supervision.wait_group_gone(child.process.pid, timeout=10):
            say(f"processes of {child.name}'s group {child.process.pid} did not go away after SIGKILL")
        PID_FILES.remove(child.name)

    def shutdown(self, *_args) -> None:
        if self.stopping:
            return
        self.stopping = True
        say("stopping…")
        running = [child for child in self.children.values() if child.process is not None]
        try:
            for child in running:
                if child.process.poll() is None:
                    child.process.send_signal(signal.SIGTERM)
            deadline = time.monotonic() + 20
            for child in running:
                try:
                    child.process.wait(timeout=max(0.1, deadline - time.monotonic()))
                except subprocess.TimeoutExpired:
                    say(f"{child.name} did not stop in time; killing it")
                    child.process.kill()
                    child.process.wait()
                self.reap_group(child)
        finally:
            guarding = self.embedded and self.database_claimed and not self.stop_database_unless_used()
            if self.watchdog is not None and not guarding:
                self.watchdog.terminate()
                self.watchdog.wait()
                PID_FILES.remove("watchdog")
        say("all stopped")

    def stop_database_unless_used(self) -> bool:
        """Stop the embedded PostgreSQL unless a process other than this run's uses it
        (a manage.py command in another terminal); then the watchdog stops it once
        they are done. Returns whether it is stopped."""
        server = embedded_db.running_server(embedded_db.DEFAULT_PGDATA)
        if server is None:
            return True
        try:
            others = embedded_db.other_clients(server, except_application=os.environ["PGAPPNAME"])
        except psycopg.OperationalError as exc:
            say(f"could not ask the embedded PostgreSQL who uses it ({exc}); the watchdog will ask again")
            return False
        if others:
            say(f"the embedded PostgreSQL stays up: {others} other connection(s) use it; the watchdog "
                f"(pid {self.watchdog.pid if self.watchdog else '?'}) stops it once they are closed")
            return False
        embedded_db.stop(embedded_db.DEFAULT_PGDATA)
        say("stopped the embedded PostgreSQL")
        return True

    def run(self) -> int:
        self.acquire_lock()
        for signum in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
            signal.signal(signum, self._on_signal)
        try:
            self.clean_up_leftovers()
            self.refuse_if_port_taken()
            self.start_watchdog()
            self.start_database()
            self.prepare()
            self.start_processes()
            if not self.wait_until_serving():
                say("the web server did not come up; stopping")
                return 1
            say(f"Mnemo is serving http://{self.host}:{self.port}/ (API docs: /api/v1/docs). Ctrl-C stops everything.")
            return self.supervise()
        except KeyboardInterrupt:
            return 0
        finally:
            self.shutdown()

    def _on_signal(self, _signum, _frame) -> None:
        # Leave whatever step is running and shut down from run(); a second Ctrl-C while
        # shutting down is ignored so that PostgreSQL is always stopped cleanly.
        if not self.stopping:
            raise KeyboardInterrupt


def main() -> None:
    sys.exit(Launcher().run())


if __name__ == "__main__":
    main()
