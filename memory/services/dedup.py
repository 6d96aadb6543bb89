"""The dedup scan (issue 19 part 3; seed 001's deduplication daemon): near-duplicate active
memories that slipped past the check on write are proposed for a merge in the review queue.

Why anything slips past: the check on write compares a new memory with the few neighbours
the HNSW index offers (approximate), a memory remembered through the API is compared only
once embedded, and it folds only above the workspace's threshold (0.9). The scan looks again
at every active memory, a slice per run, a little below that threshold: what it finds waits
for a person, who merges it or says "not duplicates" (remembered: never proposed again).

Bounded: each run reads the next `batch` memories past a cursor (memory ids, across
workspaces, wrapping around at the end) and asks the index for each one's few nearest
neighbours of the same workspace and type — never all pairs. Idempotent: one `DuplicatePair`
row per pair whatever became of it, and the queue holds one pending item per target. Safe
to kill: each pair is written with its review item in one short transaction, and the cursor
moves after each chunk, so a killed run repeats at most one chunk, which changes nothing."""

from __future__ import annotations

from dataclasses import dataclass

from django.conf import settings
from django.db import IntegrityError, connection, transaction
from django.db.models import Q
from django.utils import timezone
from pgvector import Vector

from core.errors import Conflict
from core.selectors import workspaces_importing
from core.services import Actor, audit_record
from memory.models import DuplicatePair, DuplicateStatus, Memory, MemoryStatus, MemoryType, ScanCursor
from memory.services.memories import memory_merge
from review.services import review_open, review_withdraw

CURSOR = "dedup"
# Neighbours asked of the index per memory: a duplicate lies among the very nearest, and a
# memory with more than a few duplicates is rare enough to be found again on the next lap.
NEIGHBOURS = 5
# pgvector 0.8's iterative scan walks the graph until enough rows pass the workspace, type
# and status filter; this caps the walk (a workspace that is a small share of the table).
MAX_SCAN_TUPLES = 2_000
CHUNK = 100
# Two episodes that read alike are still two events (memory_store's dedup_near=False): the
# scan leaves them alone.
SKIPPED_TYPES = (MemoryType.EPISODIC,)

_NEIGHBOURS_SQL = f"""
    SELECT m.id, m.embedding <=> %s::vector AS distance FROM memory_memory m
    WHERE m.workspace_id = %s AND m.type = %s AND m.status = 'active' AND m.embedding IS NOT NULL AND m.id <> %s
    ORDER BY m.embedding <=> %s::vector LIMIT {NEIGHBOURS}"""


@dataclass(frozen=True)
class Found:
    workspace_id: int
    keep_id: int
    drop_id: int
    similarity: float


def _slice(after_id: int, limit: int) -> list[Memory]:
    # A workspace still being imported is left alone: its rows are not all there yet.
    return list(Memory.objects.filter(pk__gt=after_id, status=MemoryStatus.ACTIVE, embedding__isnull=False)
                .exclude(type__in=SKIPPED_TYPES).exclude(workspace_id__in=workspaces_importing())
                .order_by("pk").only("id", "workspace_id", "type", "embedding")[:limit])


def _neighbours(memory: Memory, min_similarity: float) -> list[Found]:
    vector = Vector(memory.embedding).to_text()
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute("SET LOCAL hnsw.iterative_scan = relaxed_order")
        cursor.execute(f"SET LOCAL hnsw.max_scan_tuples = {MAX_SCAN_TUPLES}")
        cursor.execute(_NEIGHBOURS_SQL, [vector, memory.workspace_id, memory.type, memory.pk, vector])
        rows = cursor.fetchall()
    return [Found(memory.workspace_id, min(memory.pk, pk), max(memory.pk, pk), round(1 - distance, 4))
            for pk, distance in rows if 1 - distance >= min_similarity]


@transaction.atomic
def _propose(found: Found) -> bool:
    """The pair's row and its review item, together; False when the pair was known (a
    pending pair whose item is missing gets it back: the queue skips one already there)."""
    pair = DuplicatePair.objects.filter(keep_id=found.keep_id, drop_id=found.drop_id).first()
    created = False
    if pair is None:
        try:
            with transaction.atomic():
                pair = DuplicatePair.objects.create(workspace_id=found.workspace_id, keep_id=found.keep_id,
                                                    drop_id=found.drop_id, similarity=found.similarity)
                created = True
        except IntegrityError:  # a concurrent run wrote it first
            pair = DuplicatePair.objects.get(keep_id=found.keep_id, drop_id=found.drop_id)
    if pair.status == DuplicateStatus.PENDING:
        review_open(kind="duplicate", target=pair, workspace_id=found.workspace_id)
    return created


