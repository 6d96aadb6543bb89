"""Import: an archive into an empty workspace, in one transaction (core/archive/__init__.py).

1. Check (no write): the archive's bounds, manifest and checksums, every line's JSON, and
   the secrets filter over every text and JSON value — a row carrying a secret refuses the
   whole import, with a report naming table, line, field and rule (never the secret).
2. Load, in one transaction: tables in dependency order (foreign keys first), each row
   inserted with a new id, its references remapped through the ids already given.
   Interactions and other insert-only rows are only ever INSERTed, complete, so the
   database's immutability triggers have nothing to refuse; a nullable reference to a row
   not loaded yet (a forward `supersedes`, a conversation's current summary) is set by an
   UPDATE afterwards, only on mutable tables. Vectors are carried when the embedding model
   and dimensions match the manifest's, otherwise left empty for the embed-pending tasks
   (a non-null vector is embedded again from `Table.vector_text`, or its rows skipped and
   the owner's `after_import` told so)."""

from __future__ import annotations

import bisect
from array import array
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from django.contrib.auth import get_user_model
from django.db import transaction

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
from core.models import Workspace
from core.providers import get_embedder

BATCH = 1000
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


def workspace_import(*, path: Path, workspace: Workspace, progress: Progress | None = None) -> Report:
    tables = archive_tables()
    archive = archive_open(path, tables=tables)
    try:
        plans = {t.name: _plan(t, tables) for t in tables}
        report = Report(carried_vectors=archive.manifest.get("embedding") == embedding_signature())
        _check(archive, tables, plans, report, progress)
        with transaction.atomic():
            _require_empty(workspace)
            _load(archive, tables, plans, workspace, report, progress)
    finally:
        archive.close()
    return report


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


def _load(archive: Archive, tables, plans, workspace: Workspace, report: Report, progress) -> None:
    ids = IdMap()
    for table in tables:
        pk = next(c for c in plans[table.name].cols if c.primary_key)
        if pk.kind == KIND_REF:
            ids.aliases[table.label] = pk.target
    users: dict[str, int | None] = {}
    targets = review_targets(tables)
    deferred: list[_Deferred] = []
    for table in _order(tables, plans):
        plan = plans[table.name]
        batch: list[tuple[object, object]] = []
        pks: list[int] | None = [] if table.after_import else None
        count = skipped = 0
        for row in archive.rows(table):
            built = _build(plan, row, workspace, ids, users, targets, report.carried_vectors, deferred)
            if built is None:
                skipped += 1
                if pks is not None:
                    pks.append(_mapped_pk(plan, row, ids, workspace))
                continue
            batch.append(built)
            if len(batch) >= BATCH:
                count += _insert(plan, batch, ids, deferred, pks)
                batch = []
                if progress:
                    progress(table.name, count)
        count += _insert(plan, batch, ids, deferred, pks)
        if progress:
            progress(table.name, count)
        report.counts[table.name] = count
        if skipped:
            report.skipped[table.name] = skipped
        if table.after_import:
            table.after_import(workspace.pk, report.carried_vectors, pks or [])
    models = {t.label: t.model for t in tables}
    for d in deferred:
        new = ids.get(d.target, d.old)
        if new is not None:  # else the source row pointed at something it no longer had
            models[d.label].objects.filter(pk=d.pk).update(**{d.attname: new})


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


def _insert(plan: Plan, batch: list, ids: IdMap, deferred: list, pks: list | None) -> int:
    if not batch:
        return 0
    created = plan.table.model.objects.bulk_create([instance for instance, _ in batch], batch_size=BATCH)
    for (instance, old), row in zip(batch, created):
        if plan.auto_pk:
            ids.add(plan.table.label, int(old), row.pk)
        if pks is not None:
            pks.append(row.pk)
        for d in getattr(instance, "_archive_deferred", ()):
            d.pk = row.pk
    return len(created)
