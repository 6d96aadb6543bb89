from __future__ import annotations

from celery import shared_task

from core.providers import ProviderError
from gaps import services


@shared_task(name="gaps.embed_gaps", bind=True, acks_late=True, max_retries=5)
def embed_gaps(self) -> int:
    """Embed gaps stored without a vector (agents' reports, renames) and fold each into a
    gap of the same need said in other words. Idempotent: embedded gaps are skipped."""
    try:
        done = 0
        while (batch := services.gaps_embed_pending()) > 0:
            done += batch
        return done
    except ProviderError as exc:
        if not exc.retryable:
            raise
        raise self.retry(exc=exc, countdown=min(300, 5 * 2 ** self.request.retries))
