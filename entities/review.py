"""The review kinds the entities app owns (review.registry): candidate entities,
relationships, profile values and identity-link suggestions. Each handler changes entity
rows through entities.services only."""

from __future__ import annotations

from django.contrib.postgres.search import TrigramSimilarity

from core.services import Actor
from entities import extraction, services
from entities.models import (
    Entity,
    EntityEvidence,
    EntityStatus,
    LinkSuggestion,
    ProfileStatus,
    ProfileValue,
    Relationship,
    RelationshipStatus,
    SuggestionStatus,
)
from review.registry import Description, Kind, waiting


def _span(content: str, quote: str) -> tuple[int, int] | None:
    if not quote:
        return None
    start = content.find(quote)
    return (start, start + len(quote)) if start >= 0 else None


def _grouped(rows, workspace_of) -> list[tuple[int, list]]:
    grouped: dict[int, list] = {}
    for row in rows:
        grouped.setdefault(workspace_of(row), []).append(row)
    return list(grouped.items())


# --- entities ---------------------------------------------------------------------------------

def _entity(workspace_id: int, target_id: int) -> Entity:
    return waiting(Entity.objects.filter(workspace_id=workspace_id), target_id, "entity",
                   state=lambda e: f"merged into entity {e.merged_into_id}" if e.merged_into_id else e.status)


def _describe_entity(entity: Entity) -> Description:
    evidence = EntityEvidence.objects.select_related("interaction").filter(entity=entity).order_by("id").first()
    text = entity.name + (f" — {entity.description}" if entity.description and entity.description != entity.name else "")
    return Description(
        text=text, item_type=entity.kind,
        source_interaction_id=evidence.interaction_id if evidence else None,
        span=_span(evidence.interaction.content, evidence.quote) if evidence else None,
        entity_id=entity.pk, rule="entities.extract", confidence=entity.confidence,
        proposal={"name": entity.name, "kind": entity.kind, "description": entity.description},
    )


def _approve_entity(entity: Entity, actor: Actor, note: str, changes: dict) -> dict:
    if changes:
        services.entity_update(entity=entity, actor=actor, name=changes.get("name"),
                               description=changes.get("description"))
    services.entity_approve(entity=entity, actor=actor, note=note)
    return {"entity": entity.pk}


def _reject_entity(entity: Entity, actor: Actor, note: str) -> dict:
    services.entity_reject(entity=entity, actor=actor, note=note)
    return {"entity": entity.pk}


def _merge_entity(entity: Entity, into_id: int, actor: Actor, note: str) -> dict:
    from core.errors import NotFound

    into = Entity.objects.filter(workspace_id=entity.workspace_id, pk=into_id, merged_into__isnull=True).first()
    if into is None:
        raise NotFound("No such entity to merge into in this workspace.")
    merge = services.entity_merge(source=entity, target=into, actor=actor)
    return {"entity": entity.pk, "into": into.pk, "merge": merge.pk}


def _decide_entities(workspace, ids: list[int], actor: Actor, approve: bool, note: str) -> dict[int, dict]:
    decided = services.entities_decide(workspace=workspace, entity_ids=ids, actor=actor, approve=approve, note=note)
    return {pk: {"entity": pk} for pk in decided}


# Names alike enough to offer a merge (trigram similarity): "Helix" ~ "Helix editor" 0.46,
# "Helix" ~ "Hex" 0.25.
SIMILAR_MIN_NAME = 0.4


def _similar_entities(entity: Entity, limit: int) -> list[dict]:
    rows = (Entity.objects.filter(workspace_id=entity.workspace_id, merged_into__isnull=True,
                                  status__in=[EntityStatus.ACTIVE, EntityStatus.CANDIDATE])
            .exclude(pk=entity.pk).filter(name__trigram_similar=entity.name)
            .annotate(similarity=TrigramSimilarity("name", entity.name)).filter(similarity__gte=SIMILAR_MIN_NAME)
            .order_by("-similarity")[:limit])
    return [{"id": e.pk, "text": f"{e.name} ({e.kind})", "status": e.status, "type": e.kind, "what": "entity",
             "score": round(e.similarity, 3), "basis": "name"} for e in rows]


