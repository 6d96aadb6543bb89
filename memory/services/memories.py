"""Storing memories: the privacy filter, dedup and reinforcement, contradictions, and the
workspace trust policy; then the lifecycle a person drives (approve, reject, edit,
invalidate). Every write is atomic and audited.

One entry point stores a memory whoever found it (`memory_store`): a rule or the LLM in
background processing, or an agent's "remember this". What it does, in order:
1. the text passes the privacy filter (a secret refuses it; <private> is stripped);
2. the same normalised text of the same type reinforces the memory that has it;
3. the same keyed claim (subject + attribute + value + polarity) reinforces too, and a
   contradicting one (another value of a single-valued attribute, or opposite polarity)
   becomes a candidate that proposes to supersede the current memory;
4. when an embedding is at hand (background work), a near duplicate above the workspace's
   threshold reinforces; requests never embed (DESIGN.md), so a memory remembered through
   the API is compared once its embedding is made (`memories_embed`);
5. a candidate restating an active episode of its conversation reinforces the episode
   (`_restated_episode`), and an active episode folds the candidates it restates;
6. otherwise a new memory, active when the trust policy allows, a candidate otherwise."""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from datetime import date, datetime

from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import connection, transaction
from django.db.models import F
from django.utils import timezone
from pgvector import Vector

from core.concepts import concepts as text_concepts
from core import privacy
from core.concurrency import lock_workspaces, retry_on_conflict
from core.errors import ApiError, Conflict, NotFound
from core.models import Workspace
from core.safe_text import refuse_secrets
from core.selectors import workspaces_importing
from core.services import SYSTEM, Actor, audit_record, audit_record_many
from memory import rules
from memory.rules import EPISODE_RULE
from memory.models import (
    OPEN_STATUSES,
    ArchivedReason,
    Certainty,
    Memory,
    MemoryEvidence,
    MemoryStatus,
    MemoryType,
    TrustPolicy,
)
from webhooks.services import webhooks_emit_many

logger = logging.getLogger("mnemo.memory")

MAX_TEXT_CHARS = 4000


@dataclass(frozen=True)
class Evidence:
    interaction_id: int
    quote: str = ""
    start: int | None = None
    end: int | None = None


@dataclass
class Draft:
    """What a rule, the LLM or an agent proposes to remember."""

    type: str
    text: str
    certainty: str
    confidence: float = 1.0
    importance: float = 0.5
    subject_id: int | None = None
    attribute: str = ""
    value: str = ""
    polarity: int = 1
    source: str = "api"
    rule: str = ""
    model: str = ""
    prompt_version: str = ""
    occurred_at: datetime | None = None
    event_first: date | None = None
    event_last: date | None = None
    conversation_id: int | None = None
    metadata: dict = field(default_factory=dict)
    evidence: list[Evidence] = field(default_factory=list)


@dataclass(frozen=True)
class Stored:
    memory: Memory
    outcome: str  # "created" | "reinforced" | "conflict"


# --- the trust policy -----------------------------------------------------------------------

@dataclass(frozen=True)
class Policy:
    auto_certainties: tuple[str, ...]
    auto_types: tuple[str, ...]
    min_confidence: float

    def promotes(self, draft: Draft) -> bool:
        return (draft.certainty in self.auto_certainties and draft.type in self.auto_types
                and draft.confidence >= self.min_confidence)


# DESIGN.md: verbatim and rule-extracted with confidence >= 0.9 become active; inferred wait.
DEFAULT_POLICY = Policy(auto_certainties=(Certainty.VERBATIM, Certainty.EXTRACTED),
                        auto_types=tuple(MemoryType.values), min_confidence=0.9)


def trust_policy_for(workspace_id: int) -> Policy:
    row = TrustPolicy.objects.filter(workspace_id=workspace_id).first()
    if row is None:
        return DEFAULT_POLICY
    return Policy(tuple(row.auto_certainties), tuple(row.auto_types), row.min_confidence)


@transaction.atomic
def trust_policy_set(*, workspace: Workspace, actor: Actor, auto_certainties: list[str], auto_types: list[str],
                     min_confidence: float) -> Policy:
    unknown = sorted(set(auto_certainties) - set(Certainty.values))
    if unknown:
        raise ValidationError({"auto_certainties": f"Unknown certainty {unknown[0]!r}; known: {', '.join(Certainty.values)}."})
    unknown = sorted(set(auto_types) - set(MemoryType.values))
    if unknown:
        raise ValidationError({"auto_types": f"Unknown type {unknown[0]!r}; known: {', '.join(MemoryType.values)}."})
    if not 0 <= min_confidence <= 1:
        raise ValidationError({"min_confidence": "Confidence lies between 0 and 1."})
    before = trust_policy_for(workspace.pk)
    TrustPolicy.objects.update_or_create(workspace=workspace, defaults={
        "auto_certainties": sorted(set(auto_certainties)), "auto_types": sorted(set(auto_types)),
        "min_confidence": min_confidence, "updated_by": actor.user, "updated_at": timezone.now(),
    })
    after = trust_policy_for(workspace.pk)
    audit_record(workspace=workspace, actor=actor, verb="trust_policy.set", data={
        "before": _policy_dict(before), "after": _policy_dict(after)})
    return after


