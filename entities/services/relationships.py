"""Relationships between entities, with two times (seed 000/002): valid_from/valid_to say
when it was true, created_at when we learned it. A contradiction supersedes."""

from __future__ import annotations

from datetime import datetime

from django.core.exceptions import ValidationError
from django.db import transaction
from django.utils import timezone

from core.errors import Conflict
from core.safe_text import refuse_secrets
from core.services import SYSTEM, Actor, audit_record
from entities.kinds import PREDICATES, is_functional
from entities.models import Entity, Relationship, RelationshipStatus


def _validate(subject: Entity, predicate: str, obj: Entity, valid_from, valid_to, confidence: float) -> None:
    refuse_secrets(predicate=predicate)
    if predicate not in PREDICATES:
        raise ValidationError({"predicate": f"Unknown predicate {predicate!r}; known: {', '.join(PREDICATES)}."})
    if subject.pk == obj.pk:
        raise ValidationError({"object": "An entity cannot relate to itself."})
    if subject.workspace_id != obj.workspace_id:
        raise ValidationError({"object": "Both ends must belong to the same workspace."})
    if valid_from and valid_to and valid_to < valid_from:
        raise ValidationError({"valid_to": "valid_to lies before valid_from."})
    if not 0 <= confidence <= 1:
        raise ValidationError({"confidence": "Confidence lies between 0 and 1."})


def _supersede_contradictions(rel: Relationship, actor: Actor) -> None:
    """For a functional predicate, the subject's other active object stops being true when
    the new one starts (or, without a date, when we learned of it)."""
    if not is_functional(rel.predicate):
        return
    ends = rel.valid_from or rel.created_at
    others = (Relationship.objects.select_for_update(no_key=True)
              .filter(subject=rel.subject, predicate=rel.predicate, status=RelationshipStatus.ACTIVE)
              .exclude(pk=rel.pk).exclude(object=rel.object))
    for old in others:
        old.status = RelationshipStatus.SUPERSEDED
        if old.valid_to is None or old.valid_to > ends:
            old.valid_to = max(ends, old.valid_from) if old.valid_from else ends
        old.updated_at = timezone.now()
        old.save(update_fields=["status", "valid_to", "updated_at"])
        if rel.supersedes_id is None:
            rel.supersedes = old
            rel.save(update_fields=["supersedes"])
        audit_record(workspace=rel.subject.workspace, actor=actor, verb="relationship.supersede", target=old,
                     data={"by": rel.pk})


@transaction.atomic
def relationship_add(*, subject: Entity, predicate: str, object: Entity, actor: Actor = SYSTEM,
                     valid_from: datetime | None = None, valid_to: datetime | None = None, confidence: float = 1.0,
                     status: str = RelationshipStatus.ACTIVE, evidence=None, quote: str = "",
                     source: str = "api") -> Relationship:
    _validate(subject, predicate, object, valid_from, valid_to, confidence)
    if status not in (RelationshipStatus.ACTIVE, RelationshipStatus.CANDIDATE):
        raise ValidationError({"status": "A new relationship is active or a candidate."})
    same = Relationship.objects.filter(subject=subject, predicate=predicate, object=object,
                                       status__in=[RelationshipStatus.ACTIVE, RelationshipStatus.CANDIDATE]).first()
    if same is not None:
        return same
    rel = Relationship.objects.create(workspace_id=subject.workspace_id, subject=subject, predicate=predicate,
                                      object=object, status=status, confidence=confidence, valid_from=valid_from,
                                      valid_to=valid_to, evidence=evidence, quote=quote, source=source)
    audit_record(workspace=subject.workspace, actor=actor, verb="relationship.add", target=rel,
                 data={"subject": subject.pk, "predicate": predicate, "object": object.pk, "status": status})
    if status == RelationshipStatus.ACTIVE:
        _supersede_contradictions(rel, actor)
    else:
        from review.services import review_open

        review_open(kind="relationship", target=rel, workspace_id=rel.workspace_id)
    return rel


@transaction.atomic
def relationship_set_status(*, relationship: Relationship, status: str, actor: Actor) -> Relationship:
    """Approve a candidate (→ active, superseding a contradiction) or mark one invalid."""
    rel = Relationship.objects.select_for_update(no_key=True).select_related("subject").get(pk=relationship.pk)
    allowed = {RelationshipStatus.CANDIDATE: {RelationshipStatus.ACTIVE, RelationshipStatus.INVALID},
               RelationshipStatus.ACTIVE: {RelationshipStatus.INVALID},
               # It may turn out never to have been true, even if it was later superseded.
               RelationshipStatus.SUPERSEDED: {RelationshipStatus.INVALID}}
    if status not in allowed.get(rel.status, set()):
        raise Conflict(f"A {rel.status} relationship cannot become {status}.")
    rel.status, rel.updated_at = status, timezone.now()
    rel.save(update_fields=["status", "updated_at"])
    audit_record(workspace=rel.subject.workspace, actor=actor, verb=f"relationship.{status}", target=rel)
    if status == RelationshipStatus.ACTIVE:
        _supersede_contradictions(rel, actor)
    return rel


def relationships_withdraw_review(*, relationship_ids, workspace_id: int, reason: str) -> None:
    from review.services import review_withdraw

    review_withdraw(kind="relationship", target_ids=relationship_ids, workspace_id=workspace_id, reason=reason)
