"""Import: an archive into an empty workspace, in bounded transactions, all of it or none of
it visible (core/archive/__init__.py).

1. Check (no write): the archive's bounds, manifest and checksums, every line's JSON, and
   the secrets filter over every text and JSON value — a row carrying a secret refuses the
   whole import, with a report naming table, line, field and rule (never the secret).
2. Load, MNEMO_ARCHIVE_IMPORT_BATCH lines a transaction, behind an ImportProgress row that
   hides the workspace (refused to agents and the dashboard, skipped by background jobs)
   until the last transaction deletes it. Each batch commits its rows, the ids they were
   given (ImportIdMap), the references to set at the end (ImportDeferred) and the progress
   together, so a killed import resumes where it stopped (`resume=True`), and memory stays
   bounded by the id maps (16 bytes a row). Tables go in dependency order (foreign keys
   first), each row inserted with a new id, its references remapped through the ids already
   given. Interactions and other insert-only rows are only ever INSERTed, complete, so the
   database's immutability triggers have nothing to refuse; a nullable reference to a row
   not loaded yet (a forward `supersedes`, a conversation's current summary) is set by an
   UPDATE in the last transaction, only on mutable tables. Vectors are carried when the
   embedding model and dimensions match the manifest's, otherwise left empty for the
   embed-pending tasks (a non-null vector is embedded again from `Table.vector_text`, or its
   rows skipped and the owner's `after_import` told so).
3. A row the references or the database refuse mid-way undoes the batches already
   committed (`import_abandon`, also the command's `--abandon`)."""

from __future__ import annotations

import bisect
from array import array
from collections.abc import Callable
from contextlib import contextmanager
from dataclasses import dataclass, field
from itertools import islice
from pathlib import Path

from django.conf import settings
from django.contrib.auth import get_user_model
from django.db import DataError, IntegrityError, connection, transaction
from django.utils import timezone

from core.archive.reading import MAX_PROBLEMS, Archive, ArchiveError, archive_open, secrets_in
from core.archive.tables import (
    KIND_DROPPED,
    KIND_PLAIN,
    KIND_REF,
    KIND_USER,
    KIND_VECTOR,
    KIND_WORKSPACE,
    CORE_TABLES,
    ByColumn,
    Column,
    Table,
    archive_tables,
    columns,
    review_targets,
)
from core.archive.writing import embedding_signature
from core.models import ImportDeferred, ImportIdMap, ImportProgress, Workspace
from core.providers import get_embedder

BATCH = 1000  # rows a bulk INSERT
LOCK_CLASS = 19006  # pg advisory lock class of imports (issue 19 part 6), keyed by workspace id
Progress = Callable[[str, int], None]


class IdMap:
    """Source id -> new id per table, as two sorted arrays (the archive lists each table
    in id order): 16 bytes a row, so a million interactions cost 16 MB, not a dict's ~100."""

    def __init__(self):
        self._old: dict[str, array] = {}
        self._new: dict[str, array] = {}
        self.aliases: dict[str, str] = {}  # a table keyed by another's id (DecisionRecord -> Entity)

    def add(self, label: str, old: int, new: int) -> None:
        olds = self._old.setdefault(label, array("q"))
        if olds and old <= olds[-1]:
            raise ArchiveError(f"{label} rows are not in id order in the archive")
        olds.append(old)
        self._new.setdefault(label, array("q")).append(new)

    def get(self, label: str, old) -> int | None:
        while label in self.aliases:
            label = self.aliases[label]
        try:
            old = int(old)
        except (TypeError, ValueError):
            return None
        olds = self._old.get(label)
        if not olds:
            return None
        i = bisect.bisect_left(olds, old)
        return self._new[label][i] if i < len(olds) and olds[i] == old else None


@dataclass
class Plan:
    table: Table
    cols: list[Column]
    auto_pk: bool  # the database gives the id (else the pk is a reference or the workspace)


@dataclass
class Report:
    counts: dict[str, int] = field(default_factory=dict)
    skipped: dict[str, int] = field(default_factory=dict)
    carried_vectors: bool = True
    ignored_columns: dict[str, list[str]] = field(default_factory=dict)


