"""Database maintenance that cannot run inside a transaction: VACUUM after an erasure.

A DELETE or UPDATE only marks the old row versions dead; their text stays in the table's
pages (and the index entries pointing at them) until a VACUUM removes them. Autovacuum
would get there eventually, by its thresholds, which a small erasure in a large table may
not reach for a long time. README, "What erasure guarantees", says what this does not
remove."""

from __future__ import annotations

import logging
from collections.abc import Iterable

from django.conf import settings
from django.db import connection

from core.models import Workspace
from core.services import SYSTEM, audit_record

logger = logging.getLogger(__name__)


def tables_written_in_transaction() -> list[str]:
    """Tables of this schema in which the current transaction has updated or deleted rows
    so far, from PostgreSQL's own per-transaction counters: whatever wrote them (the ORM,
    an app's raw SQL, a trigger), no table is missed."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT relname FROM pg_stat_xact_user_tables"
            " WHERE schemaname = current_schema() AND (n_tup_upd > 0 OR n_tup_del > 0) ORDER BY relname"
        )
        return [name for (name,) in cursor.fetchall()]


def tables_vacuum(*, tables: Iterable[str], full: bool) -> list[str]:
    """VACUUM the tables (with their TOAST tables and indexes); VACUUM FULL rewrites them
    into new files instead, under an exclusive lock. Returns the tables vacuumed: names that
    are no table here (dropped since) are skipped and logged."""
    if connection.in_atomic_block:
        raise RuntimeError("VACUUM cannot run inside a transaction; call tables_vacuum in autocommit mode.")
    existing = set(connection.introspection.table_names())
    wanted = sorted(set(tables))
    missing = [name for name in wanted if name not in existing]
    if missing:
        logger.warning("not vacuuming tables that do not exist: %s", ", ".join(missing))
    present = [name for name in wanted if name in existing]
    if present:
        # INDEX_CLEANUP ON: by default a VACUUM that finds few dead rows may skip the
        # indexes, leaving entries (and b-tree keys such as a handle) of the erased rows.
        options = "FULL" if full else "INDEX_CLEANUP ON"
        names = ", ".join(connection.ops.quote_name(name) for name in present)
        with connection.cursor() as cursor:
            cursor.execute(f"VACUUM ({options}) {names}")
    return present


def erased_tables_vacuum(*, workspace_id: int, erasure_id: str, tables: list[str]) -> list[str]:
    """After an erasure committed: vacuum the tables it wrote (VACUUM FULL when
    MNEMO_ERASURE_VACUUM_FULL is on) and record that in the audit log."""
    full = settings.MNEMO_ERASURE_VACUUM_FULL
    vacuumed = tables_vacuum(tables=tables, full=full)
    workspace = Workspace.objects.filter(pk=workspace_id).first()
    if workspace is not None:
        audit_record(workspace=workspace, actor=SYSTEM, verb="entity.erase.vacuum",
                     data={"erasure": erasure_id, "tables": vacuumed, "full": full})
    return vacuumed
