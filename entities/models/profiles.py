from django.conf import settings
from django.db import models
from django.utils import timezone

from core.models import Workspace
from entities.models.core import Entity


class ProfileStatus(models.TextChoices):
    CANDIDATE = "candidate"
    ACTIVE = "active"
    REJECTED = "rejected"


class ProfileValue(models.Model):
    """One version of one keyed fact about an entity ("email", "employer", "location",
    "timezone", …). Insert-only (seed 002: profiles are never updated in place): a new value
    supersedes the current one; a database trigger refuses any change to what a row says.
    Only its review state (status, supersedes, decided_*) may be set once, when a person
    approves or rejects a candidate. The current value of a key is the active row that no
    active row supersedes."""

    workspace = models.ForeignKey(Workspace, on_delete=models.CASCADE, related_name="+")
    entity = models.ForeignKey(Entity, on_delete=models.CASCADE, related_name="profile_values")
    key = models.CharField(max_length=80)
    value = models.TextField()
    confidence = models.FloatField(default=1.0)
    status = models.CharField(max_length=16, choices=ProfileStatus.choices, default=ProfileStatus.ACTIVE)
    supersedes = models.OneToOneField("self", null=True, blank=True, on_delete=models.PROTECT, related_name="superseded_by")
    evidence = models.ForeignKey("conversations.Interaction", null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    quote = models.TextField(blank=True, help_text="The span of the evidence that states the value.")
    source = models.CharField(max_length=120, help_text='"api", "user:<name>", "rule:<name>" or "llm:<prompt version>"')
    created_at = models.DateTimeField(default=timezone.now)
    decided_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    decided_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["created_at", "id"]
        indexes = [models.Index(fields=["entity", "key", "status"], name="profile_entity_key_status")]
        constraints = [
            models.CheckConstraint(condition=models.Q(confidence__gte=0, confidence__lte=1), name="profile_confidence_0_1"),
            models.CheckConstraint(condition=~models.Q(value=""), name="profile_value_not_empty"),
            # The same candidate from the same message is proposed once.
            models.UniqueConstraint(fields=["entity", "key", "value", "evidence"], name="profile_unique_evidence"),
        ]

    def __str__(self) -> str:
        return f"{self.key}={self.value!r} ({self.status})"