def _pending_entities(workspace_id: int | None) -> list[tuple[int, list]]:
    rows = Entity.objects.filter(status=EntityStatus.CANDIDATE, merged_into__isnull=True)
    if workspace_id is not None:
        rows = rows.filter(workspace_id=workspace_id)
    return _grouped(rows.order_by("id"), lambda e: e.workspace_id)


# --- relationships ------------------------------------------------------------------------------

def _relationship(workspace_id: int, target_id: int) -> Relationship:
    return waiting(Relationship.objects.select_related("subject", "object").filter(workspace_id=workspace_id),
                   target_id, "relationship")


def _describe_relationship(rel: Relationship) -> Description:
    return Description(
        text=f"{rel.subject.name} —{rel.predicate.replace('_', ' ')}→ {rel.object.name}", item_type=rel.predicate,
        source_interaction_id=rel.evidence_id, span=_span(rel.evidence.content, rel.quote) if rel.evidence_id else None,
        entity_id=rel.subject_id, rule=rel.source, confidence=rel.confidence,
        proposal={"subject": rel.subject.name, "object": rel.object.name, "object_id": rel.object_id,
                  "valid_from": rel.valid_from.isoformat() if rel.valid_from else None},
    )


def _approve_relationship(rel: Relationship, actor: Actor, note: str, changes: dict) -> dict:
    services.relationship_set_status(relationship=rel, status=RelationshipStatus.ACTIVE, actor=actor)
    return {"relationship": rel.pk}


def _reject_relationship(rel: Relationship, actor: Actor, note: str) -> dict:
    services.relationship_set_status(relationship=rel, status=RelationshipStatus.INVALID, actor=actor)
    return {"relationship": rel.pk}


def _pending_relationships(workspace_id: int | None) -> list[tuple[int, list]]:
    rows = Relationship.objects.select_related("subject", "object", "evidence").filter(status=RelationshipStatus.CANDIDATE)
    if workspace_id is not None:
        rows = rows.filter(workspace_id=workspace_id)
    return _grouped(rows.order_by("id"), lambda r: r.workspace_id)


# --- profile values --------------------------------------------------------------------------------

def _profile_value(workspace_id: int, target_id: int) -> ProfileValue:
    return waiting(ProfileValue.objects.select_related("entity").filter(workspace_id=workspace_id), target_id,
                   "profile value")


def _describe_profile_value(value: ProfileValue) -> Description:
    return Description(
        text=f"{value.entity.name}: {value.key} = {value.value}", item_type=value.key,
        source_interaction_id=value.evidence_id,
        span=_span(value.evidence.content, value.quote) if value.evidence_id else None,
        entity_id=value.entity_id, rule=value.source, confidence=value.confidence,
        proposal={"key": value.key, "value": value.value, "entity": value.entity.name},
    )


def _approve_profile_value(value: ProfileValue, actor: Actor, note: str, changes: dict) -> dict:
    if changes:
        # Rows are insert-only: the proposal is declined and the corrected value becomes current.
        services.profile_candidate_reject(value=value, actor=actor)
        row = services.profile_set(entity=value.entity, key=value.key, value=changes["value"], actor=actor,
                                   confidence=1.0, evidence=value.evidence, quote=value.quote, source=actor.label[:120])
        return {"value": row.pk, "replaces": value.pk}
    services.profile_candidate_approve(value=value, actor=actor)
    return {"value": value.pk}


def _reject_profile_value(value: ProfileValue, actor: Actor, note: str) -> dict:
    services.profile_candidate_reject(value=value, actor=actor)
    return {"value": value.pk}


def _pending_profile_values(workspace_id: int | None) -> list[tuple[int, list]]:
    rows = ProfileValue.objects.select_related("entity", "evidence").filter(status=ProfileStatus.CANDIDATE)
    if workspace_id is not None:
        rows = rows.filter(workspace_id=workspace_id)
    return _grouped(rows.order_by("id"), lambda v: v.workspace_id)


# --- identity links ---------------------------------------------------------------------------------

def _suggestion(workspace_id: int, target_id: int) -> LinkSuggestion:
    return waiting(LinkSuggestion.objects.select_related("identity__entity", "entity").filter(workspace_id=workspace_id),
                   target_id, "suggestion", pending=SuggestionStatus.PENDING)


