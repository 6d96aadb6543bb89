"""The read side's own rows: every context pack served (to explain and replay it) and the
concept graph that recall expands queries through (DESIGN.md, context; seed 001)."""

import uuid

from django.db import models
from django.utils import timezone

from core.models import ApiKey, Workspace


class PackLog(models.Model):
    """A context pack as it was served: what was in it, with which scores, what was
    dropped and why. Insert-only (a database trigger): a log that can be edited explains
    nothing."""

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    workspace = models.ForeignKey(Workspace, on_delete=models.CASCADE, related_name="+")
    api_key = models.ForeignKey(ApiKey, null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    actor_label = models.CharField(max_length=200, blank=True)
    query = models.TextField()
    params = models.JSONField(default=dict)
    as_of = models.DateTimeField(null=True, blank=True)
    budget_tokens = models.PositiveIntegerField()
    tokens_used = models.PositiveIntegerField()
    sections = models.JSONField(default=list)
    warnings = models.JSONField(default=list)
    text = models.TextField(blank=True)
    # The entity the ranking followed although the query named nobody (the bridge:
    # context.services.Ranking.followed), or null. An id, as params["entity"] is: the log
    # keeps what was served; erasure deletes the packs that followed the erased entity.
    followed_entity_id = models.BigIntegerField(null=True, blank=True)
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        indexes = [models.Index(fields=["workspace", "-created_at"], name="packlog_ws_created")]


class ConceptLink(models.Model):
    """Hebbian co-occurrence between two concepts of a workspace (a < b): strengthened each
    time they appear together in an interaction, decayed nightly (context.services.concept_links_decay):
    recall reads the stored, decayed weight."""

    workspace = models.ForeignKey(Workspace, on_delete=models.CASCADE, related_name="+")
    a = models.CharField(max_length=80)
    b = models.CharField(max_length=80)
    weight = models.FloatField(default=0.0)
    count = models.PositiveIntegerField(default=0)
    updated_at = models.DateTimeField(default=timezone.now)
    # The time `weight` refers to: the last decay step, unless strengthened since (updated_at).
    decayed_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["workspace", "a", "b"], name="concept_link_unique"),
            models.CheckConstraint(condition=models.Q(a__lt=models.F("b")), name="concept_link_ordered"),
        ]
        indexes = [models.Index(fields=["workspace", "b"], name="concept_link_b")]
