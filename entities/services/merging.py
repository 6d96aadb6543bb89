"""Merging two entities, and splitting them again. A merge moves the source's identities,
profile values, relationships and evidence, and every layer's rows about it (core.layers:
interactions and conversations, memories, review items) to the target, records every
moved id, and marks the source superseded; a split moves exactly those rows back.
Nothing merges by itself: a person asks for it."""

from __future__ import annotations

from django.core.exceptions import ValidationError
from django.db import connection, transaction
from django.utils import timezone

from core import layers
from core.errors import Conflict
from core.models import ApiKey
from core.services import SYSTEM, Actor, audit_record
from entities.models import Entity, EntityEvidence, EntityMerge, EntityStatus, Identity, ProfileValue, Relationship

def _relink_on() -> None:
    # The log and profiles are insert-only; a merge may re-point their entity_id only.
    with connection.cursor() as cursor:
        cursor.execute("SET LOCAL mnemo.relink = 'on'")


def _move(model, field: str, source: Entity, target: Entity, *, exclude: dict | None = None) -> list[int]:
    rows = model.objects.filter(**{field: source})
    if exclude:
        rows = rows.exclude(**exclude)
    ids = list(rows.values_list("pk", flat=True))
    model.objects.filter(pk__in=ids).update(**{field: target})
    return ids


def _moves(source: Entity, target: Entity) -> dict[str, list[int]]:
    moved = {
        "identities": _move(Identity, "entity", source, target),
        "profile_values": _move(ProfileValue, "entity", source, target),
        # A relationship between the two would become a self-relationship: it stays put.
        "relationships_out": _move(Relationship, "subject", source, target, exclude={"object": target}),
        "relationships_in": _move(Relationship, "object", source, target, exclude={"subject": target}),
        # Evidence the target already has for the same interaction stays with the source.
        "evidence": _move(EntityEvidence, "entity", source, target, exclude={
            "interaction_id__in": EntityEvidence.objects.filter(entity=target).values("interaction_id"),
        }),
        # Keys that write for the source agent write for the merged one (issue 20).
        "api_keys": _move(ApiKey, "agent", source, target),
    }
    return {**moved, **layers.move(source, target)}


# What a merge moved of entities' own rows: record key -> (model, field).
_FIELDS = {
    "identities": (Identity, "entity"), "profile_values": (ProfileValue, "entity"),
    "relationships_out": (Relationship, "subject"), "relationships_in": (Relationship, "object"),
    "evidence": (EntityEvidence, "entity"), "api_keys": (ApiKey, "agent"),
}


@transaction.atomic
def entity_merge(*, source: Entity, target: Entity, actor: Actor = SYSTEM) -> EntityMerge:
    if source.pk == target.pk:
        raise ValidationError({"target": "An entity cannot be merged into itself."})
    if source.workspace_id != target.workspace_id:
        raise ValidationError({"target": "Entities of different workspaces cannot be merged."})
    source, target = (Entity.objects.select_for_update(no_key=True).get(pk=pk) for pk in (source.pk, target.pk))
    if source.merged_into_id or target.merged_into_id:
        raise Conflict("One of these entities is already merged into another; split that merge first.")
    _relink_on()
    state = {"status": source.status, "confidence": source.confidence, "target_aliases": list(target.aliases)}
    moved = _moves(source, target)
    source.merged_into, source.status, source.updated_at = target, EntityStatus.SUPERSEDED, timezone.now()
    source.save(update_fields=["merged_into", "status", "updated_at"])
    names = [source.name, *source.aliases]
    target.aliases = [*target.aliases, *[n for n in names if n.casefold() not in {a.casefold() for a in [target.name, *target.aliases]}]]
    target.updated_at = timezone.now()
    target.save(update_fields=["aliases", "updated_at"])
    merge = EntityMerge.objects.create(workspace_id=source.workspace_id, source=source, target=target, moved=moved,
                                       source_state=state, merged_by=actor.user)
    audit_record(workspace=source.workspace, actor=actor, verb="entity.merge", target=merge,
                 data={"source": source.pk, "target": target.pk, "moved": {k: len(v) for k, v in moved.items()}})
    if state["status"] == EntityStatus.CANDIDATE:
        from review.services import review_withdraw

        review_withdraw(kind="entity", target_ids=[source.pk], workspace_id=source.workspace_id,
                        reason=f"merged into entity {target.pk}", actor=actor)
    return merge


@transaction.atomic
def entity_split(*, merge: EntityMerge, actor: Actor = SYSTEM) -> Entity:
    """Undo a merge: every row it moved goes back to the source, which becomes what it was."""
    merge = EntityMerge.objects.select_for_update().select_related("source", "target").get(pk=merge.pk)
    if merge.split_at is not None:
        raise Conflict("This merge was already split.")
    source, target = merge.source, merge.target
    _relink_on()
    for name, ids in merge.moved.items():
        if name in _FIELDS:
            model, field = _FIELDS[name]
            model.objects.filter(pk__in=ids).update(**{field: source})
    layers.restore(merge.moved, source)
    source.merged_into = None
    source.status = merge.source_state.get("status", EntityStatus.ACTIVE)
    source.confidence = merge.source_state.get("confidence", source.confidence)
    source.updated_at = timezone.now()
    source.save(update_fields=["merged_into", "status", "confidence", "updated_at"])
    target.aliases = merge.source_state.get("target_aliases", target.aliases)
    target.updated_at = timezone.now()
    target.save(update_fields=["aliases", "updated_at"])
    merge.split_at = timezone.now()
    merge.save(update_fields=["split_at"])
    audit_record(workspace=source.workspace, actor=actor, verb="entity.split", target=merge,
                 data={"source": source.pk, "target": target.pk})
    return source
