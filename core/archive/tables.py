"""What goes into a workspace archive and how one row becomes one JSON line and back.

Each layer lists its tables (`Layer.archive`, core.layers); core adds its own (the audit
log). A row is serialised generically from its model's concrete fields, so a field added
by a migration travels without code here. Explicit handling is only for what cannot be
copied as it is:
- foreign keys: to the workspace (implicit: the import's workspace), to another archived
  table (the source id, remapped on import), to a user (the username, matched on import),
  to anything else (API keys, webhook endpoints: not carried, null on import);
- integer columns that hold another table's id without a foreign key (`Table.refs`);
- vectors (carried when the embedding model matches, see core.archive.loading);
- generated columns (recomputed by the database) and `Table.omit` (secrets, caches)."""

from __future__ import annotations

import datetime as dt
import uuid
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from django.conf import settings
from django.contrib.postgres.fields import ArrayField
from django.db import models
from pgvector.django import VectorField

from core import layers
from core.models import AuditEvent, Workspace


@dataclass(frozen=True)
class ByColumn:
    """A reference whose table another column of the same row names: AuditEvent.target_id
    by `target_type` (a model label), ReviewItem.target_id by `kind` (a review kind, which
    the table declaring it in `Table.review_kinds` resolves)."""

    column: str
    review_kind: bool = False


@dataclass(frozen=True)
class Table:
    name: str  # the archive member: f"{name}.jsonl"
    model: type[models.Model]
    scope: str = "workspace"  # lookup from a row to its workspace
    # integer columns holding another table's id without a foreign key: column -> label or ByColumn
    refs: Mapping[str, str | ByColumn] = field(default_factory=dict)
    omit: Sequence[str] = ()
    # review kinds whose ReviewItem.target_id points at this table
    review_kinds: Sequence[str] = ()
    # a non-null vector the import cannot carry (another embedding model): the column whose
    # text is embedded again at import (small tables only), else the rows are skipped and
    # `after_import` is told so.
    vector_text: Mapping[str, str] = field(default_factory=dict)
    # (workspace_id, carried_vectors: bool, imported_pks: a sequence of ints) -> None, in the
    # import's last transaction, once the whole archive is in: fix-ups the owner knows about.
    after_import: Callable[[int, bool, list], None] | None = None

    @property
    def label(self) -> str:
        return self.model._meta.label_lower

    @property
    def member(self) -> str:
        return f"{self.name}.jsonl"


# Core's own rows. The audit log travels as it was written; what the import itself does is
# audited in the target on top.
CORE_TABLES = (
    Table("audit", AuditEvent, refs={"target_id": ByColumn("target_type")}),
)


def archive_tables() -> tuple[Table, ...]:
    """Every archived table, in pipeline order (core's last)."""
    tables = (*[t for layer in layers.layers() for t in layer.archive], *CORE_TABLES)
    names = [t.name for t in tables]
    if len(set(names)) != len(names):
        raise ValueError(f"two archived tables share a name: {names}")
    return tables


def review_targets(tables: Sequence[Table]) -> dict[str, str]:
    return {kind: t.label for t in tables for kind in t.review_kinds}


# --- one field at a time --------------------------------------------------------------------

KIND_PLAIN, KIND_REF, KIND_USER, KIND_DROPPED, KIND_WORKSPACE, KIND_VECTOR = range(6)


@dataclass(frozen=True)
class Column:
    name: str  # in the JSON line: the field's name ("entity", not "entity_id")
    attname: str  # in the database row
    kind: int
    target: str | ByColumn | None = None  # the label a reference points at
    nullable: bool = True
    encode: Callable[[Any], Any] = lambda v: v
    decode: Callable[[Any], Any] = lambda v: v
    primary_key: bool = False
    scannable: bool = False  # text the secrets filter reads on the way in


def _iso(value):
    return value.isoformat() if value is not None else None


def _datetime(value):
    return dt.datetime.fromisoformat(value) if value is not None else None


def _date(value):
    return dt.date.fromisoformat(value) if value is not None else None


def _vector(value):
    return [float(x) for x in value] if value is not None else None


def _uuid(value):
    return str(value) if value is not None else None


def columns(table: Table, tables: Sequence[Table]) -> list[Column]:
    """The columns of a table's lines, in the model's field order."""
    user_model = settings.AUTH_USER_MODEL.lower()
    archived = {t.model for t in tables}
    out: list[Column] = []
    for f in table.model._meta.concrete_fields:
        if getattr(f, "generated", False) or f.name in table.omit:
            continue
        common = {"name": f.name, "attname": f.attname, "nullable": f.null, "primary_key": f.primary_key}
        if f.is_relation:
            target = f.related_model._meta.label_lower
            if f.related_model is Workspace:
                out.append(Column(kind=KIND_WORKSPACE, **common))
            elif target == user_model:
                out.append(Column(kind=KIND_USER, **common))
            elif f.related_model in archived:
                out.append(Column(kind=KIND_REF, target=target, **common))
            elif f.null:
                out.append(Column(kind=KIND_DROPPED, target=target, **common))
            else:
                raise ValueError(f"{table.label}.{f.name} must point at an archived table: {target}")
        elif isinstance(f, VectorField):
            out.append(Column(kind=KIND_VECTOR, encode=_vector, **common))
        elif f.name in table.refs:
            out.append(Column(kind=KIND_REF, target=table.refs[f.name], **common))
        elif isinstance(f, models.DateTimeField):
            out.append(Column(kind=KIND_PLAIN, encode=_iso, decode=_datetime, **common))
        elif isinstance(f, models.DateField):
            out.append(Column(kind=KIND_PLAIN, encode=_iso, decode=_date, **common))
        elif isinstance(f, models.UUIDField):
            out.append(Column(kind=KIND_PLAIN, encode=_uuid, decode=lambda v: uuid.UUID(v) if v else None, **common))
        else:
            scannable = isinstance(f, (models.CharField, models.TextField, models.JSONField, ArrayField))
            out.append(Column(kind=KIND_PLAIN, scannable=scannable, **common))
    return out
