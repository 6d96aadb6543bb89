"""Rule-based extraction from new interactions (entities.extraction, pure) turned into
candidates: profile values about the sender and relationships from the sender to the
things it names. Everything lands as a candidate for a person to decide; nothing here
changes what is current."""

from __future__ import annotations

from django.db import connection

from entities.extraction import extract_profile, extract_relationships
from entities.kinds import PREDICATES, is_who_kind
from entities.models import Entity, ProfileStatus, ProfileValue, Relationship, RelationshipStatus
from entities.services.entities import entity_propose
from entities.services.profiles import profile_candidate_add
from entities.services.relationships import relationship_add
from review.services import review_items_forget


def _object_entity(sender: Entity, name: str, kind: str, interaction, quote: str, rule: str) -> Entity:
    entity, _ = entity_propose(workspace_id=sender.workspace_id, kind=kind, name=name, evidence_ids=[interaction.pk],
                               quote=quote, rule=rule)
    return entity


def _proposed_before(subject: Entity, predicate: str, obj: Entity, interaction) -> bool:
    """The same relationship from the same message exists, whatever became of it: a rebuild
    (conversations.rebuild) derives it again, and a person's rejection must hold."""
    return Relationship.objects.filter(subject=subject, predicate=predicate, object=obj, evidence=interaction).exists()


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
            if obj.pk == sender.pk or _proposed_before(sender, candidate.predicate, obj, interaction):
                continue
            relationship_add(
                subject=sender, predicate=candidate.predicate, object=obj, status=RelationshipStatus.CANDIDATE,
                confidence=candidate.confidence, evidence=interaction, quote=candidate.quote,
                source=f"rule:{candidate.rule}",
                valid_from=interaction.occurred_at if candidate.valid_from_hint == "now" else None,
            )


def entities_forget_derived(workspace_id: int) -> dict[str, int]:
    """The entities layer's `reset` for a rebuild from the log (issue 19 part 5): the profile
    values and relationships the rules proposed that still wait for a person go, with their
    review items; decided ones stay (a rejected value is not proposed again: the same value
    from the same message is refused by profile_unique_evidence, a relationship by
    `_proposed_before`). Entities themselves stay: messages name their senders, and a
    proposed entity is found again by its name (entity_propose), decided or not."""
    with connection.cursor() as cursor:
        # Profile values are insert-only (the immutability trigger); forgetting an undecided
        # proposal is, like erasure, a delete on its own audited path (the rebuild's record).
        cursor.execute("SELECT set_config('mnemo.erasure', 'on', true)")
    values = ProfileValue.objects.filter(workspace_id=workspace_id, status=ProfileStatus.CANDIDATE,
                                         decided_by__isnull=True, source__startswith="rule:").delete()[0]
    with connection.cursor() as cursor:
        cursor.execute("SELECT set_config('mnemo.erasure', 'off', true)")
    relationships = Relationship.objects.filter(workspace_id=workspace_id, status=RelationshipStatus.CANDIDATE,
                                                source__startswith="rule:").delete()[0]
    items = review_items_forget(workspace_id=workspace_id, kinds=("profile_value", "relationship"))
    return {"profile values": values, "relationships": relationships, "entity review items": items}