def _policy_dict(policy: Policy) -> dict:
    return {"auto_certainties": list(policy.auto_certainties), "auto_types": list(policy.auto_types),
            "min_confidence": policy.min_confidence}


# --- validation -----------------------------------------------------------------------------

def secret_error(exc: privacy.SecretFound, where: str) -> ApiError:
    return ApiError(f"{where} contains {exc.match.description} (rule {exc.match.rule}); nothing was stored.",
                    status=422, code="secret_detected", details={"field": where, "rule": exc.match.rule})


def clean_text(text: str, where: str = "text") -> str:
    """The privacy filter on anything remembered: a secret refuses it (422), <private>
    blocks are removed; what is left must not be empty."""
    try:
        filtered = privacy.filter_for_storage(text or "")
    except privacy.SecretFound as exc:
        raise secret_error(exc, where) from None
    cleaned = filtered.text.strip()
    if not cleaned:
        raise ValidationError({where: "The text is empty (once <private> blocks are removed)."})
    if len(cleaned) > MAX_TEXT_CHARS:
        raise ValidationError({where: f"A memory holds at most {MAX_TEXT_CHARS} characters."})
    return cleaned


def _validate(draft: Draft) -> None:
    if draft.type not in MemoryType.values:
        raise ValidationError({"type": f"Unknown type {draft.type!r}; known: {', '.join(MemoryType.values)}."})
    if draft.certainty not in Certainty.values:
        raise ValidationError({"certainty": f"Unknown certainty {draft.certainty!r}; known: {', '.join(Certainty.values)}."})
    for name in ("confidence", "importance"):
        if not 0 <= getattr(draft, name) <= 1:
            raise ValidationError({name: f"{name.capitalize()} lies between 0 and 1."})
    if draft.polarity not in (1, -1):
        raise ValidationError({"polarity": "Polarity is 1 or -1."})
    refuse_secrets(attribute=draft.attribute, value=draft.value,
                   quotes=[evidence.quote for evidence in draft.evidence if evidence.quote])
    draft.text = clean_text(draft.text)


def _lock_workspace(workspace_id: int) -> None:
    # Dedup is read-then-write: one writer of memories per workspace at a time, so two
    # workers seeing the same fact cannot both insert it (rank 3 of core.concurrency).
    lock_workspaces("memory", workspace_ids=[workspace_id])


# --- storing --------------------------------------------------------------------------------

def _add_evidence(memory: Memory, evidence: list[Evidence]) -> list[int]:
    """Evidence not yet recorded for the memory; returns the interactions that were new."""
    known = set(MemoryEvidence.objects.filter(memory=memory, interaction_id__in=[e.interaction_id for e in evidence])
                .values_list("interaction_id", flat=True))
    fresh = [e for e in evidence if e.interaction_id not in known]
    MemoryEvidence.objects.bulk_create([
        MemoryEvidence(memory=memory, interaction_id=e.interaction_id, quote=e.quote[:2000], start=e.start, end=e.end)
        for e in fresh
    ], ignore_conflicts=True)
    return [e.interaction_id for e in fresh]


def memory_reinforce(*, memory: Memory, evidence: list[Evidence], actor: Actor = SYSTEM, reason: str,
                     restated: bool = False) -> Memory:
    """A confirmation: count, last confirmed, confidence up, the new evidence kept. The
    same interaction confirming twice (a retried task) counts once. `restated`: another
    extractor read the same turns the memory already cites (a restatement, below): that
    is a confirmation of its own, counted although its interactions are known."""
    fresh = _add_evidence(memory, evidence)
    if evidence and not fresh and not restated:
        return memory
    now = timezone.now()
    memory.reinforcement_count += 1
    memory.last_confirmed_at = now
    memory.confidence = rules.reinforced_confidence(memory.confidence)
    memory.strength = 1.0
    memory.updated_at = now
    memory.save(update_fields=["reinforcement_count", "last_confirmed_at", "confidence", "strength", "updated_at"])
    audit_record(workspace=memory.workspace, actor=actor, verb="memory.reinforce", target=memory,
                 data={"reason": reason, "count": memory.reinforcement_count, "interactions": fresh})
    from memory.services.graduation import graduation_check_reinforced

    graduation_check_reinforced(memory=memory)
    return memory


def _open(workspace_id: int, type_: str):
    return Memory.objects.filter(workspace_id=workspace_id, type=type_, status__in=OPEN_STATUSES)


