"""Procedures and censors (seed 003): how to do things, and what not to do.

A procedure is matched against a task by meaning and wording, and learns from outcomes:
effectiveness = successes / activations (0.5 before the first use); one that keeps failing
is flagged for review. A censor warns (or blocks) when an action matches its trigger; after
`escalation_threshold` activations that nobody reported as false positives, a warning
censor escalates to block, and reported false positives can bring it back to warn.

Seed 003's third action, `absolute`, blocks without override: a check it matches answers
`block` with `overridable: false`, it never de-escalates, and a false-positive report on it
is refused (409) — changing it takes a person editing or invalidating the censor."""

from __future__ import annotations

import re

from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import transaction
from django.db.models import F
from django.utils import timezone
from pgvector.django import CosineDistance

from core.errors import Conflict
from core.providers import get_embedder
from core.safe_text import refuse_secrets
from core.services import SYSTEM, Actor, audit_record
from memory.models import Censor, CensorAction, Memory, MemoryStatus, MemoryType, Procedure
from memory.services.memories import Draft, Stored, clean_text, memory_store

MAX_ITEMS = 50
_WORD = re.compile(r"[a-z0-9]+")
# Words too common to say whether an action matches a censor's trigger.
_STOP = frozenset("a an and are as at be by do does for from has have i in is it its of on or that the this to was we "
                  "were will with you your our my me not no don t never ever again".split())


def _words(text: str) -> set[str]:
    return {w for w in _WORD.findall(text.casefold()) if w not in _STOP and len(w) > 1}


def _clean_list(values, field: str) -> list[str]:
    values = [str(v).strip() for v in values or [] if str(v).strip()]
    if len(values) > MAX_ITEMS:
        raise ValidationError({field: f"At most {MAX_ITEMS} entries."})
    return [clean_text(v, field) for v in values]


def procedure_text(name: str, steps: list[str]) -> str:
    lines = [f"{name.rstrip(':')}:"] + [f"{i}) {step}" for i, step in enumerate(steps, 1)]
    return " ".join(lines)


def procedure_create(*, workspace_id: int, name: str, steps: list[str], actor: Actor = SYSTEM, goals=(), tools=(),
                     notes=(), domain: str = "", draft: Draft | None = None, embedding=None) -> Stored:
    name = clean_text(name, "name")[:300]
    steps = _clean_list(steps, "steps")
    if not steps:
        raise ValidationError({"steps": "A procedure needs at least one step."})
    goals, tools, notes = _clean_list(goals, "goals"), _clean_list(tools, "tools"), _clean_list(notes, "notes")
    draft = draft or Draft(type=MemoryType.PROCEDURE, text="", certainty="verbatim")
    draft.type = MemoryType.PROCEDURE
    draft.text = draft.text or procedure_text(name, steps)

    def details(memory: Memory) -> None:
        Procedure.objects.create(memory=memory, name=name, domain=domain[:100], goals=goals, steps=steps, tools=tools,
                                 notes=notes)

    return memory_store(workspace_id=workspace_id, draft=draft, actor=actor, embedding=embedding, extra=details)


def procedures_match(*, workspace_id: int, task: str, limit: int = 5, vector=None) -> list[dict]:
    """Active procedures for a task, best first, each with its bands (core first). Only
    the task is embedded (a query, DESIGN.md), unless its `vector` is given (an episode's)."""
    if vector is None:
        vector = get_embedder().embed([task])[0]
    task_words = _words(task)
    rows = (Procedure.objects.filter(memory__workspace_id=workspace_id, memory__status=MemoryStatus.ACTIVE,
                                     memory__embedding__isnull=False)
            .select_related("memory").annotate(distance=CosineDistance("memory__embedding", vector))
            .order_by("distance")[:50])
    matches = []
    for row in rows:
        similarity = 1 - row.distance
        words = _words(" ".join([row.name, *row.goals, *row.steps, *row.tools, row.domain]))
        lexical = len(task_words & words) / len(task_words) if task_words else 0.0
        score = 0.75 * similarity + 0.25 * lexical
        if score >= settings.MNEMO_PROCEDURE_MATCH_MIN:
            matches.append((score, similarity, lexical, row))
    matches.sort(key=lambda m: (-m[0], m[3].pk))
    return [{"procedure": row, "score": round(score, 4), "similarity": round(similarity, 4), "lexical": round(lexical, 4)}
            for score, similarity, lexical, row in matches[:limit]]


