"""Decay and archiving (issue 19 part 2): the nightly step that applies memory.decay to a
workspace's memories, and restoring what it archived.

Bounded and safe to kill: rows are taken in id order, MNEMO_DECAY_BATCH at a time, each
batch locked (SKIP LOCKED: a row a writer holds is left for the next run), computed and
written back in one short transaction with one UPDATE; a run stops after
MNEMO_DECAY_MAX_ROWS. Idempotent: every row is stepped to the run's reference time (the
start of the UTC day) and records it in `strength_at`, and only rows behind it are taken,
so a second run the same night finds nothing, and a killed run's next run finishes it."""

from __future__ import annotations

from datetime import datetime, time, timezone as dt_timezone

from django.conf import settings
from django.db import connection, transaction
from django.db.models import Q
from django.utils import timezone

from core.errors import Conflict
from core.models import Workspace
from core.safe_text import refuse_secrets
from core.services import SYSTEM, Actor, audit_record, audit_record_many
from memory import decay
from memory.models import OPEN_STATUSES, ArchivedReason, Memory, MemoryStatus
from memory.selectors import memory_counts
from memory.services.memories import _locked

_COLUMNS = ("pk", "type", "status", "strength", "strength_at", "created_at", "last_confirmed_at", "last_accessed_at",
            "reinforcement_count", "access_count", "consolidated_into_id", "consolidated_into__status")


def decay_reference_time(now: datetime | None = None) -> datetime:
    """The start of the (UTC) day: every run of one day steps to the same moment, which is
    what makes a second run that day change nothing."""
    now = now or timezone.now()
    return datetime.combine(now.astimezone(dt_timezone.utc).date(), time.min, tzinfo=dt_timezone.utc)


def memories_decay(*, workspace_id: int, as_of: datetime, half_lives: dict[str, float] | None = None,
                   archive_below: float | None = None, batch: int | None = None,
                   max_rows: int | None = None) -> dict:
    """Step every candidate and active memory of the workspace to `as_of`; archive the
    active ones that fell under the threshold (memory.decay.archives). Returns the counts a
    job run records, with the workspace's memories by status and type afterwards (the
    maintenance page charts them)."""
    half_lives = half_lives or settings.MNEMO_DECAY_HALF_LIFE_DAYS
    archive_below = settings.MNEMO_DECAY_ARCHIVE_BELOW if archive_below is None else archive_below
    batch = batch or settings.MNEMO_DECAY_BATCH
    max_rows = max_rows or settings.MNEMO_DECAY_MAX_ROWS
    workspace = Workspace.objects.get(pk=workspace_id)
    counts = {"as_of": as_of.isoformat(), "decayed": 0, "archived": 0, "unfinished": False}
    after = 0
    while True:
        if counts["decayed"] >= max_rows:
            counts["unfinished"] = True
            break
        stepped, archived, after = _decay_batch(workspace, as_of, after, min(batch, max_rows - counts["decayed"]),
                                                half_lives, archive_below)
        if not stepped:
            break
        counts["decayed"] += stepped
        counts["archived"] += archived
    counts["memories"] = memory_counts(workspace_id=workspace_id)
    return counts


@transaction.atomic
def _decay_batch(workspace: Workspace, as_of: datetime, after: int, size: int, half_lives: dict[str, float],
                 archive_below: float) -> tuple[int, int, int]:
    rows = list(Memory.objects.select_for_update(no_key=True, skip_locked=True, of=("self",))
                .filter(workspace_id=workspace.pk, status__in=OPEN_STATUSES, pk__gt=after)
                .filter(Q(strength_at__isnull=True) | Q(strength_at__lt=as_of))
                .order_by("pk").values_list(*_COLUMNS)[:size])
    if not rows:
        return 0, 0, after
    ids, strengths, archive, audit = [], [], [], []
    for (pk, type_, status, strength, strength_at, created_at, confirmed_at, accessed_at, reinforcements,
         accesses, pattern_id, pattern_status) in rows:
        since = decay.anchor(strength_at=strength_at, created_at=created_at, last_confirmed_at=confirmed_at,
                             last_accessed_at=accessed_at)
        half_life = decay.effective_half_life(half_lives[type_], reinforcements=reinforcements, accesses=accesses)
        new = decay.decayed(strength, days=decay.days_between(since, as_of), half_life_days=half_life)
        archives = status == MemoryStatus.ACTIVE and decay.archives(strength=new, memory_type=type_,
                                                                   threshold=archive_below,
                                                                   consolidated=pattern_status == MemoryStatus.ACTIVE)
        ids.append(pk)
        strengths.append(new)
        archive.append(archives)
        if archives:
            audit.append((Memory(pk=pk), {"strength": round(new, 4), "half_life_days": round(half_life, 1),
                                          "unused_since": since.isoformat()}))
    with connection.cursor() as cursor:
        cursor.execute("""
            UPDATE memory_memory m
            SET strength = u.strength, strength_at = %s,
                status = CASE WHEN u.archive THEN 'archived' ELSE m.status END,
                archived_reason = CASE WHEN u.archive THEN %s ELSE m.archived_reason END,
                updated_at = CASE WHEN u.archive THEN %s ELSE m.updated_at END
            FROM unnest(%s::bigint[], %s::float8[], %s::bool[]) AS u(id, strength, archive)
            WHERE m.id = u.id""", [as_of, ArchivedReason.DECAY, timezone.now(), ids, strengths, archive])
    if audit:
        audit_record_many(workspace=workspace, actor=SYSTEM, verb="memory.archive_decayed", rows=audit)
    return len(rows), len(audit), rows[-1][0]


@transaction.atomic
def memory_unarchive(*, memory: Memory, actor: Actor, note: str = "") -> Memory:
    """Bring back a memory decay archived (POST /memories/{id}/restore, the memory page):
    active again at full strength from now. A duplicate stays folded into its original."""
    refuse_secrets(note=note)
    memory = _locked(memory)
    if memory.status != MemoryStatus.ARCHIVED or memory.archived_reason != ArchivedReason.DECAY:
        why = (f"archived as a duplicate of memory {memory.duplicate_of_id}" if memory.status == MemoryStatus.ARCHIVED
               else memory.status)
        raise Conflict(f"Memory {memory.pk} is {why}; only a memory archived by decay can be restored.",
                       details={"status": memory.status, "archived_reason": memory.archived_reason})
    before = memory.strength
    now = timezone.now()
    memory.status, memory.archived_reason = MemoryStatus.ACTIVE, ""
    memory.strength, memory.strength_at, memory.updated_at = 1.0, now, now
    memory.save(update_fields=["status", "archived_reason", "strength", "strength_at", "updated_at"])
    audit_record(workspace=memory.workspace, actor=actor, verb="memory.restore", target=memory,
                 data={"note": note, "strength_before": round(before, 4)})
    return memory