def _keyed_match(draft: Draft, workspace_id: int) -> tuple[Memory | None, Memory | None]:
    """(the memory this claim repeats, the memory it contradicts)."""
    if not (draft.attribute and draft.subject_id):
        return None, None
    same = None
    for other in (Memory.objects.filter(workspace_id=workspace_id, subject_id=draft.subject_id, attribute=draft.attribute,
                                        status__in=OPEN_STATUSES).order_by("-status", "-id")):
        if rules.same_claim(draft.attribute, draft.value, draft.polarity, other.value, other.polarity):
            same = same or other
        elif other.status == MemoryStatus.ACTIVE and rules.contradicts(
                draft.attribute, draft.value, draft.polarity, other.value, other.polarity):
            return same, other
    return same, None


# Issue 17: a near-duplicate check costs the same in a workspace of a hundred memories and
# of a hundred thousand. Up to NEAR_EXACT_MAX_ROWS open memories of the type are compared one
# by one (exact, ~1 µs a row; the count stops one row past the limit); above that only the
# NEAR_CANDIDATES nearest the HNSW index offers are compared. A near duplicate lies within
# cosine distance 0.1 (the default threshold), so if one exists it is among the index's
# first few neighbours; the index is approximate, and a duplicate it misses is stored as
# its own memory, as one remembered without an embedding would be.
NEAR_EXACT_MAX_ROWS = 2_000
NEAR_CANDIDATES = 10
# pgvector 0.8's iterative scan keeps walking the graph until enough rows pass the workspace,
# type and status filter, and stops after this many tuples whatever it found (context/retrieval.py
# walks 10,000 for a pack; a dedup check needs only the close neighbourhood).
NEAR_MAX_SCAN_TUPLES = 5_000
_NEAR_ROWS = ("FROM memory_memory m WHERE m.workspace_id = %s AND m.type = %s AND m.status = ANY(%s) "
              "AND m.embedding IS NOT NULL AND m.id <> %s")


def near_duplicate(*, workspace_id: int, type_: str, embedding, exclude_id: int | None = None,
                   text: str | None = None) -> Memory | None:
    """The nearest open memory of the type within the workspace's dedup threshold (ties:
    the oldest), found among a bounded number of candidates (above). Given the new memory's
    `text`, a neighbour stating other numbers or the opposite polarity is not a duplicate
    however close (rules.values_differ): the next one within the threshold may be."""
    most = 1 - settings.MNEMO_MEMORY_DEDUP_THRESHOLD
    params = [workspace_id, type_, list(OPEN_STATUSES), exclude_id or 0]
    vector = Vector(embedding).to_text()
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute(f"SELECT count(*) FROM (SELECT 1 {_NEAR_ROWS} LIMIT {NEAR_EXACT_MAX_ROWS + 1}) few", params)
        if cursor.fetchone()[0] <= NEAR_EXACT_MAX_ROWS:
            # Materialised, so the planner compares these rows and does not walk the graph.
            cursor.execute(f"""
                WITH candidate AS MATERIALIZED (SELECT m.id, m.embedding <=> %s::vector AS distance {_NEAR_ROWS})
                SELECT id, distance FROM candidate WHERE distance <= %s ORDER BY distance, id
                LIMIT {NEAR_CANDIDATES}""", [vector, *params, most])
        else:
            cursor.execute("SET LOCAL hnsw.iterative_scan = relaxed_order")
            cursor.execute(f"SET LOCAL hnsw.max_scan_tuples = {NEAR_MAX_SCAN_TUPLES}")
            cursor.execute(f"SELECT m.id, m.embedding <=> %s::vector AS distance {_NEAR_ROWS} "
                           f"ORDER BY m.embedding <=> %s::vector LIMIT {NEAR_CANDIDATES}", [vector, *params, vector])
        # relaxed_order may return neighbours slightly out of order: the exact distances decide.
        near = sorted((distance, pk) for pk, distance in cursor.fetchall() if distance <= most)
    if not near:
        return None
    found = Memory.objects.in_bulk([pk for _, pk in near])  # one read for the few candidates
    for _, pk in near:
        if pk in found and (text is None or not rules.values_differ(text, found[pk].text)):
            return found[pk]
    return None


# Issue 17: a candidate that restates what an active memory already says reinforces that
# memory instead of waiting in the review queue. The case that filled the queue: an episode
# (EPISODE_RULE, active by the trust policy) cites every turn of its segment, and the rules'
# episodic candidates ("episodic.event" and the like, below the auto-approve confidence)
# re-tell single turns of the same segment — in a workspace of two LoCoMo conversations 33 of
# 70 pending items. A reviewer would judge the same turn twice; approving adds nothing packs
# and recall do not already serve with the same provenance, and rejecting it loses nothing.
# Restated = same workspace and conversation, and every interaction the candidate cites is
# cited by one active episode. Either may be stored first (the rules run on each turn, an
# episode once its segment is complete), so both directions are handled: the candidate that
# comes second reinforces the episode; the episode that comes second folds the candidates
# already waiting (archived as its duplicates, their review items withdrawn).


