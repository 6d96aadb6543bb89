from __future__ import annotations

from celery import shared_task
from django.db import OperationalError

from core.concurrency import is_retryable_conflict
from webhooks.delivery import deliveries_requeue_lost, delivery_attempt


@shared_task(name="webhooks.deliver", bind=True, acks_late=True, max_retries=None)
def deliver(self, delivery_id: int) -> str | None:
    """Send one delivery; when the answer says waiting may help, try again later. The
    attempts are counted on the row (bounded by MNEMO_WEBHOOK_MAX_ATTEMPTS), not by
    Celery, so a task re-enqueued by the sweep continues the same count."""
    try:
        verdict = delivery_attempt(delivery_id=delivery_id)
    except OperationalError as exc:
        if not is_retryable_conflict(exc):
            raise
        raise self.retry(exc=exc, countdown=min(60, 2 ** self.request.retries))
    if verdict is not None and verdict.outcome == "retry":
        raise self.retry(countdown=verdict.delay)
    return verdict.outcome if verdict else None


@shared_task(name="webhooks.requeue_lost", acks_late=True)
def requeue_lost() -> int:
    """Beat: pending deliveries whose task was lost (a killed worker, a broker restart)."""
    ids = deliveries_requeue_lost()
    for delivery_id in ids:
        deliver.delay(delivery_id)
    return len(ids)
