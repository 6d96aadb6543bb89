from __future__ import annotations

from celery import shared_task

from entities import services


@shared_task(name="entities.embed_pending", acks_late=True)
def embed_pending() -> int:
    """Beat: entity cards and relationships changed outside the worker's processing (the
    API, the dashboard, merges) get their embedding."""
    return services.entities_embed_all()
