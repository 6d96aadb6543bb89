"""The review kinds the memory app owns (review.registry): candidate memories, supersede
proposals (contradictions), graduation proposals, procedures that stopped working and
near-duplicate pairs the dedup scan found.
Each handler changes memory rows through memory.services only."""

from __future__ import annotations

from django.contrib.postgres.search import SearchQuery, TrigramSimilarity
from pgvector.django import CosineDistance

from core.services import Actor
from memory import extraction, services
from memory.models import (
    OPEN_STATUSES,
    DuplicatePair,
    DuplicateStatus,
    Graduation,
    GraduationStatus,
    Memory,
    MemoryStatus,
    Procedure,
)
from memory.services.memories import EPISODE_RULE
from review import selectors as review_selectors
from review.registry import Description, Gone, Kind, waiting

# Similar enough to offer a merge (all-MiniLM-L6-v2, cosine): paraphrases score 0.7–0.97,
# two unrelated facts about one person 0.35–0.45; 0.5 let those through at the top.
SIMILAR_MIN_MEANING = 0.6
# Before the worker embedded the candidate: trigram similarity of the texts. Wording is a
# weaker witness than meaning ("Ada's favourite city is Lisbon." ~ "Ada's favourite editor
# is Helix." 0.43, "Helix is the editor Ada uses most." 0.43, "Ada edits her code with
# Helix." 0.30), so only close wording is offered until the embedding exists.
SIMILAR_MIN_WORDING = 0.4


# --- candidate memories and contradictions ---------------------------------------------------

def _candidate(workspace_id: int, target_id: int) -> Memory:
    return waiting(Memory.objects.filter(workspace_id=workspace_id).defer("embedding", "search"), target_id, "memory")


def _first_evidence(memory: Memory):
    return memory.evidence.order_by("created_at", "id").first()


def _describe(memory: Memory) -> Description:
    evidence = _first_evidence(memory)
    span = (evidence.start, evidence.end) if evidence and evidence.start is not None and evidence.end else None
    proposal = {"certainty": memory.certainty, "source": memory.source, "model": memory.model,
                "importance": memory.importance, "memory_id": memory.pk,
                "reason": str((memory.metadata or {}).get("reason", ""))}
    if memory.conflicts_with_id:
        old = memory.conflicts_with
        proposal.update({"old_id": old.pk, "old_text": old.text, "attribute": memory.attribute})
    if "learned_from" in memory.metadata:
        proposal["learned_from"] = memory.metadata["learned_from"]
    return Description(
        text=memory.text, item_type=memory.type, source_interaction_id=evidence.interaction_id if evidence else None,
        span=span, entity_id=memory.subject_id, rule=memory.rule or (f"model:{memory.model}" if memory.model else memory.source),
        prompt_version=memory.prompt_version, confidence=memory.confidence, proposal=proposal,
    )


def _approve(memory: Memory, actor: Actor, note: str, changes: dict) -> dict:
    if changes:
        memory = services.memory_edit(memory=memory, actor=actor, note=note, **changes)
    approved = services.memory_approve(memory=memory, actor=actor, note=note)
    return {"memory": approved.pk, "supersedes": approved.supersedes_id}


def _reject(memory: Memory, actor: Actor, note: str) -> dict:
    services.memory_reject(memory=memory, actor=actor, note=note)
    return {"memory": memory.pk}


def _merge(memory: Memory, into_id: int, actor: Actor, note: str) -> dict:
    into = Memory(pk=into_id, workspace_id=memory.workspace_id)
    kept = services.memory_merge(memory=memory, into=into, actor=actor, note=note)
    return {"memory": memory.pk, "into": kept.pk}


def _keep_both(memory: Memory, actor: Actor, note: str) -> dict:
    kept = services.memory_keep_both(memory=memory, actor=actor, note=note)
    return {"memory": kept.pk, "old": kept.conflicts_with_id, "boundary": kept.valid_from.isoformat()}


def _decide_many(workspace, ids: list[int], actor: Actor, approve: bool, note: str) -> dict[int, dict]:
    decided = services.memories_decide(workspace=workspace, memory_ids=ids, actor=actor, approve=approve, note=note)
    return {pk: {"memory": pk} for pk in decided}