def _order(tables: tuple[Table, ...], plans: dict[str, Plan]) -> list[Table]:
    """Foreign keys first (Kahn's algorithm, declaration order among equals). A cycle is
    broken at a nullable reference, set afterwards; tables whose references depend on a
    column's value (the review queue's targets, the audit log's) come last."""
    label_of = {t.label: t.name for t in tables}
    late = [t for t in tables if any(isinstance(c.target, ByColumn) for c in plans[t.name].cols)]
    pending = [t for t in tables if t not in late]
    needs = {t.name: {(label_of[c.target], c.nullable) for c in plans[t.name].cols
                      if c.kind == KIND_REF and isinstance(c.target, str) and c.target != t.label
                      and c.target in label_of} for t in pending}
    order: list[Table] = []
    while pending:
        done = {t.name for t in order}
        ready = next((t for t in pending if all(n in done for n, _ in needs[t.name])), None)
        ready = ready or next((t for t in pending if all(n in done or null for n, null in needs[t.name])), None)
        if ready is None:
            raise ValueError(f"archived tables reference each other without a nullable link: {needs}")
        order.append(ready)
        pending.remove(ready)
    return order + late


def workspace_import(*, path: Path, workspace: Workspace, progress: Progress | None = None,
                     resume: bool = False) -> Report:
    """Check the whole archive (no write), then load it in bounded transactions behind an
    ImportProgress row: the workspace stays hidden until the last one commits. `resume`
    carries on an import that was killed, from its last committed batch, with the same
    archive. A row that the references or the database refuse mid-way undoes every batch
    already loaded (import_abandon): nothing is kept."""
    tables = archive_tables()
    archive = archive_open(path, tables=tables)
    try:
        plans = {t.name: _plan(t, tables) for t in tables}
        report = Report(carried_vectors=archive.manifest.get("embedding") == embedding_signature())
        _check(archive, tables, plans, report, progress)
        with _import_lock(workspace):
            state = _begin(workspace, archive.digest, resume)
            try:
                _load(archive, tables, plans, workspace, report, progress, state)
            except ArchiveError as exc:
                import_abandon(workspace=workspace)
                raise ArchiveError(f"{exc}: nothing was imported", exc.problems) from None
    finally:
        archive.close()
    return report