def _restated_episode(draft: Draft, workspace_id: int) -> Memory | None:
    cited = {e.interaction_id for e in draft.evidence}
    if draft.type != MemoryType.EPISODIC or draft.rule == EPISODE_RULE or not cited or not draft.conversation_id:
        return None
    covering: dict[int, set[int]] = {}
    for memory_id, interaction_id in MemoryEvidence.objects.filter(
            interaction_id__in=cited, memory__workspace_id=workspace_id, memory__rule=EPISODE_RULE,
            memory__status=MemoryStatus.ACTIVE, memory__conversation_id=draft.conversation_id,
    ).values_list("memory_id", "interaction_id"):
        covering.setdefault(memory_id, set()).add(interaction_id)
    episode_id = min((pk for pk, ids in covering.items() if ids >= cited), default=None)
    return Memory.objects.filter(pk=episode_id).first() if episode_id else None


def _fold_restatements(episode: Memory) -> None:
    """Candidates already waiting that the new (active) episode restates: folded into it."""
    cited = set(MemoryEvidence.objects.filter(memory=episode).values_list("interaction_id", flat=True))
    waiting = set(Memory.objects.filter(
        workspace_id=episode.workspace_id, conversation_id=episode.conversation_id, type=MemoryType.EPISODIC,
        status=MemoryStatus.CANDIDATE, conflicts_with__isnull=True, evidence__interaction_id__in=cited,
    ).exclude(rule=EPISODE_RULE).values_list("id", flat=True))
    for candidate in Memory.objects.select_for_update(no_key=True).filter(pk__in=waiting).order_by("id"):
        evidence = [Evidence(e.interaction_id, e.quote, e.start, e.end) for e in candidate.evidence.all()]
        if {e.interaction_id for e in evidence} <= cited:
            memory_reinforce(memory=episode, evidence=evidence, reason="restated", restated=True)
            _archive_duplicate(candidate, episode, "restated by")


@retry_on_conflict
@transaction.atomic
def memory_store(*, workspace_id: int, draft: Draft, actor: Actor = SYSTEM, embedding=None, extra=None,
                 dedup_near: bool = True) -> Stored:
    """Store what was learned, or reinforce what it repeats (module docstring). `extra`
    is called with a newly created memory to add its procedure or censor row. Episodes
    pass `dedup_near=False`: two segments that read alike are still two events."""
    _validate(draft)
    _lock_workspace(workspace_id)
    draft_hash = rules.text_hash(draft.text)
    exact = _open(workspace_id, draft.type).filter(text_hash=draft_hash).order_by("id").first()
    if exact is not None:
        return Stored(memory_reinforce(memory=exact, evidence=draft.evidence, actor=actor, reason="exact"), "reinforced")
    same, contradicted = _keyed_match(draft, workspace_id)
    if same is not None:
        return Stored(memory_reinforce(memory=same, evidence=draft.evidence, actor=actor, reason="same_claim"), "reinforced")
    if embedding is not None and contradicted is None and dedup_near:
        near = near_duplicate(workspace_id=workspace_id, type_=draft.type, embedding=embedding, text=draft.text)
        if near is not None:
            return Stored(memory_reinforce(memory=near, evidence=draft.evidence, actor=actor, reason="near_duplicate"),
                          "reinforced")
    policy = trust_policy_for(workspace_id)
    auto = contradicted is None and policy.promotes(draft)
    restated = None if auto or contradicted is not None else _restated_episode(draft, workspace_id)
    if restated is not None:
        return Stored(memory_reinforce(memory=restated, evidence=draft.evidence, actor=actor, reason="restated",
                                       restated=True), "reinforced")
    now = timezone.now()
    memory = Memory.objects.create(
        workspace_id=workspace_id, type=draft.type, certainty=draft.certainty,
        status=MemoryStatus.ACTIVE if auto else MemoryStatus.CANDIDATE,
        text=draft.text, text_hash=draft_hash, confidence=draft.confidence, importance=draft.importance,
        subject_id=draft.subject_id, attribute=draft.attribute[:120], value=draft.value[:300], polarity=draft.polarity,
        source=draft.source[:40], rule=draft.rule[:80], model=draft.model[:120], prompt_version=draft.prompt_version[:40],
        conflicts_with=contradicted, conversation_id=draft.conversation_id, occurred_at=draft.occurred_at,
        event_first=draft.event_first, event_last=draft.event_last or draft.event_first, embedding=embedding,
        concepts=sorted(text_concepts(draft.text)), metadata=draft.metadata, created_at=now, updated_at=now,
        decided_at=now if auto else None,
    )
    _add_evidence(memory, draft.evidence)
    if extra is not None:
        extra(memory)
    workspace = Workspace.objects.get(pk=workspace_id)
    audit_record(workspace=workspace, actor=actor, verb="memory.create", target=memory, data={
        "type": memory.type, "certainty": memory.certainty, "source": memory.source, "rule": memory.rule,
        "status": memory.status, "conflicts_with": contradicted.pk if contradicted else None,
        "interactions": [e.interaction_id for e in draft.evidence],
    })
    if auto:
        audit_record(workspace=workspace, actor=SYSTEM, verb="memory.auto_approve", target=memory, data={
            "policy": _policy_dict(policy), "rule": memory.rule, "source": memory.source,
            "prompt_version": memory.prompt_version, "kind": "memory"})
        _announce_active([memory], reason="auto_approved")
    else:
        from review.services import review_open

        review_open(kind="conflict" if contradicted else "memory", target=memory, workspace_id=workspace_id)
    if memory.rule == EPISODE_RULE and auto:
        _fold_restatements(memory)
    if embedding is None:
        # robust: a broker outage is logged, not a 500; memory.embed_pending catches it.
        transaction.on_commit(lambda: _enqueue_embedding(memory.pk), robust=True)
    from memory.services.graduation import graduation_check_template

    graduation_check_template(memory=memory)
    return Stored(memory, "conflict" if contradicted else "created")