def _similar(memory: Memory, limit: int) -> list[dict]:
    """Open memories that say nearly the same: cosine neighbours once the worker embedded
    the candidate; before that, memories sharing a word (the full-text index) ranked by how
    alike the wording is. Only those above the thresholds: a merge target, not a topic."""
    rows = Memory.objects.filter(workspace_id=memory.workspace_id, status__in=OPEN_STATUSES).exclude(pk=memory.pk)
    if memory.embedding is not None:
        found = (rows.exclude(embedding__isnull=True).annotate(distance=CosineDistance("embedding", memory.embedding))
                 .filter(distance__lte=1 - SIMILAR_MIN_MEANING).order_by("distance")[:limit])
        return [_similar_row(m, 1 - m.distance, "meaning") for m in found]
    query = SearchQuery(" OR ".join(w for w in memory.text.split() if w.isalnum()) or memory.text,
                        search_type="websearch", config="english")
    found = (rows.filter(search=query).annotate(similarity=TrigramSimilarity("text", memory.text))
             .filter(similarity__gte=SIMILAR_MIN_WORDING).order_by("-similarity")[:limit])
    return [_similar_row(m, m.similarity, "wording") for m in found]


def _similar_row(memory: Memory, score: float, basis: str) -> dict:
    return {"id": memory.pk, "text": memory.text, "status": memory.status, "type": memory.type, "what": "memory",
            "score": round(score, 3), "basis": basis}


def _conflict_details(memory: Memory) -> dict:
    from memory.selectors import memory_evidence

    old = memory.conflicts_with
    return {"new": memory, "old": old, "new_evidence": list(memory_evidence(memory=memory)),
            "old_evidence": list(memory_evidence(memory=old)) if old else []}


def _by_workspace(targets, workspace_of=lambda target: target.workspace_id) -> list[tuple[int, list]]:
    """Pending targets grouped as review_backfill wants them: [(workspace id, targets)]."""
    grouped: dict[int, list] = {}
    for target in targets:
        grouped.setdefault(workspace_of(target), []).append(target)
    return list(grouped.items())


def _pending(kind_conflict: bool):
    def pending(workspace_id: int | None) -> list[tuple[int, list]]:
        rows = Memory.objects.filter(status=MemoryStatus.CANDIDATE, conflicts_with__isnull=not kind_conflict)
        if workspace_id is not None:
            rows = rows.filter(workspace_id=workspace_id)
        return _by_workspace(rows.order_by("id"))

    return pending


# --- graduations ------------------------------------------------------------------------------

def _graduation(workspace_id: int, target_id: int) -> Graduation:
    return waiting(Graduation.objects.select_related("memory").filter(workspace_id=workspace_id), target_id,
                   "graduation proposal", pending=GraduationStatus.PENDING)


def _describe_graduation(graduation: Graduation) -> Description:
    memory = graduation.memory
    evidence = _first_evidence(memory)
    span = (evidence.start, evidence.end) if evidence and evidence.start is not None and evidence.end else None
    proposal = dict(graduation.proposal)
    return Description(
        text=f"Graduate to a {proposal.get('kind', 'fact')} entity “{proposal.get('name', '')}”: {memory.text}",
        item_type=proposal.get("kind", "fact"), source_interaction_id=evidence.interaction_id if evidence else None,
        span=span, entity_id=memory.subject_id, rule=f"graduation:{graduation.signal}",
        prompt_version=memory.prompt_version, confidence=memory.confidence,
        proposal={**proposal, "memory_id": memory.pk, "memory_text": memory.text, "signal": graduation.signal},
    )


def _approve_graduation(graduation: Graduation, actor: Actor, note: str, changes: dict) -> dict:
    if changes:
        Graduation.objects.filter(pk=graduation.pk).update(proposal={**graduation.proposal, **changes})
        graduation.refresh_from_db()
    done = services.graduation_accept(graduation=graduation, actor=actor)
    return {"graduation": done.pk, "entity": done.entity_id, "memory": done.memory_id}


def _reject_graduation(graduation: Graduation, actor: Actor, note: str) -> dict:
    services.graduation_reject(graduation=graduation, actor=actor, note=note)
    return {"graduation": graduation.pk}


