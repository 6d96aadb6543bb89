"""Reads for entities, identities, profiles and relationships."""

from __future__ import annotations

from datetime import datetime
from typing import NamedTuple

from django.contrib.postgres.search import TrigramSimilarity
from django.db.models import Case, F, Func, Q, QuerySet, TextField, Value, When

from core.models import Workspace
from entities import texts
from entities.kinds import WHO_KINDS
from entities.models import (
    Entity,
    EntityMerge,
    EntityStatus,
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


AGENT_CHOICES = 20


def agent_choices(*, workspace: Workspace, q: str | None = None, limit: int = AGENT_CHOICES) -> list[Entity]:
    """Who an API key may write for (the keys page's picker): the workspace's who-kind
    entities still in use, agents first; with `q`, those whose names match it best."""
    qs = entity_list(workspace=workspace, q=q).filter(kind__in=list(WHO_KINDS)).filter(
        status__in=[EntityStatus.ACTIVE, EntityStatus.CANDIDATE])
    if not q:
        qs = qs.annotate(not_agent=Case(When(kind="agent", then=Value(0)), default=Value(1))).order_by(
            "not_agent", "name", "id")
    return list(qs[:limit])


def entity_get(*, workspace: Workspace, entity_id: int) -> Entity:
    return Entity.objects.get(workspace=workspace, pk=entity_id)


def entity_name(*, workspace_id: int, entity_id: int) -> str | None:
    """The entity's name, or None when the workspace has no such entity (any more)."""
    return Entity.objects.filter(workspace_id=workspace_id, pk=entity_id).values_list("name", flat=True).first()


def identities_of(*, entity: Entity) -> list[Identity]:
    return list(Identity.objects.filter(entity=entity).order_by("channel", "channel_id"))


IDENTITIES_SHOWN = 5


def identities_by_entity(*, entity_ids: list[int], limit: int = IDENTITIES_SHOWN) -> dict[int, list[Identity]]:
    """Each entity's channel identities (up to `limit`, confirmed first) in one query: what
    tells two entities of the same name apart in a list."""
    shown: dict[int, list[Identity]] = {}
    rows = Identity.objects.filter(entity_id__in=entity_ids).order_by("entity_id", "confidence", "channel", "channel_id")
    for row in rows:
        if len(shown.setdefault(row.entity_id, [])) < limit:
            shown[row.entity_id].append(row)
    return shown


MERGE_CHOICES = 20


def merge_choices(*, entity: Entity, q: str | None) -> list[Entity]:
    """The entities `entity` could be merged into, for the merge picker: the same workspace,
    not merged away, not itself; by name or alias when searched, else of its kind first."""
    rows = entity_list(workspace=entity.workspace_id, q=q).exclude(pk=entity.pk).exclude(
        status__in=[EntityStatus.SUPERSEDED, EntityStatus.INVALID])
    if not q:
        rows = rows.annotate(other_kind=Case(When(kind=entity.kind, then=Value(0)), default=Value(1))).order_by(
            "other_kind", "name", "id")
    return list(rows[:MERGE_CHOICES])


def profile_candidates(*, entity: Entity) -> list[ProfileValue]:
    """Profile values proposed for the entity and waiting for a person, oldest first."""
    return list(ProfileValue.objects.filter(entity=entity, status=ProfileStatus.CANDIDATE)
                .select_related("evidence").order_by("created_at", "id"))


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


class Fact(NamedTuple):
    """A current profile value or a relationship of an entity, as a context pack cites it."""

    kind: str  # "profile_value" | "relationship"
    id: int
    text: str  # "Caroline — employer: Acme" | "Caroline works at Acme"
    confidence: float
    status: str
    evidence_id: int | None
    external_id: str | None  # of the evidence


def facts_of(*, workspace_id: int, entity_ids: list[int], as_of: datetime | None = None) -> list[Fact]:
    """What a pack says about the entities a query names: per entity (by id), its current
    profile values (by key), then its relationships not listed yet (as relationships_of
    orders and filters them). The same rows as profile_current_of and relationships_of
    (tested), in two plain queries: building those through the ORM cost ~3 ms a pack."""
    from django.db import connection

    if not entity_ids:
        return []
    relationship_statuses = [RelationshipStatus.ACTIVE] + ([RelationshipStatus.SUPERSEDED] if as_of else [])
    with connection.cursor() as cursor:
        cursor.execute("""
            SELECT e.id, e.name, pv.id, pv.key, pv.value, pv.confidence, pv.evidence_id, i.external_id
            FROM entities_entity e
            JOIN LATERAL (
                SELECT DISTINCT ON (p.key) p.* FROM entities_profilevalue p
                WHERE p.entity_id = e.id AND p.status = %s
                  AND NOT EXISTS (SELECT 1 FROM entities_profilevalue n WHERE n.supersedes_id = p.id)
                ORDER BY p.key, p.created_at DESC, p.id DESC) pv ON true
            LEFT JOIN conversations_interaction i ON i.id = pv.evidence_id
            WHERE e.workspace_id = %s AND e.id = ANY(%s)
            ORDER BY e.id, pv.key""", [ProfileStatus.ACTIVE, workspace_id, list(entity_ids)])
        values = cursor.fetchall()
        cursor.execute("""
            SELECT r.id, s.name, r.predicate, o.name, r.confidence, r.status, r.evidence_id, i.external_id,
                   r.subject_id, r.object_id
            FROM entities_relationship r JOIN entities_entity s ON s.id = r.subject_id
                 JOIN entities_entity o ON o.id = r.object_id
                 LEFT JOIN conversations_interaction i ON i.id = r.evidence_id
            WHERE (r.subject_id = ANY(%(ids)s) OR r.object_id = ANY(%(ids)s)) AND r.status = ANY(%(statuses)s)
              AND (%(as_of)s::timestamptz IS NULL OR ((r.valid_from IS NULL OR r.valid_from <= %(as_of)s)
                                                   AND (r.valid_to IS NULL OR r.valid_to > %(as_of)s)))
              AND EXISTS (SELECT 1 FROM entities_entity w WHERE w.workspace_id = %(workspace)s
                          AND w.id IN (r.subject_id, r.object_id) AND w.id = ANY(%(ids)s))
            ORDER BY r.predicate, r.created_at, r.id""",
                       {"ids": list(entity_ids), "statuses": relationship_statuses, "as_of": as_of,
                        "workspace": workspace_id})
        relationships = cursor.fetchall()
    found = sorted({row[0] for row in values} | {end for row in relationships for end in row[8:10]}
                   & set(entity_ids))
    facts, listed = [], set()
    for entity_id in found:
        facts += [Fact("profile_value", pk, f"{name} — {key}: {value}", confidence, ProfileStatus.ACTIVE, evidence,
                       external) for owner, name, pk, key, value, confidence, evidence, external in values
                  if owner == entity_id]
        for pk, subject, predicate, object_, confidence, status, evidence, external, s_id, o_id in relationships:
            if entity_id in (s_id, o_id) and pk not in listed:
                listed.add(pk)
                facts.append(Fact("relationship", pk, texts.relationship(subject, predicate, object_), confidence,
                                  status, evidence, external))
    return facts


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


def entity_count(workspace: Workspace) -> int:
    """For the dashboard: entities, not counting those merged into another."""
    return Entity.objects.filter(workspace=workspace, merged_into__isnull=True).count()


def link_suggestion_pending_count(workspace: Workspace) -> int:
    return LinkSuggestion.objects.filter(workspace=workspace, status="pending").count()
