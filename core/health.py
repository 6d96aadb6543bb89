"""Readiness checks behind GET /api/v1/ready: each answers (ok, detail) and never raises."""

from __future__ import annotations

import os
from collections.abc import Callable

from celery import current_app
from django.conf import settings
from django.db import DEFAULT_DB_ALIAS, connections
from django.db.migrations.executor import MigrationExecutor

Check = Callable[[], tuple[bool, str]]


def check_database() -> tuple[bool, str]:
    with connections[DEFAULT_DB_ALIAS].cursor() as cursor:
        cursor.execute("SELECT version()")
        return True, cursor.fetchone()[0].split(" on ")[0]


def check_pgvector() -> tuple[bool, str]:
    with connections[DEFAULT_DB_ALIAS].cursor() as cursor:
        cursor.execute("SELECT extversion FROM pg_extension WHERE extname = 'vector'")
        row = cursor.fetchone()
    return (True, f"vector {row[0]}") if row else (False, "the vector extension is not installed")


def check_migrations() -> tuple[bool, str]:
    connection = connections[DEFAULT_DB_ALIAS]
    executor = MigrationExecutor(connection)
    plan = executor.migration_plan(executor.loader.graph.leaf_nodes())
    if plan:
        return False, f"{len(plan)} migration(s) not applied"
    return True, "all applied"


def check_broker() -> tuple[bool, str]:
    url = settings.CELERY_BROKER_URL
    if url.startswith("filesystem://"):
        options = settings.CELERY_BROKER_TRANSPORT_OPTIONS
        folders = [options["data_folder_in"], options["data_folder_out"], options["control_folder"]]
        missing = [f for f in folders if not os.access(f, os.W_OK | os.X_OK)]
        if missing:
            return False, f"broker folder not writable: {missing[0]}"
        return True, "filesystem transport"
    # The project's Celery app (mnemo.celery, made current when the mnemo package loads):
    # core sits below the project package and does not import it.
    with current_app.connection_for_write(url) as conn:
        conn.ensure_connection(max_retries=1, interval_start=0, interval_step=0, timeout=2)
        return True, conn.as_uri()


CHECKS: dict[str, Check] = {
    "database": check_database,
    "pgvector": check_pgvector,
    "migrations": check_migrations,
    "broker": check_broker,
}


def readiness() -> dict[str, tuple[bool, str]]:
    return {name: _safe(check) for name, check in CHECKS.items()}


def _safe(check: Check) -> tuple[bool, str]:
    try:
        return check()
    except Exception as exc:  # a failing dependency is the answer, not an error
        return False, f"{type(exc).__name__}: {exc}"[:300]
