from django.conf import settings
from django.contrib.postgres.fields import ArrayField
from django.contrib.postgres.indexes import GinIndex
from django.contrib.postgres.search import SearchVector, SearchVectorField
from django.db import models
from django.utils import timezone
from pgvector.django import HnswIndex, VectorField

from core.models import Workspace

EMBEDDING_DIMENSIONS = 384


class EntityStatus(models.TextChoices):
    CANDIDATE = "candidate"
    ACTIVE = "active"
    SUPERSEDED = "superseded"
    INVALID = "invalid"


class Entity(models.Model):
    """Someone or something the workspace knows about. Kinds come from entities.kinds.
    Changes go through entities.services, which write the audit log."""

    workspace = models.ForeignKey(Workspace, on_delete=models.CASCADE, related_name="entities")
    kind = models.CharField(max_length=40, default="person")
    name = models.CharField(max_length=300)
    aliases = ArrayField(models.CharField(max_length=300), default=list, blank=True)
    description = models.TextField(blank=True)
    status = models.CharField(max_length=16, choices=EntityStatus.choices, default=EntityStatus.ACTIVE)
    confidence = models.FloatField(default=1.0)
    supersedes = models.ForeignKey("self", null=True, blank=True, on_delete=models.SET_NULL, related_name="superseded_by")
    merged_into = models.ForeignKey("self", null=True, blank=True, on_delete=models.SET_NULL, related_name="merged_from",
                                    help_text="Set while this entity is merged into another (undone by a split).")
    created_at = models.DateTimeField(default=timezone.now)
    updated_at = models.DateTimeField(default=timezone.now)
    # For recall: the card (entities.services.embedding.entity_card) embedded by the worker;
    # a trigger clears it when the name, kind, aliases or description change.
    embedding = VectorField(dimensions=EMBEDDING_DIMENSIONS, null=True, blank=True)
    search = models.GeneratedField(
        # The description's words only: a name is matched as the entity the query names
        # (the entity dimension); counted twice, every card would outrank what the person
        # said whenever a question mentions them.
        expression=SearchVector("description", config="english"),
        output_field=SearchVectorField(),
        db_persist=True,
    )

    class Meta:
        verbose_name_plural = "entities"
        indexes = [
            models.Index(fields=["workspace", "kind", "name"], name="entity_ws_kind_name"),
            GinIndex(fields=["name"], name="entity_name_trgm", opclasses=["gin_trgm_ops"]),
            GinIndex(fields=["search"], name="entity_search_gin"),
            models.Index(fields=["workspace"], condition=models.Q(embedding__isnull=True), name="entity_to_embed"),
            HnswIndex(name="entity_embedding_hnsw", fields=["embedding"], m=16, ef_construction=64,
                      opclasses=["vector_cosine_ops"]),
        ]
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


class EntityEvidence(models.Model):
    """An interaction that supports an entity existing (and the span that says so)."""

    entity = models.ForeignKey(Entity, on_delete=models.CASCADE, related_name="evidence")
    interaction = models.ForeignKey("conversations.Interaction", on_delete=models.CASCADE, related_name="+")
    quote = models.TextField(blank=True)
    added_at = models.DateTimeField(default=timezone.now)

    class Meta:
        verbose_name_plural = "entity evidence"
        constraints = [models.UniqueConstraint(fields=["entity", "interaction"], name="entity_evidence_unique")]


class SuggestionStatus(models.TextChoices):
    PENDING = "pending"
    ACCEPTED = "accepted"
    REJECTED = "rejected"


class LinkSuggestion(models.Model):
    """A proposed link of a channel identity to another entity (seed 002: suggest, don't
    assume). Accepting it is a person's decision; nothing here links or merges by itself."""

    workspace = models.ForeignKey(Workspace, on_delete=models.CASCADE, related_name="+")
    identity = models.ForeignKey(Identity, on_delete=models.CASCADE, related_name="suggestions")
    entity = models.ForeignKey(Entity, on_delete=models.CASCADE, related_name="link_suggestions")
    score = models.FloatField()
    reasons = models.JSONField(default=list)
    status = models.CharField(max_length=16, choices=SuggestionStatus.choices, default=SuggestionStatus.PENDING)
    decided_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    decided_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["identity", "entity"], name="link_suggestion_unique"),
            models.CheckConstraint(condition=models.Q(score__gte=0, score__lte=1), name="link_suggestion_score_0_1"),
        ]
        indexes = [models.Index(fields=["workspace", "status"], name="link_suggestion_ws_status")]


class EntityMerge(models.Model):
    """One merge of `source` into `target`, with everything it moved, so a split can put
    each row back exactly where it was."""

    workspace = models.ForeignKey(Workspace, on_delete=models.CASCADE, related_name="+")
    source = models.ForeignKey(Entity, on_delete=models.CASCADE, related_name="merges_out")
    target = models.ForeignKey(Entity, on_delete=models.CASCADE, related_name="merges_in")
    moved = models.JSONField(default=dict, help_text="table -> ids moved from source to target")
    source_state = models.JSONField(default=dict, help_text="the source's status and confidence before the merge")
    merged_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    merged_at = models.DateTimeField(default=timezone.now)
    split_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        indexes = [models.Index(fields=["workspace", "-merged_at"], name="entity_merge_ws_at")]
