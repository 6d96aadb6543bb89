from django.contrib.postgres.indexes import GinIndex
from django.contrib.postgres.search import SearchVector, SearchVectorField
from django.db import models
from django.db.models import Value
from django.db.models.functions import Replace
from django.utils import timezone
from pgvector.django import HnswIndex, VectorField

from core.models import Workspace
from entities.models.core import EMBEDDING_DIMENSIONS, Entity


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
    # For recall: "subject predicate object" embedded by the worker; a trigger clears it when
    # either end or the predicate changes (a merge moves an end), or an end is renamed.
    embedding = VectorField(dimensions=EMBEDDING_DIMENSIONS, null=True, blank=True)
    # The ends' names live on the entities: the words here are the predicate's and the quote's.
    search = models.GeneratedField(
        expression=SearchVector(Replace("predicate", Value("_"), Value(" ")), "quote", config="english"),
        output_field=SearchVectorField(),
        db_persist=True,
    )

    class Meta:
        indexes = [
            models.Index(fields=["workspace", "subject", "predicate"], name="rel_ws_subject_pred"),
            models.Index(fields=["workspace", "object"], name="rel_ws_object"),
            GinIndex(fields=["search"], name="relationship_search_gin"),
            models.Index(fields=["workspace"], condition=models.Q(embedding__isnull=True),
                         name="relationship_to_embed"),
            HnswIndex(name="relationship_embedding_hnsw", fields=["embedding"], m=16, ef_construction=64,
                      opclasses=["vector_cosine_ops"]),
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
