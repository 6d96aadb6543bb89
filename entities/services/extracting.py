"""Rule-based extraction from new interactions (entities.extraction, pure) turned into
candidates: profile values about the sender and relationships from the sender to the
things it names. Everything lands as a candidate for a person to decide; nothing here
changes what is current."""

from __future__ import annotations

from entities.extraction import extract_profile, extract_relationships
from entities.kinds import PREDICATES, all_kinds, is_who_kind
from entities.models import Entity, EntityEvidence, EntityStatus, RelationshipStatus
from entities.services.profiles import profile_candidate_add
from entities.services.relationships import relationship_add


def _object_entity(sender: Entity, name: str, kind: str, interaction, quote: str) -> Entity:
    """The entity a message names: an existing one with that name or alias, else a new
    candidate entity, with the message as its evidence."""
    kind = kind if kind in all_kinds() else "fact"
    existing = (Entity.objects.filter(workspace_id=sender.workspace_id, merged_into__isnull=True, name__iexact=name).first()
                or Entity.objects.filter(workspace_id=sender.workspace_id, merged_into__isnull=True,
                                         aliases__contains=[name]).first())
    entity = existing or Entity.objects.create(workspace_id=sender.workspace_id, kind=kind, name=name[:300],
                                               status=EntityStatus.CANDIDATE, confidence=0.5)
    EntityEvidence.objects.get_or_create(entity=entity, interaction=interaction, defaults={"quote": quote[:2000]})
    return entity


def interactions_extract(interactions) -> None:
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
            obj = _object_entity(sender, candidate.object_name, candidate.object_kind, interaction, candidate.quote)
            if obj.pk == sender.pk:
                continue
            relationship_add(
                subject=sender, predicate=candidate.predicate, object=obj, status=RelationshipStatus.CANDIDATE,
                confidence=candidate.confidence, evidence=interaction, quote=candidate.quote,
                source=f"rule:{candidate.rule}",
                valid_from=interaction.occurred_at if candidate.valid_from_hint == "now" else None,
            )