def _pending_graduations(workspace_id: int | None) -> list[tuple[int, list]]:
    rows = Graduation.objects.select_related("memory").filter(status=GraduationStatus.PENDING)
    if workspace_id is not None:
        rows = rows.filter(workspace_id=workspace_id)
    return _by_workspace(rows.order_by("id"))


# --- procedures that stopped working ------------------------------------------------------------

def _flagged(workspace_id: int, target_id: int) -> Procedure:
    return waiting(Procedure.objects.select_related("memory").filter(memory__workspace_id=workspace_id), target_id,
                   "procedure", pending=MemoryStatus.ACTIVE, state=lambda p: p.memory.status)


def _describe_flagged(procedure: Procedure) -> Description:
    effectiveness = procedure.effectiveness or 0.0
    return Description(
        text=(f"Retire the procedure “{procedure.name}”? It worked {procedure.success_count} of "
              f"{procedure.activation_count} times ({effectiveness:.0%})."),
        item_type="procedure", rule="procedure.low_effectiveness", confidence=max(0.0, min(1.0, 1 - effectiveness)),
        proposal={"memory_id": procedure.pk, "name": procedure.name, "steps": procedure.steps,
                  "activations": procedure.activation_count, "successes": procedure.success_count,
                  "effectiveness": effectiveness},
    )


def _retire(procedure: Procedure, actor: Actor, note: str, changes: dict) -> dict:
    services.memory_invalidate(memory=procedure.memory, actor=actor, reason=note or "retired: low effectiveness")
    learned = services.censor_from_procedure(procedure=procedure)
    return {"memory": procedure.pk, "retired": True, "censor": learned.memory.pk if learned else None}


def _keep(procedure: Procedure, actor: Actor, note: str) -> dict:
    return {"memory": procedure.pk, "retired": False}


def _pending_flagged(workspace_id: int | None) -> list[tuple[int, list]]:
    rows = Procedure.objects.select_related("memory").filter(flagged_at__isnull=False, memory__status=MemoryStatus.ACTIVE)
    if workspace_id is not None:
        rows = rows.filter(memory__workspace_id=workspace_id)
    # A flag someone already decided to keep is not proposed again.
    decided = review_selectors.decided_target_ids(kind="low_effectiveness")
    return _by_workspace([p for p in rows.order_by("pk") if p.pk not in decided], lambda p: p.memory.workspace_id)


# --- near duplicates the scan found -----------------------------------------------------------

def _pair(workspace_id: int, target_id: int) -> DuplicatePair:
    pair = waiting(DuplicatePair.objects.select_related("keep", "drop").filter(workspace_id=workspace_id), target_id,
                   "duplicate proposal", pending=DuplicateStatus.PENDING)
    for memory in (pair.keep, pair.drop):
        if memory.status != MemoryStatus.ACTIVE:
            raise Gone(f"memory {memory.pk} is {memory.status} now")
    return pair


def _describe_pair(pair: DuplicatePair) -> Description:
    keep, drop = pair.keep, pair.drop
    return Description(
        text=f"Duplicates? #{keep.pk} “{keep.text}” and #{drop.pk} “{drop.text}”", item_type=keep.type,
        entity_id=keep.subject_id or drop.subject_id, rule="dedup.scan", confidence=pair.similarity,
        proposal={"keep_id": keep.pk, "keep_text": keep.text, "drop_id": drop.pk, "drop_text": drop.text,
                  "similarity": pair.similarity},
    )


def _merge_pair(pair: DuplicatePair, actor: Actor, note: str, changes: dict) -> dict:
    kept = services.duplicate_merge(pair=pair, actor=actor, note=note)
    return {"memory": kept.pk, "archived": pair.drop_id}


def _merge_pair_into(pair: DuplicatePair, into_id: int, actor: Actor, note: str) -> dict:
    kept = services.duplicate_merge(pair=pair, actor=actor, note=note, into_id=into_id)
    return {"memory": kept.pk, "archived": pair.keep_id if into_id == pair.drop_id else pair.drop_id}


def _not_duplicates(pair: DuplicatePair, actor: Actor, note: str) -> dict:
    services.duplicate_reject(pair=pair, actor=actor, note=note)
    return {"keep": pair.keep_id, "drop": pair.drop_id}


