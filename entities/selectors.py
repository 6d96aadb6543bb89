"""Reads for entities, identities, profiles and relationships."""

from __future__ import annotations

from datetime import datetime

from django.contrib.postgres.search import TrigramSimilarity
from django.db.models import F, Func, Q, QuerySet, TextField, Value

from core.models import Workspace
from entities.models import (
    Entity,
    EntityMerge,
    Identity,
    LinkSuggestion,
    ProfileStatus,
    ProfileValue,
    Relationship,
    RelationshipStatus,
)


def entity_list(*, workspace: Workspace, q: str | None = None, kind: str | None = None, status: str | None = None,
                include_merged: bool = False) -> QuerySet[Entity]:
    qs = Entity.objects.filter(workspace=workspace)
    if not include_merged:
        qs = qs.filter(merged_into__isnull=True)
    if kind:
        qs = qs.filter(kind=kind)
    if status:
        qs = qs.filter(status=status)
    if q:
        # Substring on names and aliases, plus trigram similarity for typos ("Carolin").
        qs = qs.annotate(
            similarity=TrigramSimilarity("name", q),
            alias_text=Func(F("aliases"), Value(" "), function="array_to_string", output_field=TextField()),
        ).filter(Q(name__icontains=q) | Q(alias_text__icontains=q) | Q(similarity__gt=0.3)).order_by("-similarity", "name", "id")
        return qs
    return qs.order_by("name", "id")


def entity_get(*, workspace: Workspace, entity_id: int) -> Entity:
    return Entity.objects.get(workspace=workspace, pk=entity_id)


def identities_of(*, entity: Entity) -> list[Identity]:
    return list(Identity.objects.filter(entity=entity).order_by("channel", "channel_id"))


def identity_get(*, workspace: Workspace, identity_id: int) -> Identity:
    return Identity.objects.select_related("entity").get(workspace=workspace, pk=identity_id)


def profile_current(*, entity: Entity) -> list[ProfileValue]:
    """The current value of each key: the active row that no active row supersedes."""
    return profile_current_of(entity_ids=[entity.pk]).get(entity.pk, [])


def profile_current_of(*, entity_ids: list[int]) -> dict[int, list[ProfileValue]]:
    """profile_current of several entities in one query: entity id -> its current values."""
    rows = (ProfileValue.objects.filter(entity_id__in=entity_ids, status=ProfileStatus.ACTIVE,
                                        superseded_by__isnull=True)
            .order_by("entity_id", "key", "-created_at", "-id"))
    current: dict[int, dict[str, ProfileValue]] = {}
    for row in rows:
        current.setdefault(row.entity_id, {}).setdefault(row.key, row)
    return {entity_id: list(values.values()) for entity_id, values in current.items()}


def profile_history(*, entity: Entity, key: str | None = None) -> list[ProfileValue]:
    qs = ProfileValue.objects.filter(entity=entity)
    if key:
        qs = qs.filter(key=key)
    return list(qs.order_by("key", "created_at", "id"))


def profile_value_get(*, workspace: Workspace, value_id: int) -> ProfileValue:
    return ProfileValue.objects.select_related("entity").get(workspace=workspace, pk=value_id)


def relationships_for(*, entity: Entity, as_of: datetime | None = None, known_at: datetime | None = None,
                      include_candidates: bool = False) -> list[Relationship]:
    """The entity's relationships (either end). With `as_of`: those true at that time
    (valid time); with `known_at`: only what had been learned by then (transaction time).
    Without `as_of`, superseded ones are left out: they are the past."""
    return relationships_of(entity_ids=[entity.pk], as_of=as_of, known_at=known_at,
                            include_candidates=include_candidates)


def relationships_of(*, entity_ids: list[int], as_of: datetime | None = None, known_at: datetime | None = None,
                     include_candidates: bool = False) -> list[Relationship]:
    """relationships_for of several entities in one query (each relationship once)."""
    qs = (Relationship.objects.filter(Q(subject_id__in=entity_ids) | Q(object_id__in=entity_ids))
          .select_related("subject", "object"))
    statuses = [RelationshipStatus.ACTIVE]
    if include_candidates:
        statuses.append(RelationshipStatus.CANDIDATE)
    if as_of is not None:
        statuses.append(RelationshipStatus.SUPERSEDED)
        qs = qs.filter(Q(valid_from__isnull=True) | Q(valid_from__lte=as_of)).filter(
            Q(valid_to__isnull=True) | Q(valid_to__gt=as_of))
    if known_at is not None:
        qs = qs.filter(created_at__lte=known_at)
    return list(qs.filter(status__in=statuses).order_by("predicate", "created_at", "id"))


def relationships_past(*, entity: Entity, limit: int = 20) -> list[Relationship]:
    """The entity's superseded relationships, most recently ended first."""
    return list(Relationship.objects.filter(Q(subject=entity) | Q(object=entity), status=RelationshipStatus.SUPERSEDED)
                .select_related("subject", "object").order_by("-valid_to")[:limit])


def relationship_get(*, workspace: Workspace, relationship_id: int) -> Relationship:
    return Relationship.objects.select_related("subject", "object").get(workspace=workspace, pk=relationship_id)


def link_suggestions(*, workspace: Workspace, status: str | None = "pending") -> QuerySet[LinkSuggestion]:
    qs = LinkSuggestion.objects.filter(workspace=workspace).select_related("identity__entity", "entity")
    if status:
        qs = qs.filter(status=status)
    return qs.order_by("-score", "id")


def link_suggestions_for(*, entity: Entity) -> list[LinkSuggestion]:
    """Pending suggestions that would link a handle of this entity, or link one to it."""
    return list(link_suggestions(workspace=entity.workspace)
                .filter(Q(entity=entity) | Q(identity__entity=entity)))


def link_suggestion_get(*, workspace: Workspace, suggestion_id: int) -> LinkSuggestion:
    return LinkSuggestion.objects.get(workspace=workspace, pk=suggestion_id)


def merge_get(*, workspace: Workspace, merge_id: int) -> EntityMerge:
    return EntityMerge.objects.get(workspace=workspace, pk=merge_id)


def merges_of(*, entity: Entity) -> list[EntityMerge]:
    return list(EntityMerge.objects.filter(Q(source=entity) | Q(target=entity)).order_by("-merged_at"))


def embedding_pending_count(workspace: Workspace) -> int:
    """For /api/v1/status: entity cards and relationships still waiting for an embedding."""
    return (Entity.objects.filter(workspace=workspace, embedding__isnull=True, merged_into__isnull=True).count()
            + Relationship.objects.filter(workspace=workspace, embedding__isnull=True).count())
