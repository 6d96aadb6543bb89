"""Export: a workspace to one zip of JSON Lines, streamed (core/archive/__init__.py).

One REPEATABLE READ, READ ONLY transaction, so every table comes from the same snapshot;
rows are read through server-side cursors (`.iterator(chunk_size=…)` inside a
transaction) and written line by line into the zip's deflate stream, so memory stays
bounded whatever the size of the workspace."""

from __future__ import annotations

import hashlib
import json
import zipfile
from collections.abc import Callable
from pathlib import Path

from django.contrib.auth import get_user_model
from django.db import connection, transaction
from django.utils import timezone

from core.archive.tables import KIND_DROPPED, KIND_USER, KIND_WORKSPACE, Table, archive_tables, columns
from core.models import Workspace
from core.providers import get_embedder

FORMAT = "mnemo-workspace"
FORMAT_VERSION = 1
MANIFEST = "manifest.json"
CHUNK_ROWS = 2000

Progress = Callable[[str, int], None]  # (table name, rows written so far in it)


def mnemo_version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("mnemo")
    except PackageNotFoundError:
        return "unknown"


def embedding_signature() -> dict:
    """Which model made the vectors: the import carries them only into the same model."""
    embedder = get_embedder()
    return {"model": embedder.name, "dimensions": embedder.dimensions}


def workspace_export(*, workspace: Workspace, path: Path, progress: Progress | None = None) -> dict:
    """Write the archive; returns its manifest."""
    tables = archive_tables()
    manifest = {"format": FORMAT, "format_version": FORMAT_VERSION, "mnemo_version": mnemo_version(),
                "exported_at": timezone.now().isoformat(),
                "workspace": {"name": workspace.name, "slug": workspace.slug},
                "embedding": embedding_signature(), "tables": {}}
    usernames = dict(get_user_model().objects.values_list("pk", "username"))
    nested = connection.in_atomic_block  # (tests) a snapshot of the caller's transaction
    with transaction.atomic(), zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED, compresslevel=1) as zf:
        if not nested:
            with connection.cursor() as cursor:
                cursor.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY")
        for table in tables:
            manifest["tables"][table.name] = _write_table(zf, table, tables, workspace, usernames, progress)
        zf.writestr(MANIFEST, json.dumps(manifest, indent=2))
    return manifest


def _write_table(zf: zipfile.ZipFile, table: Table, tables, workspace, usernames: dict, progress) -> dict:
    cols = [c for c in columns(table, tables) if c.kind not in (KIND_WORKSPACE, KIND_DROPPED) or c.primary_key]
    rows = (table.model.objects.filter(**{table.scope: workspace}).order_by("pk")
            .values_list(*[c.attname for c in cols]).iterator(chunk_size=CHUNK_ROWS))
    digest, count = hashlib.sha256(), 0
    with zf.open(table.member, "w", force_zip64=True) as out:
        for row in rows:
            line = {}
            for c, value in zip(cols, row):
                if c.kind == KIND_USER:
                    line[c.name] = usernames.get(value)
                elif c.kind == KIND_WORKSPACE:
                    line[c.name] = None  # a per-workspace row keyed by its workspace
                else:
                    line[c.name] = c.encode(value)
            data = (json.dumps(line, ensure_ascii=False, separators=(",", ":")) + "\n").encode()
            out.write(data)
            digest.update(data)
            count += 1
            if progress and count % CHUNK_ROWS == 0:
                progress(table.name, count)
    if progress:
        progress(table.name, count)
    return {"file": table.member, "model": table.label, "rows": count, "sha256": digest.hexdigest()}
