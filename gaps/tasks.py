from __future__ import annotations

from celery import shared_task

import trackers
from core.providers import ProviderError
from gaps import services, sinks


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


def _retry_later(task, exc: trackers.TrackerError):
    if not exc.retryable:
        raise exc
    countdown = exc.retry_after if exc.retry_after else min(600, 10 * 2 ** task.request.retries)
    raise task.retry(exc=exc, countdown=countdown)


@shared_task(name="gaps.deliver_issue", bind=True, acks_late=True, max_retries=8)
def deliver_issue(self, delivery_id: int) -> str | None:
    """Open, close or reopen a gap's issue in the workspace's tracker (gaps.sinks): one
    SinkDelivery, whose row says what came of each try. Idempotent: a delivery that is no
    longer pending is skipped, and so is opening an issue for a gap that has one."""
    try:
        delivery = sinks.issue_deliver(delivery_id=delivery_id, final=self.request.retries >= self.max_retries)
    except trackers.TrackerError as exc:
        _retry_later(self, exc)
    return delivery.status if delivery else None


@shared_task(name="gaps.scan_failures", acks_late=True)
def scan_failures() -> int:
    """Beat: failed decision and procedure outcomes become occurrences of gaps."""
    done = 0
    while (batch := services.gaps_scan_failures()) > 0:
        done += batch
    return done
