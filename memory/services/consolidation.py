"""Consolidation (issue 19 part 1): related memories become one pattern with certainty
`consolidated`, citing every source memory and their interactions; the sources are kept as
they were, pointing at it (`consolidated_into`). The policy (memory.consolidation) is a
per-workspace setting; patterns pass the trust policy like any memory (memory_store).

One run, bounded: up to MAX_SEEDS_PER_RUN seed memories, taken after the workspace's cursor
(or from one conversation that just closed); each seed's group comes from its nearest
neighbours in the HNSW index and from its subject's memories sharing its concepts — never
all pairs. A group whose members already point at an open pattern reinforces it with the
new ones; a group of `min_support` unconsolidated members becomes a new pattern. The LLM,
when configured, words the pattern (outside any transaction); its text goes through the
same checks as any draft, the extractive wording being the fallback. Each pattern is
written in its own short transaction that re-checks its members under lock, so a run
killed mid-way leaves only whole patterns, and the next run picks up where it stopped."""

from __future__ import annotations

import json
import logging
from dataclasses import asdict, dataclass
from datetime import datetime

from django.core.exceptions import ValidationError
from django.db import connection, transaction
from django.utils import timezone
from pgvector import Vector

from core.concurrency import lock_workspaces
from core.errors import ApiError
from core.models import Workspace
from core.selectors import workspaces_importing
from core.providers import ProviderError, get_llm
from core.services import SYSTEM, Actor, audit_record
from memory import consolidation
from memory.consolidation import Item, Settings
from memory.models import OPEN_STATUSES, Certainty, ConsolidationPolicy, Memory, MemoryEvidence, MemoryStatus, Procedure
from memory.services.memories import Draft, Evidence, clean_text, memory_reinforce, memory_store

logger = logging.getLogger("mnemo.memory")

MAX_SEEDS_PER_RUN = 2000
MAX_SEEDS_PER_CONVERSATION = 200
NEIGHBOURS = 24  # per seed from the index, and as many from its subject's group
NEIGHBOUR_SCAN_TUPLES = 4000
PROMPT_VERSION = "consolidate-1"
PATTERN_SYSTEM = """You write one memory that states the pattern shared by several related memories.
Answer a JSON object {"text": "..."}: one or two sentences, in the third person, naming who it is
about, saying what recurs (a habit, a preference, a repeated procedure, an ongoing subject) and how
often and when, from the support and span given. Only what the memories say; no speculation."""


# --- the policy -----------------------------------------------------------------------------

_FIELDS = ("enabled", "source_types", "min_support", "strong_support", "max_distance", "window_days",
           "max_patterns_per_run")


def consolidation_policy_for(workspace_id: int) -> Settings:
    row = ConsolidationPolicy.objects.filter(workspace_id=workspace_id).first()
    if row is None:
        return consolidation.DEFAULTS
    return Settings(**{name: getattr(row, name) for name in _FIELDS} | {"source_types": tuple(row.source_types)})


@transaction.atomic
def consolidation_policy_set(*, workspace: Workspace, actor: Actor, enabled: bool, source_types: list[str],
                             min_support: int, strong_support: int, max_distance: float, window_days: int,
                             max_patterns_per_run: int) -> Settings:
    after = Settings(enabled=enabled, source_types=tuple(sorted(set(source_types))), min_support=min_support,
                     strong_support=strong_support, max_distance=max_distance, window_days=window_days,
                     max_patterns_per_run=max_patterns_per_run)
    errors = consolidation.validate(after)
    if errors:
        raise ValidationError(errors)
    before = consolidation_policy_for(workspace.pk)
    values = asdict(after) | {"source_types": list(after.source_types)}
    ConsolidationPolicy.objects.update_or_create(workspace=workspace, defaults={
        **values, "updated_by": actor.user, "updated_at": timezone.now()})
    audit_record(workspace=workspace, actor=actor, verb="consolidation_policy.set", data={
        "before": asdict(before), "after": asdict(after)})
    return after


# --- reading the candidates -----------------------------------------------------------------

_COLUMNS = ("m.id, m.type, m.text, m.embedding, m.concepts, coalesce(m.occurred_at, m.created_at), m.subject_id, "
            "m.reinforcement_count, m.confidence, m.consolidated_into_id")
_ELIGIBLE = ("m.workspace_id = %s AND m.status = 'active' AND m.embedding IS NOT NULL "
             "AND m.certainty <> 'consolidated'")