def _enqueue_embedding(memory_id: int) -> None:
    from memory.tasks import embed_memories

    embed_memories.delay([memory_id])


@retry_on_conflict
def memories_embed(*, memory_ids: list[int] | None = None, batch_size: int = 64) -> int:
    """Embed memories that have no embedding yet (the given ones first), then fold a
    memory remembered through the API into a near duplicate found now: the duplicate is
    archived pointing at the older memory, which is reinforced with its evidence."""
    from core.providers import get_embedder

    with transaction.atomic():
        # A workspace being imported is left alone until its last batch (core.archive).
        rows = (Memory.objects.select_for_update(no_key=True, skip_locked=True).filter(embedding__isnull=True)
                .exclude(workspace_id__in=workspaces_importing()))
        picked = list(rows.filter(pk__in=memory_ids)[:batch_size]) if memory_ids else []
        if len(picked) < batch_size:
            picked += list(rows.exclude(pk__in=[m.pk for m in picked]).order_by("id")[:batch_size - len(picked)])
        if not picked:
            return 0
        vectors = get_embedder().embed([m.text for m in picked])
        for memory, vector in zip(picked, vectors):
            memory.embedding = vector
            Memory.objects.filter(pk=memory.pk).update(embedding=vector)
        censor_ids = [m.pk for m in picked if m.type == MemoryType.CENSOR]
        if censor_ids:
            from memory.services.procedures import censors_embed_triggers

            censors_embed_triggers(memory_ids=censor_ids)
    # Folding takes the workspace's memory lock, which ranks before memory rows
    # (core.concurrency): one transaction per memory, lock first, then the row.
    for memory in picked:
        _fold_near_duplicate(memory_id=memory.pk)
    return len(picked)


@retry_on_conflict
@transaction.atomic
def _fold_near_duplicate(*, memory_id: int) -> None:
    memory = Memory.objects.filter(pk=memory_id).only("workspace_id").first()
    if memory is None:
        return
    _lock_workspace(memory.workspace_id)
    memory = Memory.objects.select_for_update(no_key=True).filter(pk=memory_id).first()
    if memory is None or memory.status not in OPEN_STATUSES or memory.conflicts_with_id or memory.rule == EPISODE_RULE:
        return
    older = near_duplicate(workspace_id=memory.workspace_id, type_=memory.type, embedding=memory.embedding,
                           exclude_id=memory.pk, text=memory.text)
    if older is None or older.pk > memory.pk:
        return
    evidence = [Evidence(e.interaction_id, e.quote, e.start, e.end) for e in memory.evidence.all()]
    memory_reinforce(memory=older, evidence=evidence, reason="near_duplicate")
    _archive_duplicate(memory, older, "folded into the near duplicate")


def _archive_duplicate(memory: Memory, older: Memory, why: str) -> None:
    before = memory.status
    memory.status, memory.archived_reason = MemoryStatus.ARCHIVED, ArchivedReason.DUPLICATE
    memory.duplicate_of = older
    memory.updated_at = timezone.now()
    memory.save(update_fields=["status", "archived_reason", "duplicate_of", "updated_at"])
    audit_record(workspace=memory.workspace, actor=SYSTEM, verb="memory.archive_duplicate", target=memory,
                 data={"duplicate_of": older.pk})
    if before == MemoryStatus.CANDIDATE:
        _withdraw_review(memory, f"{why} memory {older.pk}")


# --- the lifecycle people drive -------------------------------------------------------------

def _locked(memory: Memory) -> Memory:
    # The vector and the tsvector are the bulk of a row and a decision needs neither (an
    # edit that keeps the text loads the vector when it copies it).
    return (Memory.objects.select_for_update(no_key=True, of=("self",)).select_related("workspace")
            .defer("embedding", "search").get(pk=memory.pk))


