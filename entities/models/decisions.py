from django.db import models
from django.utils import timezone
from pgvector.django import HnswIndex, VectorField

from core.models import Workspace
from entities.models.core import Entity


class DecisionOutcome(models.TextChoices):
    SUCCESS = "success"
    PARTIAL = "partial"
    FAILURE = "failure"


class DecisionRecord(models.Model):
    """Seed 003's decision memory on a `decision` entity: what was decided between which
    options, with what stated confidence, the deliberation, and later how it turned out —
    so stated confidence can be calibrated against outcomes."""

    entity = models.OneToOneField(Entity, on_delete=models.CASCADE, primary_key=True, related_name="decision")
    workspace = models.ForeignKey(Workspace, on_delete=models.CASCADE, related_name="+")
    description = models.TextField()
    options = models.JSONField(default=list)
    chosen = models.TextField(blank=True)
    stated_confidence = models.FloatField()
    outcome = models.CharField(max_length=16, choices=DecisionOutcome.choices, blank=True)
    outcome_result = models.TextField(blank=True)
    outcome_at = models.DateTimeField(null=True, blank=True)
    embedding = VectorField(dimensions=384)
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        indexes = [
            HnswIndex(name="decision_embedding_hnsw", fields=["embedding"], m=16, ef_construction=64,
                      opclasses=["vector_cosine_ops"]),
            models.Index(fields=["workspace", "-created_at"], name="decision_ws_created"),
        ]
        constraints = [
            models.CheckConstraint(condition=models.Q(stated_confidence__gte=0, stated_confidence__lte=1),
                                   name="decision_confidence_0_1"),
        ]


class DecisionThought(models.Model):
    decision = models.ForeignKey(DecisionRecord, on_delete=models.CASCADE, related_name="thoughts")
    text = models.TextField()
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["created_at", "id"]