def _similar_to_pair(pair: DuplicatePair, limit: int) -> list[dict]:
    """The memory a merge keeps first, then others saying nearly the same as the newer one."""
    kept = _similar_row(pair.keep, pair.similarity, "meaning")
    return [kept] + [row for row in _similar(pair.drop, limit) if row["id"] != pair.keep_id][:limit - 1]


def _pending_pairs(workspace_id: int | None) -> list[tuple[int, list]]:
    rows = DuplicatePair.objects.select_related("keep", "drop").filter(
        status=DuplicateStatus.PENDING, keep__status=MemoryStatus.ACTIVE, drop__status=MemoryStatus.ACTIVE)
    if workspace_id is not None:
        rows = rows.filter(workspace_id=workspace_id)
    return _by_workspace(rows.order_by("pk"))


def _alive(model):
    def alive(ids: list[int]) -> set[int]:
        return set(model.objects.filter(pk__in=ids).values_list("pk", flat=True))

    return alive


# What the rules behind this app's items look for (review.why): the extraction rules'
# own sentences, plus the rules that live in the services.
MEMORY_RULES = {
    **extraction.RULES,
    EPISODE_RULE: "sums up a run of turns of one conversation as one episode",
    "working_memory": "keeps what an agent held in its working memory for a session",
}
GRADUATION_RULES = {
    "graduation:reinforced": "notices a memory confirmed five times or more: it deserves an entity of its own",
    "graduation:template": "notices a memory shaped like “X = value unit”, the shape of a structured fact",
    "graduation:explicit": "was asked to make this memory an entity",
    "graduation:extractor": "notices the entity extractor proposing the same thing as this memory",
}
FLAGGED_RULES = {
    "procedure.low_effectiveness": "flags a procedure that failed more often than it worked over its recent uses",
}


def _memory_page(item) -> tuple[str, int]:
    return "memory", int(item.proposal.get("memory_id") or item.target_id)


# The kinds this app owns, declared by its layer (memory/layer.py).
MEMORY_FIELDS = {"text": "The memory's text", "type": "Its type"}
KINDS = (
    Kind(
        name="memory", label="Memory", load=_candidate, describe=_describe, approve=_approve, reject=_reject,
        edit_fields=MEMORY_FIELDS, merge=_merge, similar=_similar, auto_verbs=("memory.auto_approve",),
        merge_effect=("The candidate is not kept as a memory of its own: it is archived as a duplicate, its "
                      "evidence is added to the existing memory, and that memory counts one more confirmation."),
        pending=_pending(False), decide_many=_decide_many, alive=_alive(Memory), rules=MEMORY_RULES,
        page=_memory_page,
    ),
    Kind(
        name="conflict", label="Contradiction", load=_candidate, describe=_describe, approve=_approve, reject=_reject,
        edit_fields={"text": "The new memory's text"}, both=_keep_both, similar=_similar, details=_conflict_details,
        approve_label="New supersedes old", reject_label="Keep the old one", pending=_pending(True),
        alive=_alive(Memory), rules=MEMORY_RULES, page=_memory_page,
    ),
    Kind(
        name="graduation", label="Graduation", load=_graduation, describe=_describe_graduation,
        approve=_approve_graduation, reject=_reject_graduation,
        edit_fields={"name": "The entity's name", "kind": "The entity's kind"}, pending=_pending_graduations,
        approve_label="Graduate", alive=_alive(Graduation), rules=GRADUATION_RULES, page=_memory_page,
    ),
    Kind(
        name="low_effectiveness", label="Failing procedure", load=_flagged, describe=_describe_flagged,
        approve=_retire, reject=_keep, pending=_pending_flagged, approve_label="Retire", reject_label="Keep it",
        alive=_alive(Procedure), rules=FLAGGED_RULES, page=_memory_page,
    ),
    Kind(
        name="duplicate", label="Duplicates", load=_pair, describe=_describe_pair, approve=_merge_pair,
        reject=_not_duplicates, merge=_merge_pair_into, similar=_similar_to_pair, pending=_pending_pairs,
        approve_label="Merge them", reject_label="Not duplicates", alive=_alive(DuplicatePair),
        merge_effect=("One memory stays: the other is archived as its duplicate, its evidence is added to the "
                      "one kept, and that memory counts one more confirmation. Merging into the other memory of "
                      "the pair keeps that one instead."),
    ),
)
