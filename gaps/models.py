"""Capability gaps (DESIGN.md, gaps; seed 002's self-evolution loop): what people asked the
agents for that they could not do, with the evidence trail, counted once per interaction;
at the workspace's threshold a gap becomes a TODO."""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.utils import timezone
from pgvector.django import HnswIndex, VectorField

from core.models import Workspace
from core.sealing import SealedCharField

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


class TrackerKind(models.TextChoices):
    GITHUB = "github", "GitHub"
    GITLAB = "gitlab", "GitLab"


class GapSink(models.Model):
    """Per workspace: the issue tracker its TODOs open issues in (issue 18: "through the
    workspace's configured sinks"). Precedence (gaps.sinks.tracker_for): a workspace with a
    row uses it, or no tracker at all while it is disabled; a workspace without one uses the
    deployment's MNEMO_TRACKER_* settings, when those name a kind.

    The token is write-only: set through the API or the dashboard, never shown back (only
    `token_hint`), never in an audit row, a log line or an error."""

    workspace = models.OneToOneField(Workspace, on_delete=models.CASCADE, primary_key=True, related_name="+")
    kind = models.CharField(max_length=16, choices=TrackerKind.choices)
    base_url = models.CharField(max_length=500)  # "https://api.github.com", a GitLab's root
    project = models.CharField(max_length=300)  # "owner/repo"; "group/sub/project" or a numeric id
    token = SealedCharField()  # encrypted at rest (core.sealing); at most 500 characters (gaps.sinks)
    enabled = models.BooleanField(default=True)
    updated_at = models.DateTimeField(default=timezone.now)
    updated_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL,
                                   related_name="+")

    class Meta:
        constraints = [
            models.CheckConstraint(condition=models.Q(kind__in=TrackerKind.values), name="gap_sink_kind_valid"),
            models.CheckConstraint(condition=models.Q(base_url__regex=r"^[hH][tT][tT][pP][sS]?://"),
                                   name="gap_sink_url_http"),
            models.CheckConstraint(condition=~models.Q(token=""), name="gap_sink_token_set"),
        ]

    def __str__(self) -> str:
        return f"{self.get_kind_display()} {self.project}"

    @property
    def token_hint(self) -> str:
        return token_hint(self.token)


def token_hint(token: str) -> str:
    """What is ever shown of a token: its last four characters, and only of a long one."""
    return f"…{token[-4:]}" if len(token) >= 16 else ("set" if token else "")


class SinkDeliveryStatus(models.TextChoices):
    PENDING = "pending", "Pending"
    DELIVERED = "delivered", "Delivered"
    FAILED = "failed", "Failed"
    SKIPPED = "skipped", "Skipped"  # nothing to do when its turn came (`last_error` says why)


class SinkAction(models.TextChoices):
    OPEN = "open", "Open the issue"
    CLOSE = "close", "Close the issue"
    REOPEN = "reopen", "Reopen the issue"
    TEST = "test", "Test the settings"


class SinkDelivery(models.Model):
    """One call (with its retries) to a workspace's issue tracker, and what came of it: the
    tracker's counterpart of a webhook delivery. `kind`, `base_url` and `project` say where
    it went; the token is never kept here."""

    workspace = models.ForeignKey(Workspace, on_delete=models.CASCADE, related_name="+")
    # A delivery outlives its gap (merged, erased): the log still says what was sent where.
    gap = models.ForeignKey(CapabilityGap, null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    action = models.CharField(max_length=8, choices=SinkAction.choices)
    note = models.TextField(blank=True)  # the comment a close or reopen adds
    source = models.CharField(max_length=16, blank=True)  # "workspace" | "deployment": whose settings
    kind = models.CharField(max_length=16, blank=True)
    base_url = models.CharField(max_length=500, blank=True)
    project = models.CharField(max_length=300, blank=True)
    status = models.CharField(max_length=16, choices=SinkDeliveryStatus.choices, default=SinkDeliveryStatus.PENDING)
    attempts = models.PositiveIntegerField(default=0)
    issue_number = models.PositiveIntegerField(null=True, blank=True)
    issue_url = models.CharField(max_length=500, blank=True)
    last_status_code = models.PositiveSmallIntegerField(null=True, blank=True)
    last_error = models.TextField(blank=True)
    created_at = models.DateTimeField(default=timezone.now)
    delivered_at = models.DateTimeField(null=True, blank=True)
    # Set by the worker sending it (gaps.sinks.issue_deliver), cleared when it is done: two
    # workers handed the same delivery (a retry and a redelivered task) send it once.
    claimed_until = models.DateTimeField(null=True, blank=True)

    class Meta:
        verbose_name_plural = "sink deliveries"
        ordering = ["-created_at", "-id"]
        indexes = [
            models.Index(fields=["workspace", "-created_at"], name="sink_delivery_recent"),
            models.Index(fields=["gap", "action"], name="sink_delivery_gap"),
        ]
        constraints = [
            models.CheckConstraint(condition=models.Q(status__in=SinkDeliveryStatus.values),
                                   name="sink_delivery_status_valid"),
            models.CheckConstraint(condition=models.Q(action__in=SinkAction.values), name="sink_delivery_action_valid"),
        ]

    def __str__(self) -> str:
        return f"{self.action} → {self.project or '?'} ({self.status})"


class CensoredRefusal(models.Model):
    """Issue 18: "not a gap: a refusal for policy reasons the team chose (a censor blocked
    it: link the censor instead)". An agent's refusal whose request an active censor of the
    workspace covers (memory.services.censors_matching, the API's censor check), linked to
    that censor instead of counted as a gap. Only refusals seen after the censor existed are
    linked: a gap found before its censor was created stays as it is (people resolve or
    dismiss it)."""

    workspace = models.ForeignKey(Workspace, on_delete=models.CASCADE, related_name="+")
    censor = models.ForeignKey("memory.Memory", on_delete=models.CASCADE, related_name="+")  # the censor's memory
    interaction = models.ForeignKey("conversations.Interaction", on_delete=models.CASCADE, related_name="+")
    request = models.ForeignKey("conversations.Interaction", null=True, blank=True, on_delete=models.CASCADE,
                                related_name="+")  # the message it answered, when found
    entity = models.ForeignKey("entities.Entity", null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    description = models.CharField(max_length=300)  # what was asked for
    quote = models.TextField(blank=True)  # the refusal's words
    start = models.PositiveIntegerField(null=True, blank=True)
    end = models.PositiveIntegerField(null=True, blank=True)
    rule = models.CharField(max_length=64, blank=True)
    score = models.FloatField(default=0.0)  # how well the censor matched (as /censors/check scores it)
    occurred_at = models.DateTimeField(default=timezone.now)
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["-occurred_at", "-id"]
        constraints = [
            models.UniqueConstraint(fields=["censor", "interaction"], name="censored_refusal_once"),
        ]
        indexes = [
            models.Index(fields=["workspace", "censor", "-occurred_at"], name="censored_refusal_censor"),
            models.Index(fields=["entity"], name="censored_refusal_entity"),
        ]

    def __str__(self) -> str:
        return self.description
