"""One delivery attempt: POST the signed payload, record what came back, and say whether
to try again (webhooks.policy decides). The task (webhooks.tasks.deliver) calls this and
schedules the retry.

No transaction is open during the request: it may take up to the timeout, and a row lock
held that long would stall the dashboard. Before sending, a short transaction moves the
delivery's `next_attempt_at` past the request's timeout (a lease), so the beat sweep does
not send it a second time meanwhile. Delivery is at least once: a worker killed after the
POST and before the record sends it again, with the same X-Mnemo-Delivery id."""

from __future__ import annotations

import time
from datetime import timedelta

import httpx
from django.conf import settings
from django.db import transaction
from django.utils import timezone

from webhooks import policy, selectors, signing
from webhooks.models import MAX_ERROR_CHARS, DeliveryStatus, WebhookDelivery

LEASE_MARGIN_SECONDS = 60


def _lease(delivery_id: int) -> WebhookDelivery | None:
    """The pending delivery, leased to this attempt; None when there is nothing to send
    (delivered or failed already, deleted, not due, or another worker holds it now)."""
    with transaction.atomic():
        # Not due yet: a duplicate task (the sweep's and a retry's) or one while another
        # attempt holds the lease; the task that is due will send it.
        due = timezone.now() + timedelta(seconds=1)
        delivery = (WebhookDelivery.objects.select_for_update(skip_locked=True, of=("self",))
                    .select_related("endpoint")
                    .filter(pk=delivery_id, status=DeliveryStatus.PENDING, next_attempt_at__lte=due).first())
        if delivery is None:
            return None
        if not delivery.endpoint.active:
            delivery.status, delivery.last_error = DeliveryStatus.FAILED, "The endpoint was deactivated."
            delivery.save(update_fields=["status", "last_error"])
            return None
        lease = settings.MNEMO_WEBHOOK_TIMEOUT_SECONDS + LEASE_MARGIN_SECONDS
        delivery.next_attempt_at = timezone.now() + timedelta(seconds=lease)
        delivery.save(update_fields=["next_attempt_at"])
        return delivery


def _send(delivery: WebhookDelivery) -> tuple[int | None, str, str | None]:
    """(status code or None, error, Retry-After header)."""
    body = signing.body_of(delivery.payload)
    headers = signing.headers(secret=delivery.endpoint.secret, event=delivery.event, event_id=str(delivery.event_id),
                              timestamp=int(time.time()), body=body)
    try:
        response = httpx.post(delivery.endpoint.url, content=body, headers=headers,
                              timeout=settings.MNEMO_WEBHOOK_TIMEOUT_SECONDS, follow_redirects=False)
    except httpx.TimeoutException:
        return None, f"Timed out after {settings.MNEMO_WEBHOOK_TIMEOUT_SECONDS:g} s.", None
    except httpx.HTTPError as exc:
        return None, f"{type(exc).__name__}: {exc}", None
    if 200 <= response.status_code < 300:
        return response.status_code, "", None
    # The status line only: the receiver's body may hold anything, and it is not ours to keep.
    return response.status_code, f"HTTP {response.status_code} {response.reason_phrase}".strip(), \
        response.headers.get("Retry-After")


def delivery_attempt(*, delivery_id: int) -> policy.Verdict | None:
    """Send a pending delivery once. Returns the verdict (`retry` carries the delay the
    caller waits before the next attempt), or None when there was nothing to send."""
    delivery = _lease(delivery_id)
    if delivery is None:
        return None
    status_code, error, retry_after = _send(delivery)
    now = timezone.now()
    with transaction.atomic():
        row = WebhookDelivery.objects.select_for_update(of=("self",)).filter(pk=delivery_id).first()
        if row is None or row.status != DeliveryStatus.PENDING:
            return None  # deleted with its endpoint meanwhile
        row.attempts += 1
        verdict = policy.verdict(
            status_code=status_code, attempt=row.attempts, max_attempts=settings.MNEMO_WEBHOOK_MAX_ATTEMPTS,
            retry_after=policy.retry_after_seconds(retry_after, now),
            base=settings.MNEMO_WEBHOOK_BACKOFF_SECONDS, cap=settings.MNEMO_WEBHOOK_BACKOFF_CAP_SECONDS)
        row.last_status_code, row.last_error = status_code, error[:MAX_ERROR_CHARS]
        if verdict.outcome == "delivered":
            row.status, row.delivered_at = DeliveryStatus.DELIVERED, now
        elif verdict.outcome == "failed":
            row.status = DeliveryStatus.FAILED
        else:
            row.next_attempt_at = now + timedelta(seconds=verdict.delay)
        row.save(update_fields=["attempts", "last_status_code", "last_error", "status", "delivered_at",
                                "next_attempt_at"])
    return verdict


def deliveries_requeue_lost() -> list[int]:
    """Pending deliveries over a minute late (their task was lost), made due now, so
    that the next sweep leaves them alone while the tasks enqueued for them wait."""
    with transaction.atomic():
        ids = selectors.deliveries_lost()
        WebhookDelivery.objects.filter(pk__in=ids, status=DeliveryStatus.PENDING).update(next_attempt_at=timezone.now())
    return ids
