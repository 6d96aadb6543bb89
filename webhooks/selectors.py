"""Reads for webhook endpoints and their deliveries."""

from __future__ import annotations

from datetime import timedelta

from django.db.models import QuerySet
from django.utils import timezone

from core.models import Workspace
from webhooks.models import DeliveryStatus, WebhookDelivery, WebhookEndpoint

# A pending delivery this far past its time has lost its task (README, "Webhooks").
LOST_AFTER = timedelta(minutes=1)


def webhook_list(*, workspace: Workspace) -> QuerySet[WebhookEndpoint]:
    return WebhookEndpoint.objects.filter(workspace=workspace).select_related("created_by")


def webhook_get(*, workspace: Workspace, webhook_id: int) -> WebhookEndpoint:
    """Raises WebhookEndpoint.DoesNotExist (a 404) for another workspace's id too."""
    return webhook_list(workspace=workspace).get(pk=webhook_id)


def delivery_list(*, endpoint: WebhookEndpoint) -> QuerySet[WebhookDelivery]:
    return WebhookDelivery.objects.filter(endpoint=endpoint).order_by("-created_at", "-id")


def deliveries_recent(*, workspace: Workspace, limit: int = 25) -> list[WebhookDelivery]:
    return list(WebhookDelivery.objects.filter(endpoint__workspace=workspace).select_related("endpoint")
                .order_by("-created_at", "-id")[:limit])


def delivery_get(*, workspace: Workspace, delivery_id: int) -> WebhookDelivery:
    return WebhookDelivery.objects.select_related("endpoint").get(endpoint__workspace=workspace, pk=delivery_id)


def deliveries_lost(*, limit: int = 500) -> list[int]:
    """Pending deliveries whose next attempt is over a minute late: their task was lost."""
    return list(WebhookDelivery.objects.filter(status=DeliveryStatus.PENDING,
                                               next_attempt_at__lt=timezone.now() - LOST_AFTER)
                .order_by("next_attempt_at").values_list("pk", flat=True)[:limit])
