from django.conf import settings
from django.contrib.postgres.fields import ArrayField
from django.db import models
from django.utils import timezone

from core.models import Workspace


class EntityStatus(models.TextChoices):
    CANDIDATE = "candidate"
    ACTIVE = "active"
    SUPERSEDED = "superseded"
    INVALID = "invalid"


class Entity(models.Model):
    """Someone or something the workspace knows about. Kinds come from entities.kinds."""

    workspace = models.ForeignKey(Workspace, on_delete=models.CASCADE, related_name="entities")
    kind = models.CharField(max_length=40, default="person")
    name = models.CharField(max_length=300)
    aliases = ArrayField(models.CharField(max_length=300), default=list, blank=True)
    description = models.TextField(blank=True)
    status = models.CharField(max_length=16, choices=EntityStatus.choices, default=EntityStatus.ACTIVE)
    confidence = models.FloatField(default=1.0)
    created_at = models.DateTimeField(default=timezone.now)
    updated_at = models.DateTimeField(default=timezone.now)

    class Meta:
        verbose_name_plural = "entities"
        indexes = [models.Index(fields=["workspace", "kind", "name"], name="entity_ws_kind_name")]
        constraints = [
            models.CheckConstraint(condition=models.Q(confidence__gte=0, confidence__lte=1), name="entity_confidence_0_1"),
        ]

    def __str__(self) -> str:
        return f"{self.name} ({self.kind})"


class IdentityConfidence(models.TextChoices):
    CONFIRMED = "confirmed"
    SUGGESTED = "suggested"
    INFERRED = "inferred"


class Identity(models.Model):
    """One channel handle -> exactly one entity (seed 002: primary key on channel+channel_id;
    relinking is unlink + link, never an automatic merge)."""

    workspace = models.ForeignKey(Workspace, on_delete=models.CASCADE, related_name="identities")
    entity = models.ForeignKey(Entity, on_delete=models.CASCADE, related_name="identities")
    channel = models.CharField(max_length=40)
    channel_id = models.CharField(max_length=255)
    display_name = models.CharField(max_length=300, blank=True)
    confidence = models.CharField(max_length=16, choices=IdentityConfidence.choices, default=IdentityConfidence.CONFIRMED)
    verified_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    verified_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        verbose_name_plural = "identities"
        constraints = [
            models.UniqueConstraint(fields=["workspace", "channel", "channel_id"], name="identity_unique_handle"),
        ]

    def __str__(self) -> str:
        return f"{self.channel}:{self.channel_id} → {self.entity_id}"
