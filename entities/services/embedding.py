"""Embeddings of entity cards and relationships, so that recall can find them by meaning
(context.retrieval). Background work only: requests never embed (DESIGN.md). A trigger
clears an embedding when what it was made from changes (migration 0003); this embeds
whatever has none."""

from __future__ import annotations

from django.db import transaction

from core import providers
from core.selectors import workspaces_importing
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
    are left out (recall never shows them; once split back they are picked up). Returns
    how many were written.

    The model runs with no lock held (it may be a remote service); a short transaction
    then writes each vector where the row still has none and still reads as what was
    embedded. A row another worker holds, or one edited meanwhile, waits for the next run."""
    # A workspace being imported is left alone until its last batch (core.archive).
    entities = Entity.objects.filter(embedding__isnull=True, merged_into__isnull=True).exclude(
        workspace_id__in=workspaces_importing())
    relationships = Relationship.objects.select_related("subject", "object").filter(embedding__isnull=True).exclude(
        workspace_id__in=workspaces_importing())
    if workspace_id is not None:
        entities = entities.filter(workspace_id=workspace_id)
        relationships = relationships.filter(workspace_id=workspace_id)
    wanted = {("entity", e.pk): entity_card(e) for e in entities.order_by("id")[:batch_size]}
    wanted |= {("relationship", r.pk): relationship_text(r) for r in relationships.order_by("id")[:batch_size]}
    if not wanted:
        return 0
    vectors = dict(zip(wanted, providers.get_embedder().embed(list(wanted.values()))))
    with transaction.atomic():
        ids = {kind: [pk for k, pk in wanted if k == kind] for kind in ("entity", "relationship")}
        fresh_entities = Entity.objects.select_for_update(no_key=True, skip_locked=True).filter(
            pk__in=ids["entity"], embedding__isnull=True, merged_into__isnull=True).order_by("id")
        fresh_relationships = (Relationship.objects.select_for_update(no_key=True, skip_locked=True, of=("self",))
                               .select_related("subject", "object")
                               .filter(pk__in=ids["relationship"], embedding__isnull=True).order_by("id"))
        done_entities = [e for e in fresh_entities if entity_card(e) == wanted[("entity", e.pk)]]
        done_relationships = [r for r in fresh_relationships if relationship_text(r) == wanted[("relationship", r.pk)]]
        for kind, rows in (("entity", done_entities), ("relationship", done_relationships)):
            for row in rows:
                row.embedding = vectors[(kind, row.pk)]
        # Only the embedding column: the triggers that clear it watch the others.
        Entity.objects.bulk_update(done_entities, ["embedding"])
        Relationship.objects.bulk_update(done_relationships, ["embedding"])
    return len(done_entities) + len(done_relationships)


def entities_embed_all(*, workspace_id: int | None = None) -> int:
    done = 0
    while (batch := entities_embed(workspace_id=workspace_id)) > 0:
        done += batch
    return done


def interactions_embed_entities(interactions) -> None:
    """After the pipeline's write (core.layers): the cards and relationships the extraction
    just made (or changed) in the interactions' workspaces. A crash before it leaves them
    to the entities.embed_pending beat task, and /status counts them meanwhile."""
    for workspace_id in sorted({i.workspace_id for i in interactions}):
        entities_embed_all(workspace_id=workspace_id)
