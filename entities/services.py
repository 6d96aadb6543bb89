"""Writes for entities and identities (the minimal part the interaction log needs; the
entities issue adds linking, merging, profiles and relationships)."""

from __future__ import annotations

from django.utils import timezone

from core.models import Workspace
from entities.models import Entity, Identity, IdentityConfidence


def identities_resolve(
    *, workspace: Workspace, handles: dict[tuple[str, str], tuple[str, str]]
) -> dict[tuple[str, str], Identity]:
    """The identity for each (channel, channel_id); an unknown handle becomes a new entity
    of the given kind with a confirmed identity for that one channel (DESIGN.md: links to
    other entities are only ever suggested, never made here).

    `handles` maps (channel, channel_id) -> (display name, kind). The caller holds the
    workspace's ingest lock, so two requests cannot create the same handle twice."""
    found = {
        (identity.channel, identity.channel_id): identity
        for identity in Identity.objects.filter(workspace=workspace).filter(
            channel__in={c for c, _ in handles}, channel_id__in={h for _, h in handles}
        ).select_related("entity")
        if (identity.channel, identity.channel_id) in handles
    }
    missing = [key for key in handles if key not in found]
    if not missing:
        return found
    now = timezone.now()
    entities = Entity.objects.bulk_create([
        Entity(workspace=workspace, kind=handles[key][1], name=handles[key][0] or key[1], created_at=now, updated_at=now)
        for key in missing
    ])
    identities = Identity.objects.bulk_create([
        Identity(
            workspace=workspace, entity=entity, channel=key[0], channel_id=key[1],
            display_name=handles[key][0], confidence=IdentityConfidence.CONFIRMED, created_at=now,
        )
        for key, entity in zip(missing, entities)
    ])
    for key, identity in zip(missing, identities):
        found[key] = identity
    return found