def _item(row) -> Item:
    pk, type_, text, embedding, concepts, at, subject_id, reinforcement, confidence, pattern_id = row
    if isinstance(embedding, str):  # a raw cursor gets the vector's text form
        embedding = Vector.from_text(embedding).to_numpy()
    return Item(id=pk, type=type_, text=text, embedding=embedding, concepts=frozenset(concepts or ()), at=at,
                subject_id=subject_id, reinforcement=reinforcement, confidence=confidence, pattern_id=pattern_id)


def _seeds(workspace_id: int, settings: Settings, *, after_id: int, conversation_id: int | None,
           limit: int) -> list[Item]:
    """Unconsolidated memories to start groups from: a closed conversation's, or the next
    ones after the cursor."""
    where, params = [_ELIGIBLE, "m.type = ANY(%s)", "m.consolidated_into_id IS NULL"], [workspace_id,
                                                                                         list(settings.source_types)]
    if conversation_id is not None:
        where.append("m.conversation_id = %s")
        params.append(conversation_id)
    else:
        where.append("m.id > %s")
        params.append(after_id)
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT {_COLUMNS} FROM memory_memory m WHERE {' AND '.join(where)} ORDER BY m.id LIMIT %s",
                       [*params, limit])
        return [_item(row) for row in cursor.fetchall()]


def _neighbours(workspace_id: int, seed: Item) -> list[tuple[Item, float]]:
    """The seed's nearest memories of its type through the HNSW index, and the nearest of
    its subject's memories sharing a concept with it (bounded, like the index's)."""
    vector = Vector(seed.embedding).to_text()
    found: dict[int, tuple[Item, float]] = {}
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute("SET LOCAL hnsw.iterative_scan = relaxed_order")
        cursor.execute(f"SET LOCAL hnsw.max_scan_tuples = {NEIGHBOUR_SCAN_TUPLES}")
        cursor.execute(f"SELECT {_COLUMNS}, m.embedding <=> %s::vector FROM memory_memory m "
                       f"WHERE {_ELIGIBLE} AND m.type = %s ORDER BY m.embedding <=> %s::vector LIMIT {NEIGHBOURS}",
                       [vector, workspace_id, seed.type, vector])
        rows = cursor.fetchall()
        if seed.subject_id is not None and seed.concepts:
            cursor.execute(f"SELECT {_COLUMNS}, m.embedding <=> %s::vector FROM memory_memory m "
                           f"WHERE {_ELIGIBLE} AND m.type = %s AND m.subject_id = %s AND m.concepts && %s "
                           f"ORDER BY m.embedding <=> %s::vector LIMIT {NEIGHBOURS}",
                           [vector, workspace_id, seed.type, seed.subject_id, sorted(seed.concepts), vector])
            rows += cursor.fetchall()
    for row in rows:
        found.setdefault(row[0], (_item(row[:-1]), float(row[-1])))
    return list(found.values())


# --- one run --------------------------------------------------------------------------------

@dataclass
class _Plan:
    members: list[Item]
    pattern_id: int | None  # an open pattern the group reinforces
    text: str = ""
    made_by: str = "extractive"


def memories_consolidate(*, workspace_id: int, conversation_id: int | None = None,
                         max_seeds: int = MAX_SEEDS_PER_RUN, counts: dict | None = None,
                         use_llm: bool = True) -> dict:
    """One bounded run over a workspace (module docstring). Call outside a transaction:
    the LLM is asked with no lock held, and each pattern commits on its own. `use_llm=False`
    (a run inside a request someone waits on) words every pattern extractively. Returns
    (and adds to `counts`) what it did."""
    counts = counts if counts is not None else {}
    for key in ("seeds", "groups", "created", "reinforced", "sources"):
        counts.setdefault(key, 0)
    settings = consolidation_policy_for(workspace_id)
    if not settings.enabled or not settings.source_types:
        return counts
    cursor_row = None
    if conversation_id is None:
        cursor_row, _ = ConsolidationPolicy.objects.get_or_create(
            workspace_id=workspace_id, defaults=asdict(settings) | {"source_types": list(settings.source_types)})
    seeds = _seeds(workspace_id, settings, after_id=cursor_row.seed_cursor if cursor_row else 0,
                   conversation_id=conversation_id,
                   limit=max_seeds if conversation_id is None else min(max_seeds, MAX_SEEDS_PER_CONVERSATION))
    plans, examined = _plan(workspace_id, seeds, settings, counts)
    for plan in plans:
        _word(plan, use_llm=use_llm)
        _write(workspace_id, plan, settings, counts)
    if cursor_row is not None:
        # Past the last seed examined; at the end of the workspace, back to its start (new
        # members of old groups, groups a decision or a new policy made possible).
        finished = examined == len(seeds) and len(seeds) < max_seeds
        cursor = 0 if finished or not examined else seeds[examined - 1].id
        ConsolidationPolicy.objects.filter(pk=workspace_id).update(seed_cursor=cursor)
    return counts