@contextmanager
def _import_lock(workspace: Workspace):
    """One import into a workspace at a time: a session lock, so a killed import's lock goes
    with its connection and a resume can take it."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_try_advisory_lock(%s, %s)", [LOCK_CLASS, workspace.pk])
        if not cursor.fetchone()[0]:
            raise ArchiveError(f"an import into {workspace.slug!r} is running")
    try:
        yield
    finally:
        with connection.cursor() as cursor:
            cursor.execute("SELECT pg_advisory_unlock(%s, %s)", [LOCK_CLASS, workspace.pk])


def _begin(workspace: Workspace, digest: str, resume: bool) -> ImportProgress:
    with transaction.atomic():
        state = ImportProgress.objects.filter(workspace=workspace).first()
        if resume:
            if state is None:
                raise ArchiveError(f"there is no interrupted import into {workspace.slug!r} to resume")
            if state.archive_digest != digest:
                raise ArchiveError(f"this is not the archive the interrupted import into {workspace.slug!r} was reading")
            return state
        if state is not None:
            raise ArchiveError(f"an import into {workspace.slug!r} was interrupted: resume it with the same archive, "
                               "or abandon it")
        _require_empty(workspace)
        return ImportProgress.objects.create(workspace=workspace, archive_digest=digest)


def import_abandon(*, workspace: Workspace) -> dict[str, int]:
    """Undo an interrupted or failed import: delete every row its committed batches loaded,
    then its progress, in one transaction (foreign keys are checked at commit; children go
    first only because a child's rows are found through its parent). The workspace was
    empty before the import, so every row
    of an archived table is the import's — but the audit log, of which only the imported ids
    go. Rows outside the archive that point at imported ones go with them (the backlog the
    interactions' trigger filled) or let go of them (a nullable link). Plain SQL statements:
    memory does not grow with size."""
    tables = archive_tables()
    plans = {t.name: _plan(t, tables) for t in tables}
    archived = {t.model for t in tables}
    deleted: dict[str, int] = {}
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute("SET LOCAL mnemo.erasure = 'on'")
        # Children first: a child's rows are found through its parent (`Table.scope`).
        for table in reversed(_order(tables, plans)):
            model = table.model
            if table in CORE_TABLES:
                rows = model.objects.filter(pk__in=ImportIdMap.objects.filter(
                    workspace=workspace, label=table.label).values("new"))
            else:
                rows = model.objects.filter(**{table.scope: workspace})
            keys = rows.values("pk")
            for rel in model._meta.get_fields(include_hidden=True):  # hidden: related_name="+" too
                if (rel.auto_created and not rel.concrete and (rel.one_to_many or rel.one_to_one)
                        and rel.related_model not in archived):
                    _raw_unlink(cursor, rel.related_model, rel.field, keys)
            deleted[table.name] = _raw_delete(cursor, model, model._meta.pk.column, keys)
        for model in (ImportIdMap, ImportDeferred, ImportProgress):
            model.objects.filter(workspace=workspace).delete()
    return deleted


def _raw_unlink(cursor, model, field, keys) -> None:
    """Rows of another table pointing at rows about to go: a nullable link is cleared (a key
    bound to an imported agent stays), else the row goes (an imported interaction's backlog)."""
    if field.null:
        sql, params = keys.query.sql_with_params()
        cursor.execute(f'UPDATE "{model._meta.db_table}" SET "{field.column}" = NULL WHERE "{field.column}" IN ({sql})',
                       params)
    else:
        _raw_delete(cursor, model, field.column, keys)


def _raw_delete(cursor, model, column: str, keys) -> int:
    sql, params = keys.query.sql_with_params()
    cursor.execute(f'DELETE FROM "{model._meta.db_table}" WHERE "{column}" IN ({sql})', params)
    return cursor.rowcount


def _plan(table: Table, tables) -> Plan:
    cols = columns(table, tables)
    pk = next(c for c in cols if c.primary_key)
    return Plan(table=table, cols=cols, auto_pk=pk.kind == KIND_PLAIN)


def _check(archive: Archive, tables, plans, report: Report, progress) -> None:
    problems: list[dict] = []
    for table in tables:
        names = {c.name for c in plans[table.name].cols}
        scannable = [c.name for c in plans[table.name].cols if c.scannable]
        ignored: set[str] = set()
        for number, row in enumerate(archive.rows(table), 1):
            ignored.update(row.keys() - names)
            for where, rule in secrets_in(row, scannable):
                if len(problems) < MAX_PROBLEMS:
                    problems.append({"table": table.name, "line": number, "field": where, "rule": rule,
                                     "message": f"{table.member} line {number}: {where} carries a secret ({rule})"})
            if progress and number % 5000 == 0:
                progress(f"check {table.name}", number)
        if ignored:
            report.ignored_columns[table.name] = sorted(ignored)
    if problems:
        raise ArchiveError(f"refused: {len(problems)}{'+' if len(problems) == MAX_PROBLEMS else ''} row(s) carry a "
                           "secret; nothing was imported", problems)


def _holding(workspace: Workspace) -> str | None:
    """The first archived table with rows in the workspace. The audit log does not count:
    creating the workspace wrote its first row."""
    for table in archive_tables():
        if table not in CORE_TABLES and table.model.objects.filter(**{table.scope: workspace}).exists():
            return table.name
    return None


def is_empty(workspace: Workspace) -> bool:
    return _holding(workspace) is None


def _require_empty(workspace: Workspace) -> None:
    held = _holding(workspace)
    if held is not None:
        raise ArchiveError(f"workspace {workspace.slug!r} already holds {held}: import only into an empty workspace")


@dataclass
class _Deferred:
    label: str
    pk: int
    attname: str
    target: str
    old: int


def _load(archive: Archive, tables, plans, workspace: Workspace, report: Report, progress,
          state: ImportProgress) -> None:
    ids = _ids_restored(workspace)
    for table in tables:
        pk = next(c for c in plans[table.name].cols if c.primary_key)
        if pk.kind == KIND_REF:
            ids.aliases[table.label] = pk.target
    users: dict[str, int | None] = {}
    targets = review_targets(tables)
    report.counts.update(state.counts)
    report.skipped.update(state.skipped)
    size = settings.MNEMO_ARCHIVE_IMPORT_BATCH
    for table in _order(tables, plans):
        if table.name in state.tables_done:
            continue
        plan = plans[table.name]
        done = state.lines_done if state.table == table.name else 0
        if not done:
            report.counts[table.name] = 0
            report.skipped.pop(table.name, None)
        rows = archive.rows(table)
        for _ in islice(rows, done):  # committed before the kill; still read, for the checksum
            pass
        while lines := list(islice(rows, size)):
            _load_batch(plan, lines, done, workspace, ids, users, targets, report)
            done += len(lines)
            if progress:
                progress(table.name, report.counts[table.name])
        state.tables_done = [*state.tables_done, table.name]
        ImportProgress.objects.filter(pk=workspace.pk).update(
            tables_done=state.tables_done, table="", lines_done=0, updated_at=timezone.now())
    _finish(tables, workspace, ids, report)


def _load_batch(plan: Plan, lines: list[dict], done: int, workspace: Workspace, ids: IdMap, users: dict,
                targets: dict, report: Report) -> None:
    """One transaction: the lines' rows, the ids they were given, the references to set at
    the end and the progress, together."""
    table = plan.table
    deferred: list[_Deferred] = []
    batch: list[tuple[object, object]] = []
    keys: tuple[list, list] | None = ([], []) if table.after_import else None
    skipped = 0
    try:
        with transaction.atomic():
            for number, row in enumerate(lines, done):
                built = _build(plan, row, workspace, ids, users, targets, report.carried_vectors, deferred)
                if built is None:
                    skipped += 1
                    mapped = _mapped_pk(plan, row, ids, workspace)
                    if keys is not None and mapped is not None:
                        keys[0].append(number)
                        keys[1].append(mapped)
                    continue
                batch.append(built)
            pairs = _insert(plan, batch, ids, keys, first=done)
            _remember(workspace.pk, table.label, pairs)
            if keys is not None:
                _remember(workspace.pk, f"pks:{table.name}", keys)
            ImportDeferred.objects.bulk_create([
                ImportDeferred(workspace=workspace, label=d.label, row=d.pk, attname=d.attname, target=d.target,
                               old=int(d.old)) for d in deferred])
            report.counts[table.name] = report.counts.get(table.name, 0) + len(batch)
            if skipped:
                report.skipped[table.name] = report.skipped.get(table.name, 0) + skipped
            ImportProgress.objects.filter(pk=workspace.pk).update(
                table=table.name, lines_done=done + len(lines), counts=report.counts, skipped=report.skipped,
                updated_at=timezone.now())
    except (IntegrityError, DataError) as exc:
        raise ArchiveError(f"{table.member} lines {done + 1}–{done + len(lines)}: the database refused a row "
                           f"({type(exc).__name__}: {str(exc).splitlines()[0][:300]})") from None


def _remember(workspace_id: int, label: str, pairs: tuple[list, list]) -> None:
    """Source id -> new id rows of one batch, in one statement."""
    if not pairs[0]:
        return
    with connection.cursor() as cursor:
        cursor.execute(f"INSERT INTO {ImportIdMap._meta.db_table} (workspace_id, label, old, new) "
                       "SELECT %s, %s, unnest(%s::bigint[]), unnest(%s::bigint[])",
                       [workspace_id, label, pairs[0], pairs[1]])


def _ids_restored(workspace: Workspace) -> IdMap:
    """The ids the committed batches of an interrupted import gave (empty for a new one)."""
    ids = IdMap()
    rows = (ImportIdMap.objects.filter(workspace=workspace).exclude(label__startswith="pks:")
            .order_by("label", "old").values_list("label", "old", "new").iterator(chunk_size=10_000))
    for label, old, new in rows:
        ids.add(label, old, new)
    return ids


def _finish(tables, workspace: Workspace, ids: IdMap, report: Report) -> None:
    """The last transaction: the owners' fix-ups, the forward references, and the progress
    row deleted, which makes the workspace usable."""
    models = {t.label: t.model for t in tables}
    with transaction.atomic():
        for table in tables:
            if table.after_import:
                pks = array("q", ImportIdMap.objects.filter(workspace=workspace, label=f"pks:{table.name}")
                            .order_by("old").values_list("new", flat=True).iterator(chunk_size=10_000))
                table.after_import(workspace.pk, report.carried_vectors, pks)
        for d in ImportDeferred.objects.filter(workspace=workspace).order_by("pk").iterator(chunk_size=2000):
            new = ids.get(d.target, d.old)
            if new is not None:  # else the source row pointed at something it no longer had
                models[d.label].objects.filter(pk=d.row).update(**{d.attname: new})
        for model in (ImportIdMap, ImportDeferred, ImportProgress):
            model.objects.filter(workspace=workspace).delete()


def _mapped_pk(plan: Plan, row: dict, ids: IdMap, workspace) -> int | None:
    pk = next(c for c in plan.cols if c.primary_key)
    return ids.get(pk.target, row.get(pk.name)) if pk.kind == KIND_REF else None


def _build(plan: Plan, row: dict, workspace, ids: IdMap, users: dict, targets: dict, carried: bool,
           deferred: list) -> tuple[object, object] | None:
    """(model instance, source id) for one line, or None when the row cannot come (a
    non-null vector of another model with nothing to embed it from again)."""
    values: dict = {}
    forward: list[tuple[str, str, int]] = []
    old_pk = None
    label = plan.table.label
    for c in plan.cols:
        value = row.get(c.name)
        if c.primary_key and c.kind == KIND_PLAIN:
            old_pk = value
            continue
        if c.name not in row and c.kind == KIND_PLAIN:
            continue  # an older archive without this field: the model's default
        if c.kind == KIND_WORKSPACE:
            values[c.attname] = workspace.pk
        elif c.kind == KIND_DROPPED:
            values[c.attname] = None
        elif c.kind == KIND_USER:
            values[c.attname] = _user(users, value)
        elif c.kind == KIND_VECTOR:
            if value is not None and not carried:
                if c.nullable:
                    value = None
                elif c.name in plan.table.vector_text:
                    value = _embed(row.get(plan.table.vector_text[c.name]) or "")
                else:
                    return None
            values[c.attname] = value
        elif c.kind == KIND_REF:
            values[c.attname] = _ref(c, value, row, ids, targets, label, forward)
        else:
            values[c.attname] = c.decode(value)
    instance = plan.table.model(**values)
    for attname, target, old in forward:
        deferred.append(_Deferred(label=label, pk=0, attname=attname, target=target, old=old))
        instance._archive_deferred = [*getattr(instance, "_archive_deferred", []), deferred[-1]]
    return instance, old_pk


def _ref(c: Column, value, row: dict, ids: IdMap, targets: dict, label: str, forward: list):
    if value is None or value == "":
        return value
    target = c.target
    if isinstance(target, ByColumn):
        name = row.get(target.column)
        target = targets.get(name) if target.review_kind else name
        new = ids.get(target, value) if target else None
        if new is not None:
            return str(new) if isinstance(value, str) else new
        # a target the source no longer had (erased, or not archived): kept recognisably dead
        return "" if isinstance(value, str) else -abs(int(value))
    new = ids.get(target, value)
    if new is not None:
        return new
    if c.nullable:
        forward.append((c.attname, target, value))  # a row loaded further on, set afterwards
        return None
    if not _is_fk(c):
        return -abs(int(value))
    raise ArchiveError(f"a {label} row points at {c.target} {value}, which the archive lacks")


def _is_fk(c: Column) -> bool:
    return c.attname.endswith("_id") and c.attname[:-3] == c.name


def _user(cache: dict, username):
    if username is None:
        return None
    if username not in cache:
        cache[username] = get_user_model().objects.filter(username=username).values_list("pk", flat=True).first()
    return cache[username]


def _embed(text: str) -> list[float]:
    return get_embedder().embed([text])[0]


def _insert(plan: Plan, batch: list, ids: IdMap, keys: tuple[list, list] | None, first: int) -> tuple[list, list]:
    """Insert the batch; (source ids, new ids) of a table whose ids the database gives."""
    pairs: tuple[list, list] = ([], [])
    if not batch:
        return pairs
    created = plan.table.model.objects.bulk_create([instance for instance, _ in batch], batch_size=BATCH)
    for number, ((instance, old), row) in enumerate(zip(batch, created), first):
        if plan.auto_pk:
            ids.add(plan.table.label, int(old), row.pk)
            pairs[0].append(int(old))
            pairs[1].append(row.pk)
        if keys is not None:
            keys[0].append(number)
            keys[1].append(row.pk)
        for d in getattr(instance, "_archive_deferred", ()):
            d.pk = row.pk
    return pairs