def _announce_active(memories: list[Memory], *, reason: str) -> None:
    """memory.activated, sent once the caller's transaction commits. `reason`: approved,
    auto_approved (the trust policy), kept_both, or edited (a new version of an active one)."""
    if memories:
        webhooks_emit_many(workspace_id=memories[0].workspace_id, event="memory.activated", data=[
            {"memory_id": m.pk, "type": m.type, "text": m.text, "certainty": m.certainty, "confidence": m.confidence,
             "subject_id": m.subject_id, "supersedes": m.supersedes_id, "reason": reason} for m in memories])


def _decided_conflict(memory: Memory) -> Conflict:
    return Conflict(f"Memory {memory.pk} is {memory.status}; only candidate or active memories can change.",
                    details={"status": memory.status, "decided_by": memory.decided_by.get_username() if memory.decided_by else None,
                             "decided_at": memory.decided_at.isoformat() if memory.decided_at else None})


@transaction.atomic
def memory_approve(*, memory: Memory, actor: Actor, note: str = "") -> Memory:
    """A candidate becomes active; when it contradicted an active memory it supersedes it."""
    refuse_secrets(note=note)
    memory = _locked(memory)
    if memory.status != MemoryStatus.CANDIDATE:
        raise _decided_conflict(memory)
    now = timezone.now()
    superseded = None
    if memory.conflicts_with_id:
        old = Memory.objects.select_for_update(no_key=True).get(pk=memory.conflicts_with_id)
        if old.status == MemoryStatus.ACTIVE:
            old.status, old.updated_at = MemoryStatus.SUPERSEDED, now
            old.save(update_fields=["status", "updated_at"])
            memory.supersedes = old
            superseded = old.pk
            audit_record(workspace=old.workspace, actor=actor, verb="memory.superseded", target=old,
                         data={"by": memory.pk})
    memory.status, memory.decided_by, memory.decided_at, memory.updated_at = MemoryStatus.ACTIVE, actor.user, now, now
    memory.save(update_fields=["status", "supersedes", "decided_by", "decided_at", "updated_at"])
    audit_record(workspace=memory.workspace, actor=actor, verb="memory.approve", target=memory,
                 data={"note": note, "supersedes": superseded, "rule": memory.rule, "source": memory.source,
                       "prompt_version": memory.prompt_version})
    _announce_active([memory], reason="approved")
    return memory


@transaction.atomic
def memories_decide(*, workspace: Workspace, memory_ids: list[int], actor: Actor, approve: bool,
                    note: str = "") -> list[int]:
    """Approve (or reject) many plain candidates at once — the set-based twin of
    memory_approve / memory_reject for bulk review. Contradictions are not decided here
    (approving one supersedes another memory: memory_approve does that one by one).
    Returns the ids decided; the others were not plain candidates any more."""
    refuse_secrets(note=note)
    rows = list(Memory.objects.select_for_update(no_key=True).filter(
        workspace=workspace, pk__in=memory_ids, status=MemoryStatus.CANDIDATE, conflicts_with__isnull=True)
        .only("id", "rule", "source", "prompt_version").order_by("id"))
    if not rows:
        return []
    now = timezone.now()
    Memory.objects.filter(pk__in=[m.pk for m in rows]).update(
        status=MemoryStatus.ACTIVE if approve else MemoryStatus.INVALID, decided_by=actor.user, decided_at=now,
        updated_at=now)
    audit_record_many(workspace=workspace, actor=actor, verb="memory.approve" if approve else "memory.reject", rows=[
        (m, {"note": note, "rule": m.rule, "source": m.source, "prompt_version": m.prompt_version,
             **({"supersedes": None} if approve else {})}) for m in rows])
    if approve:
        _announce_active(list(Memory.objects.filter(pk__in=[m.pk for m in rows]).defer("embedding", "search")
                              .order_by("id")), reason="approved")
    return [m.pk for m in rows]


@transaction.atomic
def memory_reject(*, memory: Memory, actor: Actor, note: str = "") -> Memory:
    refuse_secrets(note=note)
    memory = _locked(memory)
    if memory.status != MemoryStatus.CANDIDATE:
        raise _decided_conflict(memory)
    now = timezone.now()
    memory.status, memory.decided_by, memory.decided_at, memory.updated_at = MemoryStatus.INVALID, actor.user, now, now
    memory.save(update_fields=["status", "decided_by", "decided_at", "updated_at"])
    audit_record(workspace=memory.workspace, actor=actor, verb="memory.reject", target=memory,
                 data={"note": note, "rule": memory.rule, "source": memory.source, "prompt_version": memory.prompt_version})
    return memory


