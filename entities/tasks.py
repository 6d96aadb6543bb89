from __future__ import annotations

from celery import shared_task

from core.models import Workspace
from entities import services


@shared_task(name="entities.suggest_links", acks_late=True)
def suggest_links() -> int:
    """Beat: propose identity links in every workspace, for people to accept or reject."""
    return sum(services.link_suggestions_scan(workspace=workspace) for workspace in Workspace.objects.all())


@shared_task(name="entities.embed_pending", acks_late=True)
def embed_pending() -> int:
    """Beat: entity cards and relationships changed outside the worker's processing (the
    API, the dashboard, merges) get their embedding."""
    return services.entities_embed_all()