def _plan(workspace_id: int, seeds: list[Item], settings: Settings, counts: dict) -> tuple[list[_Plan], int]:
    """The groups to write, and how many seeds were examined (a run stops at its limit).
    A group touching existing patterns reinforces the nearest one the seed fits
    (consolidation.reinforces) with the new members that fit it too; otherwise its new
    members alone, tightened around their central statement, may make a pattern."""
    plans: list[_Plan] = []
    taken: set[int] = set()
    examined = 0
    for seed in seeds:
        if len(plans) >= settings.max_patterns_per_run:
            break
        examined += 1
        counts["seeds"] += 1
        if seed.id in taken:
            continue
        members = [m for m in consolidation.group(seed, _neighbours(workspace_id, seed), settings) if m.id not in taken]
        fresh = [m for m in members if m.pattern_id is None]
        near = _patterns_of(members)
        fitting = sorted((p for p in near if consolidation.reinforces(p, seed, settings)),
                         key=lambda p: consolidation.cosine_distance(p.embedding, seed.embedding))
        if fitting:
            pattern = fitting[0]
            if not pattern.open:
                continue  # what a person rejected is not proposed again
            plans.append(_Plan(members=[m for m in fresh if consolidation.reinforces(pattern, m, settings)],
                               pattern_id=pattern.id))
        else:
            fresh = consolidation.tightened(fresh, settings)
            if len(fresh) < settings.min_support:
                continue
            plans.append(_Plan(members=fresh, pattern_id=None))
        counts["groups"] += 1
        taken.update(m.id for m in plans[-1].members)
    return plans, examined


def _patterns_of(members: list[Item]) -> list[consolidation.Pattern]:
    """The patterns the group's consolidated members point at."""
    ids = {m.pattern_id for m in members if m.pattern_id}
    if not ids:
        return []
    return [consolidation.Pattern(id=pk, embedding=embedding, first=first, last=last, open=status in OPEN_STATUSES)
            for pk, embedding, first, last, status in Memory.objects.filter(pk__in=ids, embedding__isnull=False)
            .order_by("pk").values_list("pk", "embedding", "event_first", "event_last", "status")]


def _span(members: list[Item]) -> tuple[datetime, datetime]:
    times = sorted(m.at for m in members if m.at)
    return times[0], times[-1]


def _word(plan: _Plan, *, use_llm: bool) -> None:
    """The pattern's text: extractive, or the LLM's when it is configured and passes."""
    if plan.pattern_id is not None:
        return
    best = consolidation.central(plan.members)
    first, last = _span(plan.members)
    plan.text = consolidation.pattern_text(text=best.text, source_type=best.type, support=len(plan.members),
                                           first=first.date(), last=last.date())
    llm = get_llm() if use_llm else None
    if llm is None:
        return
    ordered = sorted(plan.members, key=lambda m: (m.at is None, m.at, m.id))
    request = {"support": len(plan.members), "span": consolidation.span_label(first.date(), last.date()),
               "memories": [{"date": m.at.date().isoformat() if m.at else None,
                             "text": consolidation.statement(m.text, m.type)[:600]} for m in ordered[:20]]}
    try:
        answer = llm.complete_json(system=PATTERN_SYSTEM, user=json.dumps(request, ensure_ascii=False))
    except ProviderError as exc:
        logger.warning("LLM consolidation failed; extractive pattern", extra={"error": str(exc)})
        return
    text = consolidation.acceptable_llm_text(answer.get("text"))
    try:
        text = clean_text(text) if text else None
    except (ApiError, ValidationError):
        text = None  # a secret or nothing left: the draft is refused, the extractive one stands
    if text:
        plan.text, plan.made_by = text, f"model:{llm.model}"


def _evidence(member_ids: list[int]) -> list[Evidence]:
    return [Evidence(e.interaction_id, e.quote, e.start, e.end)
            for e in MemoryEvidence.objects.filter(memory_id__in=member_ids).order_by("interaction_id", "id")]