def _describe_suggestion(suggestion: LinkSuggestion) -> Description:
    identity = suggestion.identity
    handle = f"{identity.channel}:{identity.channel_id}"
    shown = f" ({identity.display_name})" if identity.display_name else ""
    return Description(
        text=f"{handle}{shown}, now {identity.entity.name}, is the same as {suggestion.entity.name}?",
        item_type=identity.channel, entity_id=suggestion.entity_id, rule="identity.similarity",
        confidence=suggestion.score,
        proposal={"handle": handle, "from_entity": identity.entity.name, "from_entity_id": identity.entity_id,
                  "to_entity": suggestion.entity.name, "reasons": suggestion.reasons},
    )


def _accept_suggestion(suggestion: LinkSuggestion, actor: Actor, note: str, changes: dict) -> dict:
    merge = services.link_suggestion_accept(suggestion=suggestion, actor=actor)
    return {"suggestion": suggestion.pk, "merge": merge.pk if merge else None}


def _reject_suggestion(suggestion: LinkSuggestion, actor: Actor, note: str) -> dict:
    services.link_suggestion_reject(suggestion=suggestion, actor=actor)
    return {"suggestion": suggestion.pk}


def _pending_suggestions(workspace_id: int | None) -> list[tuple[int, list]]:
    rows = LinkSuggestion.objects.select_related("identity__entity", "entity").filter(status=SuggestionStatus.PENDING)
    if workspace_id is not None:
        rows = rows.filter(workspace_id=workspace_id)
    return _grouped(rows.order_by("id"), lambda s: s.workspace_id)


def _alive(model):
    def alive(ids: list[int]) -> set[int]:
        return set(model.objects.filter(pk__in=ids).values_list("pk", flat=True))

    return alive


# What the rules behind this app's items look for (review.why).
ENTITY_RULES = {
    **extraction.RULES,
    "entities.extract": "finds a person, place, organisation or thing named in a message that is not known yet",
    "identity.similarity": ("notices two channel identities that may be one person (the same email, alike names, "
                            "the same conversations)"),
}
# One wording for deciding an identity-link suggestion, in the queue and on the entity page.
LINK_ACCEPT_LABEL = "Same person: merge them"
LINK_REJECT_LABEL = "Different people"


def _entity_page(item) -> tuple[str, int] | None:
    """An entity item opens its entity; the others open the entity they are about."""
    if item.kind == "entity":
        return "entity", item.target_id
    return ("entity", item.entity_id) if item.entity_id else None


# The kinds this app owns, declared by its layer (entities/layer.py).
KINDS = (
    Kind(
        name="entity", label="Entity", load=_entity, describe=_describe_entity, approve=_approve_entity,
        reject=_reject_entity, edit_fields={"name": "The entity's name", "description": "What it is"},
        merge=_merge_entity, similar=_similar_entities, pending=_pending_entities, decide_many=_decide_entities,
        merge_effect=("The candidate becomes part of the existing entity: its name is kept there as an alias, and "
                      "its identities, messages, relationships, profile values and memories move to it. The entity "
                      "page can split the merge again."),
        alive=_alive(Entity), rules=ENTITY_RULES, page=_entity_page,
    ),
    Kind(
        name="relationship", label="Relationship", load=_relationship, describe=_describe_relationship,
        approve=_approve_relationship, reject=_reject_relationship, pending=_pending_relationships,
        alive=_alive(Relationship), rules=ENTITY_RULES, page=_entity_page,
    ),
    Kind(
        name="profile_value", label="Profile value", load=_profile_value, describe=_describe_profile_value,
        approve=_approve_profile_value, reject=_reject_profile_value, edit_fields={"value": "The value"},
        pending=_pending_profile_values, alive=_alive(ProfileValue), rules=ENTITY_RULES, page=_entity_page,
    ),
    Kind(
        name="identity_link", label="Identity link", load=_suggestion, describe=_describe_suggestion,
        approve=_accept_suggestion, reject=_reject_suggestion, pending=_pending_suggestions,
        approve_label=LINK_ACCEPT_LABEL, reject_label=LINK_REJECT_LABEL, alive=_alive(LinkSuggestion),
        rules=ENTITY_RULES, page=_entity_page,
    ),
)
