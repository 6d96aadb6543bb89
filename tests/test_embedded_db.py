"""A setting that only a restart applies (shared_buffers, MNEMO_PG_SHARED_BUFFERS): the
embedded server is restarted once with it, and left alone when it already runs with it."""

from __future__ import annotations

import psycopg

from mnemo import embedded_db


def _shared_buffers(server) -> str:
    with psycopg.connect(server.dsn("postgres")) as conn:
        return conn.execute("SHOW shared_buffers").fetchone()[0]


def test_shared_buffers_are_applied_by_one_restart(tmp_path):
    pgdata = tmp_path / "pg"
    server, started = embedded_db.start(pgdata)
    try:
        assert started and _shared_buffers(server) == "128MB"
        restarted = embedded_db.ensure_restart_setting(pgdata, "shared_buffers", "160MB")
        assert restarted.pid != server.pid and _shared_buffers(restarted) == "160MB"
        again = embedded_db.ensure_restart_setting(pgdata, "shared_buffers", "160MB")
        assert again.pid == restarted.pid
    finally:
        embedded_db.stop(pgdata)
