from django.db import models
from django.utils import timezone

from core.models import Workspace
from entities.models.core import Entity


class RelationshipStatus(models.TextChoices):
    CANDIDATE = "candidate"
    ACTIVE = "active"
    SUPERSEDED = "superseded"
    INVALID = "invalid"


class Relationship(models.Model):
    """subject —predicate→ object. Two times: valid_from/valid_to say when it was true in the
    world; created_at says when we learned it. A contradicting relationship (a functional
    predicate with a new object) supersedes the old one, which keeps its history and gets a
    valid_to, instead of being overwritten."""

    workspace = models.ForeignKey(Workspace, on_delete=models.CASCADE, related_name="+")
    subject = models.ForeignKey(Entity, on_delete=models.CASCADE, related_name="relationships_out")
    predicate = models.CharField(max_length=60)
    object = models.ForeignKey(Entity, on_delete=models.CASCADE, related_name="relationships_in")
    status = models.CharField(max_length=16, choices=RelationshipStatus.choices, default=RelationshipStatus.ACTIVE)
    confidence = models.FloatField(default=1.0)
    valid_from = models.DateTimeField(null=True, blank=True)
    valid_to = models.DateTimeField(null=True, blank=True)
    supersedes = models.ForeignKey("self", null=True, blank=True, on_delete=models.SET_NULL, related_name="superseded_by")
    evidence = models.ForeignKey("conversations.Interaction", null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    quote = models.TextField(blank=True)
    source = models.CharField(max_length=120)
    created_at = models.DateTimeField(default=timezone.now)
    updated_at = models.DateTimeField(default=timezone.now)

    class Meta:
        indexes = [
            models.Index(fields=["workspace", "subject", "predicate"], name="rel_ws_subject_pred"),
            models.Index(fields=["workspace", "object"], name="rel_ws_object"),
        ]
        constraints = [
            models.CheckConstraint(condition=~models.Q(subject=models.F("object")), name="relationship_not_self"),
            models.CheckConstraint(condition=models.Q(confidence__gte=0, confidence__lte=1), name="relationship_confidence_0_1"),
            models.CheckConstraint(
                condition=models.Q(valid_to__isnull=True) | models.Q(valid_from__isnull=True) | models.Q(valid_to__gte=models.F("valid_from")),
                name="relationship_valid_range",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.subject_id} -{self.predicate}-> {self.object_id} ({self.status})"