OUTCOMES = ("success", "failure")


@transaction.atomic
def procedure_outcome(*, procedure: Procedure, outcome: str, actor: Actor, note: str = "") -> Procedure:
    refuse_secrets(note=note)
    if outcome not in OUTCOMES:
        raise ValidationError({"outcome": f"An outcome is one of {', '.join(OUTCOMES)}."})
    procedure = Procedure.objects.select_for_update(no_key=True).select_related("memory").get(pk=procedure.pk)
    if procedure.memory.status != MemoryStatus.ACTIVE:
        raise ValidationError({"procedure": f"This procedure is {procedure.memory.status}; outcomes count for active ones."})
    counter = "success_count" if outcome == "success" else "failure_count"
    Procedure.objects.filter(pk=procedure.pk).update(activation_count=F("activation_count") + 1,
                                                     **{counter: F(counter) + 1}, last_activated_at=timezone.now())
    procedure.refresh_from_db()
    workspace = procedure.memory.workspace
    audit_record(workspace=workspace, actor=actor, verb="procedure.outcome", target=procedure.memory, data={
        "outcome": outcome, "note": note, "activations": procedure.activation_count,
        "effectiveness": procedure.effectiveness})
    low = (procedure.activation_count >= settings.MNEMO_PROCEDURE_MIN_ACTIVATIONS
           and procedure.effectiveness < settings.MNEMO_PROCEDURE_LOW_EFFECTIVENESS)
    if low and procedure.flagged_at is None:
        procedure.flagged_at = timezone.now()
        procedure.save(update_fields=["flagged_at"])
        audit_record(workspace=workspace, actor=SYSTEM, verb="procedure.flag", target=procedure.memory, data={
            "effectiveness": procedure.effectiveness, "activations": procedure.activation_count})
        from review.services import review_open

        review_open(kind="low_effectiveness", target=procedure, workspace_id=workspace.pk)
    return procedure


# --- censors --------------------------------------------------------------------------------

def censor_create(*, workspace_id: int, trigger: str, actor: Actor = SYSTEM, reason: str = "",
                  action: str = CensorAction.WARN, escalation_threshold: int = 3, draft: Draft | None = None,
                  embedding=None) -> Stored:
    trigger = clean_text(trigger, "trigger")[:1000]
    reason = clean_text(reason, "reason") if reason.strip() else ""
    if action not in CensorAction.values:
        raise ValidationError({"action": f"A censor's action is one of {', '.join(CensorAction.values)}."})
    if not 1 <= escalation_threshold <= 1000:
        raise ValidationError({"escalation_threshold": "The escalation threshold lies between 1 and 1000."})
    draft = draft or Draft(type=MemoryType.CENSOR, text="", certainty="verbatim")
    draft.type = MemoryType.CENSOR
    draft.text = draft.text or (f"Never {trigger}" + (f" — {reason}" if reason else ""))

    def details(memory: Memory) -> None:
        Censor.objects.create(memory=memory, trigger=trigger, reason=reason, action=action,
                              escalation_threshold=escalation_threshold)

    return memory_store(workspace_id=workspace_id, draft=draft, actor=actor, embedding=embedding, extra=details)


def censors_embed_triggers(*, memory_ids: list[int]) -> int:
    censors = list(Censor.objects.filter(memory_id__in=memory_ids, embedding__isnull=True))
    if not censors:
        return 0
    vectors = get_embedder().embed([c.trigger for c in censors])
    for censor, vector in zip(censors, vectors):
        Censor.objects.filter(pk=censor.pk).update(embedding=vector)
    return len(censors)


def _effective_activations(censor: Censor) -> int:
    return censor.activation_count - censor.false_positive_count