@transaction.atomic
def memory_invalidate(*, memory: Memory, actor: Actor, reason: str = "") -> Memory:
    """A memory proven wrong: kept, marked invalid, served no more."""
    refuse_secrets(reason=reason)
    memory = _locked(memory)
    if memory.status not in OPEN_STATUSES:
        raise _decided_conflict(memory)
    now = timezone.now()
    before = memory.status
    memory.status, memory.decided_by, memory.decided_at, memory.updated_at = MemoryStatus.INVALID, actor.user, now, now
    memory.save(update_fields=["status", "decided_by", "decided_at", "updated_at"])
    audit_record(workspace=memory.workspace, actor=actor, verb="memory.invalidate", target=memory,
                 data={"reason": reason, "before": before})
    if before == MemoryStatus.CANDIDATE:
        _withdraw_review(memory, "invalidated outside the queue", actor)
    return memory


def _withdraw_review(memory: Memory, reason: str, actor: Actor = SYSTEM) -> None:
    from review.services import review_withdraw

    for kind in ("memory", "conflict"):
        review_withdraw(kind=kind, target_ids=[memory.pk], workspace_id=memory.workspace_id, reason=reason, actor=actor)


@transaction.atomic
def memory_revise(*, memory: Memory, actor: Actor, note: str = "", **changes) -> Memory:
    """An edit made outside the review queue (the memory API or page): when it was a
    candidate, the new version takes its place in the queue."""
    refuse_secrets(note=note)
    was_candidate = memory.status == MemoryStatus.CANDIDATE
    new = memory_edit(memory=memory, actor=actor, note=note, **changes)
    if was_candidate:
        from review.services import review_retarget

        kind = "conflict" if new.conflicts_with_id else "memory"
        review_retarget(kind=kind, old_id=memory.pk, target=new, workspace_id=memory.workspace_id,
                        reason=f"edited into memory {new.pk}", actor=actor)
    return new


@transaction.atomic
def memory_merge(*, memory: Memory, into: Memory, actor: Actor, note: str = "", active_ok: bool = False) -> Memory:
    """A candidate says what an existing memory says: the existing one is reinforced with
    the candidate's evidence, the candidate is archived pointing at it. `active_ok`: an
    active memory may be merged too (a duplicate pair the dedup scan found)."""
    refuse_secrets(note=note)
    memory = _locked(memory)
    if memory.status != MemoryStatus.CANDIDATE and not (active_ok and memory.status == MemoryStatus.ACTIVE):
        raise _decided_conflict(memory)
    into = Memory.objects.select_for_update(no_key=True).filter(workspace_id=memory.workspace_id, pk=into.pk).first()
    if into is None:
        raise NotFound("No such memory to merge into in this workspace.")
    if into.pk == memory.pk:
        raise ValidationError({"merge_into": "A memory cannot be merged into itself."})
    if into.status not in OPEN_STATUSES:
        raise ValidationError({"merge_into": f"Memory {into.pk} is {into.status}; merge into a candidate or active one."})
    evidence = [Evidence(e.interaction_id, e.quote, e.start, e.end) for e in memory.evidence.all()]
    memory_reinforce(memory=into, evidence=evidence, actor=actor, reason="merged")
    now = timezone.now()
    memory.status, memory.duplicate_of, memory.archived_reason = MemoryStatus.ARCHIVED, into, ArchivedReason.DUPLICATE
    memory.decided_by, memory.decided_at, memory.updated_at = actor.user, now, now
    memory.save(update_fields=["status", "archived_reason", "duplicate_of", "decided_by", "decided_at", "updated_at"])
    audit_record(workspace=memory.workspace, actor=actor, verb="memory.merge", target=memory,
                 data={"into": into.pk, "note": note})
    return into


@transaction.atomic
def memory_keep_both(*, memory: Memory, actor: Actor, note: str = "", boundary=None) -> Memory:
    """A contradiction where both were true at different times (seed 004's validity
    periods): the old memory held until `boundary`, the candidate from then on. Both stay
    active; nothing is superseded. `boundary` defaults to when the new one was said."""
    refuse_secrets(note=note)
    memory = _locked(memory)
    if memory.status != MemoryStatus.CANDIDATE or not memory.conflicts_with_id:
        raise ValidationError({"action": "Only a pending contradiction can keep both sides."})
    old = Memory.objects.select_for_update(no_key=True).get(pk=memory.conflicts_with_id)
    now = timezone.now()
    boundary = boundary or memory.occurred_at or memory.created_at
    if old.valid_from and boundary < old.valid_from:
        raise ValidationError({"boundary": "The change cannot precede the old memory's own start."})
    old.valid_to, old.updated_at = boundary, now
    old.save(update_fields=["valid_to", "updated_at"])
    memory.valid_from = boundary
    memory.status, memory.decided_by, memory.decided_at, memory.updated_at = MemoryStatus.ACTIVE, actor.user, now, now
    memory.save(update_fields=["valid_from", "status", "decided_by", "decided_at", "updated_at"])
    audit_record(workspace=memory.workspace, actor=actor, verb="memory.keep_both", target=memory,
                 data={"old": old.pk, "boundary": boundary.isoformat(), "note": note})
    _announce_active([memory], reason="kept_both")
    return memory


