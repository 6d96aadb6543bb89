"""Graduation (seed 000): a memory that deserves structure becomes an entity candidate.
The memory is never deleted: it gets status `graduated` and a pointer to the entity.

Four signals propose it: reinforced 5+ times, text shaped like "X = value [unit]", an
explicit request, and the entity extractor proposing an entity that an existing memory
already states. An explicit request graduates at once and returns the entity proposal; the
other three open a `Graduation` for a person to accept or reject. Only facts graduate:
identity, preference and episodic memories stay memories (seed 000's table), and
procedures and censors are memories by design here."""

from __future__ import annotations

from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import IntegrityError, transaction
from django.utils import timezone

from core.errors import Conflict
from core.safe_text import refuse_secrets
from core.services import SYSTEM, Actor, audit_record
from memory import rules
from memory.models import OPEN_STATUSES, Graduation, GraduationSignal, GraduationStatus, Memory, MemoryStatus, MemoryType

GRADUATING_TYPES = (MemoryType.FACT,)


def _proposal(memory: Memory) -> dict:
    proposal = rules.proposal_for(memory.text)
    return {"kind": proposal.kind, "name": proposal.name, "value": proposal.value, "unit": proposal.unit,
            "description": memory.text}


def graduation_propose(*, memory: Memory, signal: str) -> Graduation | None:
    """Open a proposal unless the memory cannot graduate or one is already open or done."""
    if memory.type not in GRADUATING_TYPES or memory.status not in OPEN_STATUSES:
        return None
    if Graduation.objects.filter(memory=memory, status__in=[GraduationStatus.PENDING, GraduationStatus.GRADUATED]).exists():
        return None
    try:
        with transaction.atomic():
            graduation = Graduation.objects.create(workspace_id=memory.workspace_id, memory=memory, signal=signal,
                                                   proposal=_proposal(memory))
    except IntegrityError:
        return None  # another worker opened it first
    audit_record(workspace=memory.workspace, actor=SYSTEM, verb="graduation.propose", target=graduation,
                 data={"memory": memory.pk, "signal": signal})
    from review.services import review_open

    review_open(kind="graduation", target=graduation, workspace_id=memory.workspace_id)
    return graduation


def graduation_check_reinforced(*, memory: Memory) -> None:
    if memory.reinforcement_count >= settings.MNEMO_GRADUATION_REINFORCEMENTS:
        graduation_propose(memory=memory, signal=GraduationSignal.REINFORCED)


def graduation_check_template(*, memory: Memory) -> None:
    if rules.entity_template(memory.text) is not None:
        graduation_propose(memory=memory, signal=GraduationSignal.TEMPLATE)


def graduation_check_extractor(*, workspace_id: int, name: str, text: str) -> list[Graduation]:
    """Signal 4: an entity the extractor proposes is already stated by a fact memory."""
    hashes = {rules.text_hash(text), rules.text_hash(name)}
    found = Memory.objects.filter(workspace_id=workspace_id, type__in=GRADUATING_TYPES,
                                       status__in=OPEN_STATUSES, text_hash__in=hashes)
    opened = [graduation_propose(memory=memory, signal=GraduationSignal.EXTRACTOR) for memory in found]
    return [g for g in opened if g is not None]


