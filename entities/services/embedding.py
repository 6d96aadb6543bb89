"""Embeddings of entity cards and relationships, so that recall can find them by meaning
(context.retrieval). Background work only: requests never embed (DESIGN.md). A trigger
clears an embedding when what it was made from changes (migration 0003); this embeds
whatever has none."""

from __future__ import annotations

from django.db import transaction

from entities import texts
from entities.models import Entity, Relationship


def entity_card(entity: Entity) -> str:
    """What recall shows (and embeds) for an entity: name, kind, aliases, description."""
    return texts.card(entity.name, entity.kind, entity.aliases, entity.description)


def relationship_text(rel: Relationship) -> str:
    """"Caroline works at Acme": the ends' names around the predicate's words."""
    return texts.relationship(rel.subject.name, rel.predicate, rel.object.name)


def entities_embed(*, workspace_id: int | None = None, batch_size: int = 64) -> int:
    """Embed up to `batch_size` entity cards and as many relationships that have no
    embedding (of one workspace, or any), in one model call. Entities merged into another
    are left out (recall never shows them; once split back they are picked up). Rows
    another worker holds are skipped."""
    from core.providers import get_embedder

    with transaction.atomic():
        entities = Entity.objects.select_for_update(no_key=True, skip_locked=True).filter(embedding__isnull=True,
                                                                             merged_into__isnull=True)
        relationships = (Relationship.objects.select_for_update(no_key=True, skip_locked=True, of=("self",))
                         .select_related("subject", "object").filter(embedding__isnull=True))
        if workspace_id is not None:
            entities = entities.filter(workspace_id=workspace_id)
            relationships = relationships.filter(workspace_id=workspace_id)
        picked_entities = list(entities.order_by("id")[:batch_size])
        picked_relationships = list(relationships.order_by("id")[:batch_size])
        texts = [entity_card(e) for e in picked_entities] + [relationship_text(r) for r in picked_relationships]
        if not texts:
            return 0
        vectors = iter(get_embedder().embed(texts))
        for row in (*picked_entities, *picked_relationships):
            row.embedding = next(vectors)
        # Only the embedding column: the triggers that clear it watch the others.
        Entity.objects.bulk_update(picked_entities, ["embedding"])
        Relationship.objects.bulk_update(picked_relationships, ["embedding"])
    return len(texts)


def entities_embed_all(*, workspace_id: int | None = None) -> int:
    done = 0
    while (batch := entities_embed(workspace_id=workspace_id)) > 0:
        done += batch
    return done



def interactions_embed_entities(interactions) -> None:
    """Processor: the cards and relationships the extraction just made (or changed) in the
    interactions' workspaces."""
    for workspace_id in sorted({i.workspace_id for i in interactions}):
        entities_embed_all(workspace_id=workspace_id)