EDITABLE = ("text", "type", "confidence", "importance", "subject_id")


@transaction.atomic
def memory_edit(*, memory: Memory, actor: Actor, note: str = "", **changes) -> Memory:
    """An edit is a new version that supersedes the old one (which stays, superseded),
    carrying its evidence and counters."""
    refuse_secrets(note=note)
    unknown = set(changes) - set(EDITABLE)
    if unknown:
        raise ValidationError({sorted(unknown)[0]: "This field cannot be edited."})
    memory = _locked(memory)
    if memory.status not in OPEN_STATUSES:
        raise _decided_conflict(memory)
    changes = {k: v for k, v in changes.items() if v is not None and v != getattr(memory, k)}
    if not changes:
        raise ValidationError({"__all__": "Nothing to change: give at least one field with a new value."})
    draft = Draft(type=changes.get("type", memory.type), text=changes.get("text", memory.text),
                  certainty=memory.certainty, confidence=changes.get("confidence", memory.confidence),
                  importance=changes.get("importance", memory.importance))
    _validate(draft)
    now = timezone.now()
    new = Memory.objects.create(
        workspace_id=memory.workspace_id, type=draft.type, certainty=memory.certainty, status=memory.status,
        text=draft.text, text_hash=rules.text_hash(draft.text), confidence=draft.confidence,
        importance=draft.importance, subject_id=changes.get("subject_id", memory.subject_id),
        attribute=memory.attribute if "text" not in changes else "", value=memory.value if "text" not in changes else "",
        polarity=memory.polarity, source=memory.source, rule=memory.rule, model=memory.model,
        prompt_version=memory.prompt_version, supersedes=memory, conversation_id=memory.conversation_id,
        # An edited candidate still proposes what the original proposed.
        conflicts_with_id=memory.conflicts_with_id if memory.status == MemoryStatus.CANDIDATE else None,
        valid_from=memory.valid_from, valid_to=memory.valid_to,
        occurred_at=memory.occurred_at, event_first=memory.event_first, event_last=memory.event_last,
        reinforcement_count=memory.reinforcement_count, last_confirmed_at=memory.last_confirmed_at,
        access_count=memory.access_count, last_accessed_at=memory.last_accessed_at, metadata=memory.metadata,
        embedding=memory.embedding if "text" not in changes else None,
        concepts=memory.concepts if "text" not in changes else sorted(text_concepts(draft.text)),
        decided_by=actor.user, decided_at=now, created_at=now, updated_at=now,
    )
    MemoryEvidence.objects.bulk_create([
        MemoryEvidence(memory=new, interaction_id=e.interaction_id, quote=e.quote, start=e.start, end=e.end,
                       created_at=e.created_at) for e in memory.evidence.all()
    ])
    _copy_details(memory, new)
    memory.status, memory.updated_at = MemoryStatus.SUPERSEDED, now
    memory.save(update_fields=["status", "updated_at"])
    changed = sorted(changes)
    audit_record(workspace=memory.workspace, actor=actor, verb="memory.edit", target=new,
                 data={"supersedes": memory.pk, "changed": changed, "note": note})
    audit_record(workspace=memory.workspace, actor=actor, verb="memory.superseded", target=memory,
                 data={"by": new.pk, "changed": changed})
    if new.status == MemoryStatus.ACTIVE:
        _announce_active([new], reason="edited")
    if new.embedding is None:
        transaction.on_commit(lambda: _enqueue_embedding(new.pk), robust=True)
    return new


def _copy_details(old: Memory, new: Memory) -> None:
    from memory.models import Censor, Procedure

    procedure = Procedure.objects.filter(memory=old).first()
    if procedure is not None:
        Procedure.objects.create(memory=new, name=procedure.name, domain=procedure.domain, goals=procedure.goals,
                                 steps=procedure.steps, tools=procedure.tools, notes=procedure.notes,
                                 activation_count=procedure.activation_count, success_count=procedure.success_count,
                                 failure_count=procedure.failure_count, last_activated_at=procedure.last_activated_at)
    censor = Censor.objects.filter(memory=old).first()
    if censor is not None:
        Censor.objects.create(memory=new, trigger=censor.trigger, reason=censor.reason, action=censor.action,
                              activation_count=censor.activation_count,
                              false_positive_count=censor.false_positive_count,
                              escalation_threshold=censor.escalation_threshold, escalated_at=censor.escalated_at,
                              last_activated_at=censor.last_activated_at, embedding=censor.embedding)


def memories_touch(*, memory_ids: list[int]) -> int:
    """Served memories count as accessed (seed 004: retrieval strengthens). Called from
    background tasks, never inside the request that served them."""
    if not memory_ids:
        return 0
    now = timezone.now()
    return Memory.objects.filter(pk__in=memory_ids).update(access_count=F("access_count") + 1, last_accessed_at=now,
                                                           strength=1.0)