def censors_matching(*, workspace_id: int, action: str, vector, lock: bool = False) -> list[dict]:
    """The workspace's active censors an action matches — every trigger word present, or
    close in meaning (`vector` is the action's embedding) — best first, blocking ones first.
    No side effect: `censors_check` counts the activations; the gaps layer asks whether a
    refusal answered a request a censor covers. `lock` locks the matched censors' rows
    (inside the caller's transaction)."""
    action_words = _words(action)
    censors = Censor.objects.select_related("memory").filter(memory__workspace_id=workspace_id,
                                                             memory__status=MemoryStatus.ACTIVE)
    if lock:
        censors = censors.select_for_update(no_key=True, of=("self",))
    matches = []
    for censor in censors.annotate(distance=CosineDistance("embedding", vector)):
        trigger_words = _words(censor.trigger)
        lexical = len(trigger_words & action_words) / len(trigger_words) if trigger_words else 0.0
        similarity = 1 - censor.distance if censor.distance is not None else 0.0
        if lexical < 1.0 and similarity < settings.MNEMO_CENSOR_MATCH_THRESHOLD:
            continue
        matches.append({"censor": censor, "score": round(max(lexical, similarity), 4),
                        "lexical": round(lexical, 4), "similarity": round(similarity, 4)})
    matches.sort(key=_firmest_first)
    return matches


# Absolute censors first, then blocking ones, then warnings; the best match first within each.
_FIRMNESS = {CensorAction.ABSOLUTE: 0, CensorAction.BLOCK: 1, CensorAction.WARN: 2}


def _firmest_first(match: dict) -> tuple:
    return (_FIRMNESS[match["censor"].action], -match["score"], match["censor"].pk)


def censors_verdict(matches: list[dict]) -> dict:
    """What a check answers: allow, warn or block, and whether a person may override a
    block (not when an absolute censor matched)."""
    actions = {m["censor"].action for m in matches}
    blocking = actions & {CensorAction.BLOCK, CensorAction.ABSOLUTE}
    verdict = "block" if blocking else ("warn" if matches else "allow")
    return {"verdict": verdict, "overridable": CensorAction.ABSOLUTE not in actions}


@transaction.atomic
def censors_check(*, workspace_id: int, action: str, actor: Actor = SYSTEM) -> list[dict]:
    """The active censors an intended action matches (`censors_matching`). Each match
    counts as an activation and may escalate the censor."""
    action = action.strip()
    if not action:
        raise ValidationError({"action": "Describe the action to check."})
    vector = get_embedder().embed([action])[0]
    matches = censors_matching(workspace_id=workspace_id, action=action, vector=vector, lock=True)
    now = timezone.now()
    for match in matches:
        censor = match["censor"]
        censor.activation_count += 1
        censor.last_activated_at = now
        fields = ["activation_count", "last_activated_at"]
        if censor.action == CensorAction.WARN and _effective_activations(censor) >= censor.escalation_threshold:
            censor.action, censor.escalated_at = CensorAction.BLOCK, now
            fields += ["action", "escalated_at"]
            audit_record(workspace=censor.memory.workspace, actor=SYSTEM, verb="censor.escalate", target=censor.memory,
                         data={"activations": censor.activation_count, "threshold": censor.escalation_threshold})
        censor.save(update_fields=fields)
    if matches:
        audit_record(workspace=matches[0]["censor"].memory.workspace, actor=actor, verb="censor.check",
                     data={"matched": [m["censor"].pk for m in matches]})
    matches.sort(key=_firmest_first)
    return matches


@transaction.atomic
def censor_false_positive(*, censor: Censor, actor: Actor, note: str = "") -> Censor:
    """A match that should not have fired. An escalated censor whose remaining activations
    fall below its threshold goes back to warning."""
    refuse_secrets(note=note)
    censor = Censor.objects.select_for_update(no_key=True).select_related("memory").get(pk=censor.pk)
    if censor.action == CensorAction.ABSOLUTE:
        raise Conflict("An absolute censor admits no override: edit or invalidate it instead.",
                       details={"action": censor.action})
    if censor.false_positive_count >= censor.activation_count:
        raise ValidationError({"censor": "Every activation of this censor is already reported as a false positive."})
    censor.false_positive_count += 1
    fields = ["false_positive_count"]
    if (censor.action == CensorAction.BLOCK and censor.escalated_at is not None
            and _effective_activations(censor) < censor.escalation_threshold):
        censor.action, censor.escalated_at = CensorAction.WARN, None
        fields += ["action", "escalated_at"]
    censor.save(update_fields=fields)
    audit_record(workspace=censor.memory.workspace, actor=actor, verb="censor.false_positive", target=censor.memory,
                 data={"note": note, "false_positives": censor.false_positive_count, "action": censor.action})
    return censor
