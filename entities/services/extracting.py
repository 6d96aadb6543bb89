"""Rule-based extraction from new interactions (entities.extraction, pure) turned into
candidates: profile values about the sender and relationships from the sender to the
things it names. Everything lands as a candidate for a person to decide; nothing here
changes what is current."""

from __future__ import annotations

from entities.extraction import extract_profile, extract_relationships
from entities.kinds import PREDICATES, is_who_kind
from entities.models import Entity, RelationshipStatus
from entities.services.entities import entity_propose
from entities.services.profiles import profile_candidate_add
from entities.services.relationships import relationship_add


def _object_entity(sender: Entity, name: str, kind: str, interaction, quote: str, rule: str) -> Entity:
    entity, _ = entity_propose(workspace_id=sender.workspace_id, kind=kind, name=name, evidence_ids=[interaction.pk],
                               quote=quote, rule=rule)
    return entity


def interactions_extract(interactions, drafts=None) -> None:
    """The entities layer's write (core.layers): it needs no prepare, the rules are pure
    and quick, so it reads the interactions as the claiming transaction sees them."""
    for interaction in interactions:
        sender = interaction.entity
        if interaction.direction == "system" or not is_who_kind(sender.kind):
            continue
        for candidate in extract_profile(interaction.content):
            profile_candidate_add(entity=sender, key=candidate.key, value=candidate.value,
                                  confidence=candidate.confidence, evidence=interaction, quote=candidate.quote,
                                  source=f"rule:{candidate.rule}")
        for candidate in extract_relationships(interaction.content):
            if not candidate.subject_is_speaker or candidate.predicate not in PREDICATES:
                continue
            obj = _object_entity(sender, candidate.object_name, candidate.object_kind, interaction, candidate.quote,
                                f"rule:{candidate.rule}")
            if obj.pk == sender.pk:
                continue
            relationship_add(
                subject=sender, predicate=candidate.predicate, object=obj, status=RelationshipStatus.CANDIDATE,
                confidence=candidate.confidence, evidence=interaction, quote=candidate.quote,
                source=f"rule:{candidate.rule}",
                valid_from=interaction.occurred_at if candidate.valid_from_hint == "now" else None,
            )
