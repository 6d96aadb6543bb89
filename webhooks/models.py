from __future__ import annotations

import uuid

from django.conf import settings
from django.db import models
from django.utils import timezone

from core.models import Workspace
from core.sealing import SealedCharField

MAX_ERROR_CHARS = 1000


class WebhookEndpoint(models.Model):
    """Where a workspace's events are POSTed. `secret` signs each request (HMAC-SHA256);
    it is generated here, shown whole once (on creation and rotation), masked afterwards."""

    workspace = models.ForeignKey(Workspace, on_delete=models.CASCADE, related_name="webhook_endpoints")
    url = models.CharField(max_length=2000)
    events = models.JSONField(default=list, help_text='Event names (webhooks/events.py), or ["*"] for all.')
    secret = SealedCharField()  # encrypted at rest (core.sealing); generated, 43 characters
    active = models.BooleanField(default=True)
    description = models.CharField(max_length=500, blank=True)
    created_at = models.DateTimeField(default=timezone.now)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )

    class Meta:
        ordering = ["-created_at", "-id"]
        indexes = [models.Index(fields=["workspace", "active"], name="webhook_ws_active")]
        constraints = [
            models.CheckConstraint(condition=models.Q(url__regex=r"^[hH][tT][tT][pP][sS]?://"), name="webhook_url_http"),
        ]

    def __str__(self) -> str:
        return self.url

    @property
    def secret_hint(self) -> str:
        return f"…{self.secret[-4:]}" if self.secret else ""


class DeliveryStatus(models.TextChoices):
    PENDING = "pending", "Pending"
    DELIVERED = "delivered", "Delivered"
    FAILED = "failed", "Failed"


class WebhookDelivery(models.Model):
    """One event for one endpoint, and what its attempts got. A replay is a new row with
    the same payload and event_id (receivers deduplicate on X-Mnemo-Delivery)."""

    endpoint = models.ForeignKey(WebhookEndpoint, on_delete=models.CASCADE, related_name="deliveries")
    event = models.CharField(max_length=60)
    event_id = models.UUIDField(default=uuid.uuid4)
    payload = models.JSONField()
    status = models.CharField(max_length=16, choices=DeliveryStatus.choices, default=DeliveryStatus.PENDING)
    attempts = models.PositiveIntegerField(default=0)
    last_status_code = models.PositiveSmallIntegerField(null=True, blank=True)
    last_error = models.TextField(blank=True)
    next_attempt_at = models.DateTimeField(default=timezone.now)
    delivered_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        verbose_name_plural = "webhook deliveries"
        ordering = ["-created_at", "-id"]
        indexes = [
            models.Index(fields=["endpoint", "-created_at"], name="delivery_endpoint_recent"),
            # The beat sweep: pending deliveries whose task was lost.
            models.Index(fields=["next_attempt_at"], name="delivery_pending_due",
                         condition=models.Q(status="pending")),
        ]
        constraints = [
            models.CheckConstraint(condition=models.Q(status__in=[s.value for s in DeliveryStatus]),
                                   name="delivery_status_valid"),
        ]

    def __str__(self) -> str:
        return f"{self.event} → {self.endpoint_id} ({self.status})"
