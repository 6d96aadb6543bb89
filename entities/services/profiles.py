"""Versioned profiles (seed 002): a new value supersedes the current one; nothing is
updated in place. Candidates (extracted from interactions) wait for a person."""

from __future__ import annotations

from django.core.exceptions import ValidationError
from django.db import IntegrityError, transaction
from django.utils import timezone

from core.errors import Conflict
from core.safe_text import refuse_secrets
from core.services import SYSTEM, Actor, audit_record
from entities.models import Entity, ProfileStatus, ProfileValue

MAX_KEY = 80


def _current(entity: Entity, key: str) -> ProfileValue | None:
    return (ProfileValue.objects.filter(entity=entity, key=key, status=ProfileStatus.ACTIVE, superseded_by__isnull=True)
            .order_by("-created_at", "-id").first())


def _check(key: str, value: str, confidence: float) -> tuple[str, str]:
    refuse_secrets(key=key, value=value)
    key, value = key.strip().lower(), value.strip()
    if not key or len(key) > MAX_KEY or not key.replace("_", "").isalnum():
        raise ValidationError({"key": "A profile key is a short snake_case word, e.g. employer or timezone."})
    if not value:
        raise ValidationError({"value": "A profile value cannot be empty."})
    if not 0 <= confidence <= 1:
        raise ValidationError({"confidence": "Confidence lies between 0 and 1."})
    return key, value


def _lock(entity: Entity) -> Entity:
    # One writer per entity's profile at a time: "the current value" is read-then-write.
    return Entity.objects.select_for_update(no_key=True).get(pk=entity.pk)


@transaction.atomic
def profile_set(*, entity: Entity, key: str, value: str, actor: Actor = SYSTEM, confidence: float = 1.0,
                evidence=None, quote: str = "", source: str = "api") -> ProfileValue:
    """Make `value` the current value of `key`, superseding the previous one. Setting the
    value it already has changes nothing."""
    key, value = _check(key, value, confidence)
    entity = _lock(entity)
    current = _current(entity, key)
    if current is not None and current.value == value:
        return current
    row = ProfileValue.objects.create(workspace_id=entity.workspace_id, entity=entity, key=key, value=value,
                                      confidence=confidence, status=ProfileStatus.ACTIVE, supersedes=current,
                                      evidence=evidence, quote=quote, source=source,
                                      decided_by=actor.user, decided_at=timezone.now())
    audit_record(workspace=entity.workspace, actor=actor, verb="profile.set", target=row,
                 data={"entity": entity.pk, "key": key, "supersedes": current.pk if current else None})
    return row


def profile_candidate_add(*, entity: Entity, key: str, value: str, confidence: float, evidence, quote: str,
                          source: str) -> ProfileValue | None:
    """Propose a value found in an interaction. Returns None when it is already the current
    value or was proposed from the same interaction before."""
    key, value = _check(key, value, confidence)
    current = _current(entity, key)
    if current is not None and current.value.casefold() == value.casefold():
        return None
    try:
        with transaction.atomic():
            row = ProfileValue.objects.create(workspace_id=entity.workspace_id, entity=entity, key=key, value=value,
                                              confidence=confidence, status=ProfileStatus.CANDIDATE, evidence=evidence,
                                              quote=quote, source=source)
    except IntegrityError:
        return None
    from review.services import review_open

    review_open(kind="profile_value", target=row, workspace_id=entity.workspace_id)
    return row


@transaction.atomic
def profile_candidate_approve(*, value: ProfileValue, actor: Actor) -> ProfileValue:
    entity = _lock(value.entity)
    value = ProfileValue.objects.select_for_update(no_key=True).get(pk=value.pk)
    if value.status != ProfileStatus.CANDIDATE:
        raise Conflict(f"This value was already decided ({value.status}).")
    current = _current(entity, value.key)
    value.status = ProfileStatus.ACTIVE
    value.supersedes = current
    value.decided_by, value.decided_at = actor.user, timezone.now()
    value.save(update_fields=["status", "supersedes", "decided_by", "decided_at"])
    audit_record(workspace=entity.workspace, actor=actor, verb="profile.approve", target=value,
                 data={"entity": entity.pk, "key": value.key, "supersedes": current.pk if current else None})
    return value


@transaction.atomic
def profile_candidate_reject(*, value: ProfileValue, actor: Actor) -> ProfileValue:
    value = ProfileValue.objects.select_for_update(no_key=True).get(pk=value.pk)
    if value.status != ProfileStatus.CANDIDATE:
        raise Conflict(f"This value was already decided ({value.status}).")
    value.status = ProfileStatus.REJECTED
    value.decided_by, value.decided_at = actor.user, timezone.now()
    value.save(update_fields=["status", "decided_by", "decided_at"])
    audit_record(workspace=value.workspace, actor=actor, verb="profile.reject", target=value,
                 data={"entity": value.entity_id, "key": value.key})
    return value
