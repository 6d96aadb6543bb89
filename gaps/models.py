"""Capability gaps (DESIGN.md, gaps; seed 002's self-evolution loop): what people asked the
agents for that they could not do, with the evidence trail, counted once per interaction;
at the workspace's threshold a gap becomes a TODO."""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.utils import timezone
from pgvector.django import HnswIndex, VectorField

from core.models import Workspace

EMBEDDING_DIMENSIONS = 384


class GapStatus(models.TextChoices):
    DETECTED = "detected"
    TODO_CREATED = "todo_created"
    RESOLVED = "resolved"
    WONT_FIX = "wont_fix"


class GapRelevance(models.TextChoices):
    PRIMARY = "primary"  # the interaction that shows the gap: counted in the frequency
    SUPPORTING = "supporting"  # context: the request a refusal answered


class CapabilityGap(models.Model):
    workspace = models.ForeignKey(Workspace, on_delete=models.CASCADE, related_name="+")
    # Who asked first (an agent's explicit report names none): a person's gaps move with a
    # merge and go with an erasure when no other evidence is left.
    entity = models.ForeignKey("entities.Entity", null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    description = models.CharField(max_length=300)
    key = models.CharField(max_length=300)  # gaps.rules.need_key(description): exact dedup
    category = models.CharField(max_length=32, default="other")
    frequency = models.PositiveIntegerField(default=0)  # distinct primary interactions (or reports)
    status = models.CharField(max_length=16, choices=GapStatus.choices, default=GapStatus.DETECTED)
    confirmed = models.BooleanField(default=False)  # a person said it is real (the review queue)
    regression = models.BooleanField(default=False)  # a resolved gap that came back
    todo_ref = models.CharField(max_length=500, blank=True)  # "todo:<id>", an issue URL
    todo_created_at = models.DateTimeField(null=True, blank=True)
    issue_number = models.PositiveIntegerField(null=True, blank=True)  # in the configured tracker
    reason = models.TextField(blank=True)  # why it was dismissed or resolved
    decided_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL,
                                   related_name="+")
    decided_at = models.DateTimeField(null=True, blank=True)
    rule = models.CharField(max_length=64, blank=True)  # what found it first
    embedding = VectorField(dimensions=EMBEDDING_DIMENSIONS, null=True, blank=True)
    first_seen = models.DateTimeField(default=timezone.now)
    last_seen = models.DateTimeField(default=timezone.now)
    created_at = models.DateTimeField(default=timezone.now)
    updated_at = models.DateTimeField(default=timezone.now)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["workspace", "key"], name="gap_key_unique"),
            models.CheckConstraint(condition=~models.Q(description=""), name="gap_description_not_empty"),
        ]
        indexes = [
            models.Index(fields=["workspace", "status", "-frequency"], name="gap_workspace_status_freq"),
            models.Index(fields=["entity"], name="gap_entity"),
            HnswIndex(name="gap_embedding_hnsw", fields=["embedding"], m=16, ef_construction=64,
                      opclasses=["vector_cosine_ops"]),
        ]

    def __str__(self) -> str:
        return self.description


class GapEvidence(models.Model):
    """One interaction (or an agent's report) behind a gap, with the quoted span."""

    gap = models.ForeignKey(CapabilityGap, on_delete=models.CASCADE, related_name="evidence")
    # Null for an agent's explicit report made without an interaction id.
    interaction = models.ForeignKey("conversations.Interaction", null=True, blank=True, on_delete=models.CASCADE,
                                    related_name="+")
    relevance = models.CharField(max_length=16, choices=GapRelevance.choices, default=GapRelevance.PRIMARY)
    # Whose need it was (the person who asked): their erasure takes the whole occurrence,
    # the agent's refusal in their conversation included.
    entity = models.ForeignKey("entities.Entity", null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    quote = models.TextField(blank=True)
    start = models.PositiveIntegerField(null=True, blank=True)
    end = models.PositiveIntegerField(null=True, blank=True)
    rule = models.CharField(max_length=64, blank=True)
    reason = models.TextField(blank=True)  # the rule's or the LLM's words, or the agent's report
    reported_by = models.CharField(max_length=200, blank=True)  # an API key's label for reports
    occurred_at = models.DateTimeField(default=timezone.now)
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        verbose_name_plural = "gap evidence"
        constraints = [
            # Counted once per interaction: a second finding in the same message adds nothing.
            models.UniqueConstraint(fields=["gap", "interaction"], condition=models.Q(interaction__isnull=False),
                                    name="gap_evidence_once_per_interaction"),
        ]
        indexes = [
            models.Index(fields=["interaction"], name="gap_evidence_interaction"),
            models.Index(fields=["entity"], name="gap_evidence_entity"),
            models.Index(fields=["gap", "occurred_at"], name="gap_evidence_gap_time"),
        ]


class GapPolicy(models.Model):
    """Per workspace: how many occurrences make a TODO (seed 002: 3)."""

    workspace = models.OneToOneField(Workspace, on_delete=models.CASCADE, primary_key=True, related_name="+")
    todo_threshold = models.PositiveSmallIntegerField(default=3)
    updated_at = models.DateTimeField(default=timezone.now)

    class Meta:
        verbose_name_plural = "gap policies"
        constraints = [models.CheckConstraint(condition=models.Q(todo_threshold__gte=1), name="gap_threshold_positive")]


class GapScanCursor(models.Model):
    """How far a scan of the audit log has read (gaps.services.gaps_scan_failures)."""

    name = models.CharField(max_length=64, primary_key=True)
    last_event_id = models.BigIntegerField(default=0)
    updated_at = models.DateTimeField(default=timezone.now)