@transaction.atomic
def memory_graduate(*, memory: Memory, actor: Actor, signal: str = GraduationSignal.EXPLICIT,
                    graduation: Graduation | None = None) -> Graduation:
    """Make the memory an entity candidate now. Graduating twice is a conflict."""
    from entities.services import entity_propose

    memory = Memory.objects.select_for_update(no_key=True).get(pk=memory.pk)
    if memory.status == MemoryStatus.GRADUATED:
        raise Conflict(f"Memory {memory.pk} already graduated to entity {memory.graduated_to_id}.",
                       details={"entity": memory.graduated_to_id})
    if memory.status not in OPEN_STATUSES:
        raise Conflict(f"Memory {memory.pk} is {memory.status}; only candidate or active memories graduate.",
                       details={"status": memory.status})
    if memory.type not in GRADUATING_TYPES:
        raise ValidationError({"type": f"{memory.type} memories stay memories (seed 000); only facts graduate to entities."})
    proposal = graduation.proposal if graduation else _proposal(memory)
    evidence = list(memory.evidence.values_list("interaction_id", "quote"))
    entity, created = entity_propose(
        workspace_id=memory.workspace_id, kind=proposal["kind"], name=proposal["name"],
        description=proposal["description"], confidence=memory.confidence, actor=actor,
        evidence_ids=[i for i, _ in evidence], quote=evidence[0][1] if evidence else "",
    )
    now = timezone.now()
    if graduation is None:
        Graduation.objects.filter(memory=memory, status=GraduationStatus.PENDING).update(
            status=GraduationStatus.GRADUATED, entity=entity, decided_by=actor.user, decided_at=now)
        graduation = (Graduation.objects.filter(memory=memory, status=GraduationStatus.GRADUATED).first()
                      or Graduation.objects.create(workspace_id=memory.workspace_id, memory=memory, signal=signal,
                                                   status=GraduationStatus.GRADUATED, proposal=proposal, entity=entity,
                                                   decided_by=actor.user, decided_at=now))
    else:
        graduation.status, graduation.entity = GraduationStatus.GRADUATED, entity
        graduation.decided_by, graduation.decided_at = actor.user, now
        graduation.save(update_fields=["status", "entity", "decided_by", "decided_at"])
    before = memory.status
    memory.status, memory.graduated_to, memory.updated_at = MemoryStatus.GRADUATED, entity, now
    memory.save(update_fields=["status", "graduated_to", "updated_at"])
    audit_record(workspace=memory.workspace, actor=actor, verb="memory.graduate", target=memory, data={
        "entity": entity.pk, "entity_created": created, "signal": graduation.signal, "before": before,
        "graduation": graduation.pk})
    from review.services import review_withdraw

    # Graduated explicitly while a proposal (or the memory itself) waited in the queue.
    review_withdraw(kind="graduation", target_ids=[graduation.pk], workspace_id=memory.workspace_id,
                    reason=f"graduated to entity {entity.pk}", actor=actor)
    if before == MemoryStatus.CANDIDATE:
        review_withdraw(kind="memory", target_ids=[memory.pk], workspace_id=memory.workspace_id,
                        reason=f"graduated to entity {entity.pk}", actor=actor)
    return graduation


@transaction.atomic
def graduation_accept(*, graduation: Graduation, actor: Actor) -> Graduation:
    graduation = Graduation.objects.select_for_update(no_key=True).get(pk=graduation.pk)
    if graduation.status != GraduationStatus.PENDING:
        raise _decided(graduation)
    return memory_graduate(memory=graduation.memory, actor=actor, signal=graduation.signal, graduation=graduation)


@transaction.atomic
def graduation_reject(*, graduation: Graduation, actor: Actor, note: str = "") -> Graduation:
    refuse_secrets(note=note)
    graduation = Graduation.objects.select_for_update(no_key=True).get(pk=graduation.pk)
    if graduation.status != GraduationStatus.PENDING:
        raise _decided(graduation)
    graduation.status, graduation.decided_by, graduation.decided_at = GraduationStatus.REJECTED, actor.user, timezone.now()
    graduation.save(update_fields=["status", "decided_by", "decided_at"])
    audit_record(workspace=graduation.workspace, actor=actor, verb="graduation.reject", target=graduation,
                 data={"memory": graduation.memory_id, "signal": graduation.signal, "note": note})
    return graduation


def _decided(graduation: Graduation) -> Conflict:
    who = graduation.decided_by.get_username() if graduation.decided_by else None
    return Conflict(f"This graduation was already decided ({graduation.status}).",
                    details={"status": graduation.status, "decided_by": who})