def _cursor_move(position: int) -> None:
    ScanCursor.objects.update_or_create(name=CURSOR, defaults={"position": position, "updated_at": timezone.now()})


def memories_dedup_scan(*, batch: int | None = None, min_similarity: float | None = None,
                        max_proposals: int | None = None) -> dict:
    """One run: the next `batch` active memories past the cursor, each one's nearest
    neighbours above `min_similarity` proposed as duplicates, stopping once `max_proposals`
    new pairs were proposed (a duplicate-heavy workspace would otherwise write thousands in
    one run: bench/jobs_scale.py; the next run goes on from there). Call outside a
    transaction (each pair commits on its own). Returns the run's counts."""
    batch = batch or settings.MNEMO_DEDUP_SCAN_BATCH
    min_similarity = settings.MNEMO_DEDUP_SCAN_MIN_SIMILARITY if min_similarity is None else min_similarity
    max_proposals = settings.MNEMO_DEDUP_SCAN_MAX_PROPOSALS if max_proposals is None else max_proposals
    start = ScanCursor.objects.filter(name=CURSOR).values_list("position", flat=True).first() or 0
    memories = _slice(start, batch)
    counts = {"from_id": start, "scanned": 0, "pairs_found": 0, "proposed": 0, "capped": False}
    for offset in range(0, len(memories), CHUNK):
        chunk = memories[offset:offset + CHUNK]
        for memory in chunk:
            for found in _neighbours(memory, min_similarity):
                counts["pairs_found"] += 1
                counts["proposed"] += _propose(found)
            counts["scanned"] += 1
            if counts["proposed"] >= max_proposals:
                counts["capped"] = True
                _cursor_move(memory.pk)
                counts["wrapped"] = False
                return counts
        _cursor_move(chunk[-1].pk)
    # A short slice reached the end: the next run starts the next lap from the beginning.
    counts["wrapped"] = len(memories) < batch
    if counts["wrapped"]:
        _cursor_move(0)
    return counts


# --- what people decide -------------------------------------------------------------------------

def _decided(pair: DuplicatePair, status: str, actor: Actor) -> None:
    pair.status, pair.decided_by, pair.decided_at = status, actor.user, timezone.now()
    pair.save(update_fields=["status", "decided_by", "decided_at"])


def _lock(pair: DuplicatePair) -> DuplicatePair:
    pair = DuplicatePair.objects.select_for_update().get(pk=pair.pk)
    if pair.status != DuplicateStatus.PENDING:
        raise Conflict(f"This duplicate proposal is {pair.status} already.", details={"status": pair.status})
    return pair


@transaction.atomic
def duplicate_merge(*, pair: DuplicatePair, actor: Actor, note: str = "", into_id: int | None = None) -> Memory:
    """The pair are one memory: the newer is archived into the older (or into `into_id`,
    another memory the reviewer chose), through memory_merge (evidence moved, the kept one
    reinforced)."""
    pair = _lock(pair)
    into = Memory(pk=into_id or pair.keep_id, workspace_id=pair.workspace_id)
    drop = pair.keep if into_id and into_id == pair.drop_id else pair.drop
    kept = memory_merge(memory=drop, into=into, actor=actor, note=note, active_ok=True)
    _decided(pair, DuplicateStatus.MERGED, actor)
    _others_gone(drop.pk, actor)
    audit_record(workspace=kept.workspace, actor=actor, verb="memory.duplicate_merge", target=pair,
                 data={"kept": kept.pk, "archived": drop.pk, "similarity": pair.similarity})
    return kept


def _others_gone(memory_id: int, actor: Actor) -> None:
    """The archived memory's other pending pairs have nothing left to decide."""
    others = list(DuplicatePair.objects.filter(status=DuplicateStatus.PENDING)
                  .filter(Q(keep_id=memory_id) | Q(drop_id=memory_id)).values_list("pk", "workspace_id"))
    if not others:
        return
    DuplicatePair.objects.filter(pk__in=[pk for pk, _ in others]).update(status=DuplicateStatus.GONE)
    review_withdraw(kind="duplicate", target_ids=[pk for pk, _ in others], workspace_id=others[0][1],
                    reason=f"memory {memory_id} was merged", actor=actor)


@transaction.atomic
def duplicate_reject(*, pair: DuplicatePair, actor: Actor, note: str = "") -> DuplicatePair:
    """Not duplicates: remembered, so the scan never proposes the pair again."""
    pair = _lock(pair)
    _decided(pair, DuplicateStatus.NOT_DUPLICATES, actor)
    audit_record(workspace=pair.workspace, actor=actor, verb="memory.not_duplicates", target=pair,
                 data={"keep": pair.keep_id, "drop": pair.drop_id, "note": note})
    return pair