@transaction.atomic
def _write(workspace_id: int, plan: _Plan, settings: Settings, counts: dict) -> None:
    # The memory lock first, as memory_store takes it: one writer of memories at a time.
    lock_workspaces("memory", workspace_ids=[workspace_id])
    ids = list(Memory.objects.select_for_update(no_key=True).filter(
        pk__in=[m.id for m in plan.members], consolidated_into__isnull=True, status=MemoryStatus.ACTIVE,
    ).order_by("id").values_list("id", flat=True))
    members = [m for m in plan.members if m.id in set(ids)]
    evidence = _evidence(ids)
    if plan.pattern_id is not None:
        pattern = Memory.objects.select_for_update(no_key=True).filter(pk=plan.pattern_id,
                                                                       status__in=OPEN_STATUSES).first()
        if pattern is None or not members:
            return
        memory_reinforce(memory=pattern, evidence=evidence, reason="consolidation", restated=True)
        sources = pattern.metadata.get("consolidation", {}).get("sources", [])
        pattern.metadata = pattern.metadata | {"consolidation": pattern.metadata.get("consolidation", {}) | {
            "sources": sorted({*sources, *ids}), "support": len(set(sources) | set(ids))}}
        # The span the sources cover, which the next reinforcement is bounded by.
        days = [m.at.date() for m in members if m.at]
        if days:
            pattern.event_first = min(d for d in (pattern.event_first, min(days)) if d is not None)
            pattern.event_last = max(d for d in (pattern.event_last, max(days)) if d is not None)
        pattern.save(update_fields=["metadata", "event_first", "event_last"])
        counts["reinforced"] += 1
    else:
        if len(members) < settings.min_support:
            return  # another run took some of them meanwhile
        pattern = _create(workspace_id, plan, members, evidence, settings)
        counts["created"] += 1
    Memory.objects.filter(pk__in=ids).update(consolidated_into=pattern, updated_at=timezone.now())
    counts["sources"] += len(ids)


def _create(workspace_id: int, plan: _Plan, members: list[Item], evidence: list[Evidence],
            settings: Settings) -> Memory:
    source_type = members[0].type
    target = consolidation.TARGET_TYPE[source_type]
    first, last = _span(members)
    subjects = {m.subject_id for m in members}
    best = consolidation.central(members)
    draft = Draft(
        type=target, text=plan.text, certainty=Certainty.CONSOLIDATED,
        confidence=round(sum(m.confidence for m in members) / len(members), 4),
        importance=consolidation.importance(len(members), settings),
        subject_id=subjects.pop() if len(subjects) == 1 else best.subject_id,
        source="consolidation", rule=f"consolidation.{source_type}",
        model=plan.made_by.removeprefix("model:") if plan.made_by != "extractive" else "",
        prompt_version=PROMPT_VERSION if plan.made_by != "extractive" else "",
        occurred_at=last, event_first=first.date(), event_last=last.date(),
        metadata={"consolidation": {"sources": sorted(m.id for m in members), "support": len(members),
                                    "central": best.id, "source_type": source_type, "made_by": plan.made_by,
                                    "first": first.isoformat(), "last": last.isoformat()}},
        evidence=evidence,
    )
    extra = None
    if target == "procedure":
        def extra(memory: Memory) -> None:
            Procedure.objects.create(memory=memory, name=consolidation.statement(best.text, source_type)[:300])
    # Not folded into a near duplicate: the pattern is meant to sit beside its sources.
    return memory_store(workspace_id=workspace_id, draft=draft, actor=SYSTEM, embedding=consolidation.centroid(members),
                        extra=extra, dedup_near=False).memory


def consolidation_workspaces() -> list[int]:
    """Workspaces whose policy lets consolidation run (no row: the defaults, enabled)."""
    disabled = ConsolidationPolicy.objects.filter(enabled=False).values("workspace_id")
    return list(Workspace.objects.exclude(pk__in=disabled).exclude(pk__in=workspaces_importing())
                .order_by("pk").values_list("pk", flat=True))


def consolidation_run_record(*, workspace_id: int, actor: Actor, counts: dict, trigger: str) -> None:
    """The audit row of a run someone asked for (a person or an admin key)."""
    audit_record(workspace=Workspace.objects.get(pk=workspace_id), actor=actor, verb="memory.consolidate",
                 data={"trigger": trigger, **counts})

