from django.conf import settings
from django.contrib.postgres.indexes import GinIndex, OpClass
from django.db import models
from django.db.models.functions import Upper
from django.utils import timezone

from core.models import Workspace


class ReviewStatus(models.TextChoices):
    PENDING = "pending"
    APPROVED = "approved"
    REJECTED = "rejected"
    # The target was decided or removed outside the queue (invalidated, merged away,
    # folded into a duplicate): nothing is left to decide.
    WITHDRAWN = "withdrawn"


class Decision(models.TextChoices):
    APPROVE = "approve"
    EDIT = "edit"  # edited, then approved
    MERGE = "merge"  # folded into an existing item
    BOTH = "both"  # a conflict where both were true at different times
    REJECT = "reject"


class Decided(models.Model):
    """Who decided a review row, when and why; when it opened."""

    decided_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL,
                                   related_name="+")
    decided_label = models.CharField(max_length=200, blank=True)
    decided_at = models.DateTimeField(null=True, blank=True)
    note = models.TextField(blank=True)
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        abstract = True


class ClaimStatus(models.TextChoices):
    PENDING = "pending"
    DECIDED = "decided"


class Claim(Decided):
    """What derivation found about one span of one interaction (DESIGN.md: a claim is
    reviewed once): the review items opened for it are its facets — a memory, an entity, a
    relationship, a profile value… — decided together on one card and through one API call
    (review.services.claim_decide). Which items share a claim is review.claims' rule.

    Items without a source interaction and conflicts are claims of their own (`solo`): the
    queue shows one card per claim, so every pending item has one. The claim is decided
    when none of its facets waits any more, however they were decided (the claim at once,
    or each facet through /api/v1/candidates)."""

    workspace = models.ForeignKey(Workspace, on_delete=models.CASCADE, related_name="+")
    source_interaction = models.ForeignKey("conversations.Interaction", null=True, blank=True, on_delete=models.CASCADE,
                                           related_name="+")
    span_start = models.PositiveIntegerField(null=True, blank=True)
    span_end = models.PositiveIntegerField(null=True, blank=True)
    solo = models.BooleanField(default=False, help_text="One item's own claim: no other facet joins it.")
    label = models.TextField(help_text="The claim in words: the text of its first facet.")
    status = models.CharField(max_length=16, choices=ClaimStatus.choices, default=ClaimStatus.PENDING)

    class Meta:
        indexes = [
            models.Index(fields=["workspace", "status", "-created_at"], name="claim_ws_status_created"),
            # An opening item looks up the open claims of its interaction.
            models.Index(fields=["source_interaction", "status"], name="claim_source_status"),
        ]
        constraints = [
            models.CheckConstraint(condition=models.Q(status__in=["pending", "decided"]), name="claim_status_valid"),
        ]

    def __str__(self) -> str:
        return f"claim {self.pk} ({self.status})"

    @property
    def span(self) -> tuple[int, int] | None:
        return (self.span_start, self.span_end) if self.span_start is not None and self.span_end is not None else None


class ReviewItem(Decided):
    """One thing derived by a rule, a model or an agent that waits for a person (DESIGN.md,
    review). The target row lives in its owner's table; the kind's handlers (review.registry)
    change it. What the queue shows — text, rule, span, confidence — is copied here when
    the item opens, so the queue page never reads another app's tables."""

    workspace = models.ForeignKey(Workspace, on_delete=models.CASCADE, related_name="+")
    kind = models.CharField(max_length=40)
    target_id = models.BigIntegerField()
    item_type = models.CharField(max_length=60, blank=True, help_text="memory type, entity kind, predicate, profile key…")
    text = models.TextField()
    proposal = models.JSONField(default=dict, blank=True, help_text="Kind-specific details shown to the reviewer.")
    source_interaction = models.ForeignKey("conversations.Interaction", null=True, blank=True, on_delete=models.CASCADE,
                                           related_name="+")
    span_start = models.PositiveIntegerField(null=True, blank=True)
    span_end = models.PositiveIntegerField(null=True, blank=True)
    entity = models.ForeignKey("entities.Entity", null=True, blank=True, on_delete=models.CASCADE, related_name="+")
    # Every item opened since claims exist has one; items decided before have none.
    claim = models.ForeignKey(Claim, null=True, blank=True, on_delete=models.SET_NULL, related_name="items")
    rule = models.CharField(max_length=120, blank=True, help_text='The rule or model that proposed it ("api" for agents).')
    # Issue 20: the API key whose call proposed it (remember, report a gap, create an entity);
    # for what the worker derived from a message, the key that logged the message says who.
    api_key = models.ForeignKey("core.ApiKey", null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    prompt_version = models.CharField(max_length=40, blank=True)
    confidence = models.FloatField(default=0.5)
    status = models.CharField(max_length=16, choices=ReviewStatus.choices, default=ReviewStatus.PENDING)
    decision = models.CharField(max_length=16, choices=Decision.choices, blank=True)
    result = models.JSONField(default=dict, blank=True, help_text="What the decision produced (e.g. the new version's id).")

    class Meta:
        indexes = [
            # The queue page: pending items of a workspace, newest source first.
            models.Index(fields=["workspace", "status", "-created_at"], name="review_ws_status_created"),
            models.Index(fields=["workspace", "kind", "target_id"], name="review_ws_kind_target"),
            models.Index(fields=["source_interaction"], name="review_source"),
            # The queue's search (`text__icontains`, i.e. UPPER(text) LIKE) without a scan:
            # trigrams of the upper-cased text (issue 21 part 6; bench/RESULTS.md).
            GinIndex(OpClass(Upper("text"), name="gin_trgm_ops"), name="review_text_trgm"),
        ]
        constraints = [
            models.UniqueConstraint(fields=["workspace", "kind", "target_id"], condition=models.Q(status="pending"),
                                    name="review_one_pending_per_target"),
            models.CheckConstraint(condition=models.Q(status__in=["pending", "approved", "rejected", "withdrawn"]),
                                   name="review_status_valid"),
            models.CheckConstraint(condition=models.Q(confidence__gte=0, confidence__lte=1), name="review_confidence_0_1"),
        ]

    def __str__(self) -> str:
        return f"{self.kind}:{self.target_id} ({self.status})"

    @property
    def is_pending(self) -> bool:
        return self.status == ReviewStatus.PENDING

    @property
    def proposer_key(self):
        """The API key that proposed the item, or logged the message it was derived from;
        None for people's and jobs' own proposals. Selectors select_related both ways."""
        if self.api_key_id:
            return self.api_key
        interaction = self.source_interaction if self.source_interaction_id else None
        return interaction.api_key if interaction is not None and interaction.api_key_id else None
