from __future__ import annotations

from django.db.models import QuerySet

from core.errors import NotFound
from core.models import Workspace
from context import multihop
from context.models import PackLog
from entities.selectors import entity_name


def pack_get(*, workspace: Workspace, pack_id) -> PackLog:
    row = PackLog.objects.filter(workspace=workspace, pk=pack_id).first()
    if row is None:
        raise NotFound(f"Pack {pack_id} not found.")
    return row


def packs_recent(*, workspace: Workspace, limit: int = 20) -> list[PackLog]:
    return list(PackLog.objects.filter(workspace=workspace).order_by("-created_at")[:limit])


def packs_served(*, workspace: Workspace, actor: str | None = None, q: str | None = None) -> QuerySet[PackLog]:
    """The served packs log, newest first: by who asked (the actor's label) and by words
    of the query."""
    qs = PackLog.objects.filter(workspace=workspace).select_related("api_key__agent").order_by("-created_at", "-pk")
    if actor:
        qs = qs.filter(actor_label=actor)
    if q:
        qs = qs.filter(query__icontains=q)
    return qs


def pack_actors(*, workspace: Workspace, limit: int = 200) -> list[str]:
    """Who has been served packs here (the actors' labels), for the log's filter."""
    return list(PackLog.objects.filter(workspace=workspace).exclude(actor_label="").order_by("actor_label")
                .values_list("actor_label", flat=True).distinct()[:limit])


def followed(*, workspace_id: int, entity_id: int | None) -> dict | None:
    """The entity a ranking followed although the query named nobody (the bridge:
    context.services.Ranking.followed), as the API and the pack pages say it: its id, its
    name now (None if it is gone) and why it was followed. None when nothing was followed."""
    if entity_id is None:
        return None
    return {"entity_id": entity_id, "entity_name": entity_name(workspace_id=workspace_id, entity_id=entity_id),
            "reason": multihop.BRIDGE}
