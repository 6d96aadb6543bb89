"""Memories (DESIGN.md, memory; seeds 000, 001, 003, 004).

A `Memory` is one natural-language thing Mnemo knows, with the certainty of how it was
learned, a lifecycle (candidate → active → superseded | invalid | graduated | archived) and
evidence: the interactions it came from, with the quoted span. Edits never rewrite a row's
meaning: a new version `supersedes` the old one. Procedures and censors are memories with a
row of extra state each. Working memory, scratchpads and trusted state are the agent's and
the team's own notes and live beside them."""

from django.conf import settings
from django.contrib.postgres.fields import ArrayField
from django.contrib.postgres.indexes import GinIndex
from django.contrib.postgres.search import SearchVector, SearchVectorField
from django.db import models
from django.db.models import Case, F, Value, When
from django.db.models.functions import Cast
from django.utils import timezone
from pgvector.django import HnswIndex, VectorField

from core.models import Workspace

EMBEDDING_DIMENSIONS = 384


class MemoryType(models.TextChoices):
    IDENTITY = "identity"
    PREFERENCE = "preference"
    EPISODIC = "episodic"
    FACT = "fact"
    PROCEDURE = "procedure"
    CENSOR = "censor"


class Certainty(models.TextChoices):
    # Seed 004: how a memory was learned says how far to trust it.
    VERBATIM = "verbatim"  # said in so many words, or told to remember
    EXTRACTED = "extracted"  # a deterministic rule matched
    INFERRED = "inferred"  # an LLM read it between the lines
    CONSOLIDATED = "consolidated"  # derived from several episodes


class MemoryStatus(models.TextChoices):
    CANDIDATE = "candidate"
    ACTIVE = "active"
    SUPERSEDED = "superseded"
    INVALID = "invalid"
    GRADUATED = "graduated"
    ARCHIVED = "archived"


class ArchivedReason(models.TextChoices):
    # Why a memory is archived: the meanings stay apart, so only what decay archived is
    # restorable or served with include_archived (a duplicate stays folded into its original).
    DECAY = "decay"
    DUPLICATE = "duplicate"


# Statuses a memory can still be decided or edited from.
OPEN_STATUSES = (MemoryStatus.CANDIDATE, MemoryStatus.ACTIVE)


class Memory(models.Model):
    workspace = models.ForeignKey(Workspace, on_delete=models.CASCADE, related_name="memories")
    type = models.CharField(max_length=16, choices=MemoryType.choices)
    certainty = models.CharField(max_length=16, choices=Certainty.choices)
    status = models.CharField(max_length=16, choices=MemoryStatus.choices, default=MemoryStatus.CANDIDATE)
    text = models.TextField()
    # Hash of the normalised text: the same wording of the same type dedups exactly.
    text_hash = models.CharField(max_length=64)
    confidence = models.FloatField(default=1.0)
    importance = models.FloatField(default=0.5)
    subject = models.ForeignKey("entities.Entity", null=True, blank=True, on_delete=models.SET_NULL,
                                related_name="memories", help_text="Who or what the memory is about.")
    # What a contradiction check compares: same subject + attribute, another value or polarity.
    attribute = models.CharField(max_length=120, blank=True)
    value = models.CharField(max_length=300, blank=True)
    polarity = models.SmallIntegerField(default=1)
    # Provenance: "rule:<name>", "model:<model>", "api", "person", "working_memory"…
    source = models.CharField(max_length=40)
    rule = models.CharField(max_length=80, blank=True)
    model = models.CharField(max_length=120, blank=True)
    prompt_version = models.CharField(max_length=40, blank=True)
    supersedes = models.ForeignKey("self", null=True, blank=True, on_delete=models.PROTECT, related_name="superseded_by")
    # A contradiction waiting for review: this candidate would supersede that memory.
    conflicts_with = models.ForeignKey("self", null=True, blank=True, on_delete=models.SET_NULL,
                                       related_name="conflicting")
    # A near duplicate found after the fact: archived, pointing at the memory it reinforced.
    duplicate_of = models.ForeignKey("self", null=True, blank=True, on_delete=models.SET_NULL, related_name="duplicates")
    graduated_to = models.ForeignKey("entities.Entity", null=True, blank=True, on_delete=models.SET_NULL,
                                     related_name="graduated_memories")
    # Issue 19 part 1: the pattern (certainty `consolidated`) this memory was consolidated
    # into. The source stays as it was (never deleted); it is not consolidated again.
    consolidated_into = models.ForeignKey("self", null=True, blank=True, on_delete=models.SET_NULL,
                                          related_name="consolidated_sources")
    conversation = models.ForeignKey("conversations.Conversation", null=True, blank=True, on_delete=models.SET_NULL,
                                     related_name="+", help_text="For episodes: the conversation segment.")
    # Event time (when it happened or was said) vs learned time (created_at).
    occurred_at = models.DateTimeField(null=True, blank=True)
    event_first = models.DateField(null=True, blank=True)
    event_last = models.DateField(null=True, blank=True)
    # When the claim held in the world, set when a reviewer keeps both sides of a conflict
    # ("both true at different times"); empty = no known bound.
    valid_from = models.DateTimeField(null=True, blank=True)
    valid_to = models.DateTimeField(null=True, blank=True)
    reinforcement_count = models.PositiveIntegerField(default=0)
    last_confirmed_at = models.DateTimeField(null=True, blank=True)
    access_count = models.PositiveIntegerField(default=0)
    last_accessed_at = models.DateTimeField(null=True, blank=True)
    strength = models.FloatField(default=1.0, help_text="Decays with time, restored by use (seed 004).")
    # The time `strength` refers to (memory.decay.anchor): the last decay step; empty before it.
    strength_at = models.DateTimeField(null=True, blank=True)
    archived_reason = models.CharField(max_length=16, blank=True, help_text="ArchivedReason, when archived.")
    embedding = VectorField(dimensions=EMBEDDING_DIMENSIONS, null=True, blank=True)
    # The text's concepts (core.concepts), taken when the row is written: a memory's text
    # never changes in place (an edit is a new version), and recall would otherwise extract
    # them again for every query that ranks the memory (~90 µs each). Null for rows written
    # before the column existed: recall then extracts them itself.
    concepts = ArrayField(models.TextField(), null=True, blank=True, editable=False)
    metadata = models.JSONField(default=dict, blank=True)
    decided_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL,
                                   related_name="+")
    decided_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(default=timezone.now)
    updated_at = models.DateTimeField(default=timezone.now)
    search = models.GeneratedField(
        expression=SearchVector("text", config="english"),
        output_field=SearchVectorField(),
        db_persist=True,
    )

    class Meta:
        verbose_name_plural = "memories"
        indexes = [
            models.Index(fields=["workspace", "status", "type"], name="memory_ws_status_type"),
            models.Index(fields=["workspace", "text_hash"], name="memory_ws_hash"),
            models.Index(fields=["workspace", "subject", "attribute"], name="memory_ws_subject_attr"),
            models.Index(fields=["workspace", "-created_at"], name="memory_ws_created"),
            models.Index(fields=["conversation", "-id"], name="memory_conversation"),
            models.Index(fields=["workspace"], condition=models.Q(embedding__isnull=True), name="memory_to_embed"),
            GinIndex(fields=["search"], name="memory_search_gin"),
            HnswIndex(name="memory_embedding_hnsw", fields=["embedding"], m=16, ef_construction=64,
                      opclasses=["vector_cosine_ops"]),
        ]
        constraints = [
            models.CheckConstraint(condition=models.Q(type__in=MemoryType.values), name="memory_type_valid"),
            models.CheckConstraint(condition=models.Q(certainty__in=Certainty.values), name="memory_certainty_valid"),
            models.CheckConstraint(condition=models.Q(status__in=MemoryStatus.values), name="memory_status_valid"),
            models.CheckConstraint(condition=models.Q(confidence__gte=0, confidence__lte=1), name="memory_confidence_0_1"),
            models.CheckConstraint(condition=models.Q(importance__gte=0, importance__lte=1), name="memory_importance_0_1"),
            models.CheckConstraint(condition=~models.Q(text=""), name="memory_text_not_empty"),
        ]

    def __str__(self) -> str:
        return f"#{self.pk} {self.type}/{self.status} {self.text[:50]!r}"


class MemoryEvidence(models.Model):
    """One interaction a memory came from or was confirmed by, with the span it quoted."""

    memory = models.ForeignKey(Memory, on_delete=models.CASCADE, related_name="evidence")
    interaction = models.ForeignKey("conversations.Interaction", on_delete=models.CASCADE, related_name="+")
    quote = models.TextField(blank=True)
    start = models.PositiveIntegerField(null=True, blank=True)
    end = models.PositiveIntegerField(null=True, blank=True)
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        verbose_name_plural = "memory evidence"
        constraints = [models.UniqueConstraint(fields=["memory", "interaction"], name="memory_evidence_unique")]
        indexes = [models.Index(fields=["interaction"], name="memory_evidence_interaction")]


class Procedure(models.Model):
    """Seed 003: a procedure's level bands and how well it has worked."""

    memory = models.OneToOneField(Memory, on_delete=models.CASCADE, primary_key=True, related_name="procedure")
    name = models.CharField(max_length=300)
    domain = models.CharField(max_length=100, blank=True)
    goals = models.JSONField(default=list, blank=True)  # upper fringe: why you would use it
    steps = models.JSONField(default=list, blank=True)  # core: the method
    tools = models.JSONField(default=list, blank=True)  # core: tools and APIs involved
    notes = models.JSONField(default=list, blank=True)  # lower fringe: specific details
    activation_count = models.PositiveIntegerField(default=0)
    success_count = models.PositiveIntegerField(default=0)
    failure_count = models.PositiveIntegerField(default=0)
    # Seed 003: successes over activations, 0.5 before the first use.
    effectiveness = models.GeneratedField(
        expression=Case(
            When(activation_count__gt=0,
                 then=Cast(F("success_count"), models.FloatField()) / Cast(F("activation_count"), models.FloatField())),
            default=Value(0.5),
        ),
        output_field=models.FloatField(),
        db_persist=True,
    )
    last_activated_at = models.DateTimeField(null=True, blank=True)
    flagged_at = models.DateTimeField(null=True, blank=True, help_text="Low effectiveness raised for review.")

    class Meta:
        constraints = [
            models.CheckConstraint(condition=models.Q(success_count__lte=F("activation_count"))
                                   & models.Q(failure_count__lte=F("activation_count")),
                                   name="procedure_counts_consistent"),
        ]


class CensorAction(models.TextChoices):
    WARN = "warn"
    BLOCK = "block"  # refuses; a person may still override it (false positives de-escalate)
    ABSOLUTE = "absolute"  # seed 003: refuses without override, never de-escalated


class Censor(models.Model):
    """Seed 003: what an agent should not do, why, and how firmly."""

    memory = models.OneToOneField(Memory, on_delete=models.CASCADE, primary_key=True, related_name="censor")
    trigger = models.TextField()
    reason = models.TextField(blank=True)
    action = models.CharField(max_length=8, choices=CensorAction.choices, default=CensorAction.WARN)
    activation_count = models.PositiveIntegerField(default=0)
    false_positive_count = models.PositiveIntegerField(default=0)
    escalation_threshold = models.PositiveIntegerField(default=3)
    last_activated_at = models.DateTimeField(null=True, blank=True)
    escalated_at = models.DateTimeField(null=True, blank=True, help_text="When repeated activations made it block.")
    embedding = VectorField(dimensions=EMBEDDING_DIMENSIONS, null=True, blank=True)

    class Meta:
        constraints = [
            models.CheckConstraint(condition=models.Q(action__in=CensorAction.values), name="censor_action_valid"),
            models.CheckConstraint(condition=models.Q(escalation_threshold__gte=1), name="censor_threshold_positive"),
        ]


class DuplicateStatus(models.TextChoices):
    PENDING = "pending"
    MERGED = "merged"
    NOT_DUPLICATES = "not_duplicates"
    GONE = "gone"  # one side stopped being active before anyone decided


class DuplicatePair(models.Model):
    """Two active memories the dedup scan found saying nearly the same (issue 19 part 3),
    proposed for a merge. One row per pair, whatever became of it: a pair people called
    "not duplicates" is never proposed again, and a pending one is not proposed twice."""

    workspace = models.ForeignKey(Workspace, on_delete=models.CASCADE, related_name="+")
    # The older memory (kept by a merge) and the newer one (archived into it): low < high.
    keep = models.ForeignKey(Memory, on_delete=models.CASCADE, related_name="+")
    drop = models.ForeignKey(Memory, on_delete=models.CASCADE, related_name="+")
    similarity = models.FloatField()
    status = models.CharField(max_length=16, choices=DuplicateStatus.choices, default=DuplicateStatus.PENDING)
    decided_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL,
                                   related_name="+")
    decided_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["keep", "drop"], name="duplicate_pair_once"),
            models.CheckConstraint(condition=models.Q(keep__lt=F("drop")), name="duplicate_pair_ordered"),
            models.CheckConstraint(condition=models.Q(status__in=DuplicateStatus.values), name="duplicate_status_valid"),
        ]
        indexes = [models.Index(fields=["drop"], name="duplicate_pair_drop")]


class ScanCursor(models.Model):
    """How far a periodic scan has read (the dedup scan: memory ids; learning from
    failures: audit event ids), so each run covers the next slice."""

    name = models.CharField(max_length=64, primary_key=True)
    position = models.BigIntegerField(default=0)
    updated_at = models.DateTimeField(default=timezone.now)


class GraduationStatus(models.TextChoices):
    PENDING = "pending"
    GRADUATED = "graduated"
    REJECTED = "rejected"


class GraduationSignal(models.TextChoices):
    # Seed 000's four signals.
    REINFORCED = "reinforced"
    TEMPLATE = "template"
    EXPLICIT = "explicit"
    EXTRACTOR = "extractor"


class Graduation(models.Model):
    """A proposal that a memory deserves structure (an entity), and what became of it."""

    workspace = models.ForeignKey(Workspace, on_delete=models.CASCADE, related_name="+")
    memory = models.ForeignKey(Memory, on_delete=models.CASCADE, related_name="graduations")
    signal = models.CharField(max_length=16, choices=GraduationSignal.choices)
    status = models.CharField(max_length=16, choices=GraduationStatus.choices, default=GraduationStatus.PENDING)
    proposal = models.JSONField(default=dict)  # the entity it would become: kind, name, description
    entity = models.ForeignKey("entities.Entity", null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    decided_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL,
                                   related_name="+")
    decided_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        constraints = [
            # One open proposal per memory, whatever signal raised it first.
            models.UniqueConstraint(fields=["memory"], condition=models.Q(status="pending"),
                                    name="graduation_one_pending"),
            models.UniqueConstraint(fields=["memory"], condition=models.Q(status="graduated"),
                                    name="graduation_once"),
        ]


class TrustPolicy(models.Model):
    """Per workspace: which memories become active without a person (DESIGN.md, review).
    Without a row the defaults below apply."""

    workspace = models.OneToOneField(Workspace, on_delete=models.CASCADE, primary_key=True, related_name="trust_policy")
    auto_certainties = models.JSONField(default=list)
    auto_types = models.JSONField(default=list)
    min_confidence = models.FloatField(default=0.9)
    updated_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL,
                                   related_name="+")
    updated_at = models.DateTimeField(default=timezone.now)

    class Meta:
        verbose_name_plural = "trust policies"
        constraints = [
            models.CheckConstraint(condition=models.Q(min_confidence__gte=0, min_confidence__lte=1),
                                   name="trust_policy_confidence_0_1"),
        ]


class ConsolidationPolicy(models.Model):
    """Per workspace: what consolidation groups into patterns (seed 001's policy, issue 19
    part 1). Without a row the defaults of memory.consolidation apply. `seed_cursor` is the
    job's progress through the workspace (the last memory id it started a group from)."""

    workspace = models.OneToOneField(Workspace, on_delete=models.CASCADE, primary_key=True,
                                     related_name="consolidation_policy")
    enabled = models.BooleanField(default=True)
    source_types = models.JSONField(default=list)
    min_support = models.PositiveSmallIntegerField(default=3)
    strong_support = models.PositiveSmallIntegerField(default=5)
    max_distance = models.FloatField(default=0.25)
    window_days = models.PositiveIntegerField(default=365)
    max_patterns_per_run = models.PositiveIntegerField(default=50)
    seed_cursor = models.BigIntegerField(default=0)
    updated_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL,
                                   related_name="+")
    updated_at = models.DateTimeField(default=timezone.now)

    class Meta:
        verbose_name_plural = "consolidation policies"
        constraints = [
            models.CheckConstraint(condition=models.Q(min_support__gte=2), name="consolidation_min_support_2"),
            models.CheckConstraint(condition=models.Q(max_distance__gt=0, max_distance__lt=1),
                                   name="consolidation_distance_0_1"),
        ]


class WorkingMemoryItemStatus(models.TextChoices):
    IN_FOCUS = "in_focus"
    EVICTED = "evicted"


class WorkingSession(models.Model):
    """Seed 004: an agent session's focus, capacity 7 by default (Miller's law)."""

    workspace = models.ForeignKey(Workspace, on_delete=models.CASCADE, related_name="+")
    key = models.CharField(max_length=200)
    task = models.TextField(blank=True)
    capacity = models.PositiveSmallIntegerField(default=7)
    created_at = models.DateTimeField(default=timezone.now)
    updated_at = models.DateTimeField(default=timezone.now)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["workspace", "key"], name="working_session_unique"),
            models.CheckConstraint(condition=models.Q(capacity__gte=1, capacity__lte=50), name="working_capacity_range"),
        ]


class WorkingMemoryItem(models.Model):
    """One item in (or evicted from) a session's focus. Evicted items stay, pointing at the
    long-term memory they were stored as."""

    session = models.ForeignKey(WorkingSession, on_delete=models.CASCADE, related_name="items")
    key = models.CharField(max_length=200)
    content = models.TextField()
    kind = models.CharField(max_length=40, blank=True)
    attention = models.FloatField(default=0.5)
    ref_memory = models.ForeignKey(Memory, null=True, blank=True, on_delete=models.SET_NULL, related_name="+",
                                   help_text="A long-term memory the item refers to or was stored as.")
    status = models.CharField(max_length=16, choices=WorkingMemoryItemStatus.choices,
                              default=WorkingMemoryItemStatus.IN_FOCUS)
    loaded_at = models.DateTimeField(default=timezone.now)
    evicted_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["session", "key"], condition=models.Q(status="in_focus"),
                                    name="working_item_key_in_focus"),
            models.CheckConstraint(condition=models.Q(attention__gte=0, attention__lte=1), name="working_attention_0_1"),
        ]


class Scratchpad(models.Model):
    """Seed 004: an agent task's exact state. The JSON is kept as the text the agent sent
    (jsonb would reorder keys), so what comes back is byte-for-byte what went in."""

    workspace = models.ForeignKey(Workspace, on_delete=models.CASCADE, related_name="+")
    task = models.CharField(max_length=200)
    state = models.TextField(default="{}")
    version = models.PositiveIntegerField(default=1)
    created_at = models.DateTimeField(default=timezone.now)
    updated_at = models.DateTimeField(default=timezone.now)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["workspace", "task"], name="scratchpad_unique")]


class ScratchpadCheckpoint(models.Model):
    scratchpad = models.ForeignKey(Scratchpad, on_delete=models.CASCADE, related_name="checkpoints")
    label = models.CharField(max_length=200, blank=True)
    state = models.TextField()
    version = models.PositiveIntegerField()
    created_at = models.DateTimeField(default=timezone.now)


class TrustedState(models.Model):
    """Curated key/values set by people: the highest-trust section of a context pack.
    Insert-only: a new value supersedes the current one (the one nothing supersedes)."""

    workspace = models.ForeignKey(Workspace, on_delete=models.CASCADE, related_name="+")
    key = models.CharField(max_length=120)
    value = models.TextField(blank=True)
    version = models.PositiveIntegerField()
    supersedes = models.OneToOneField("self", null=True, blank=True, on_delete=models.PROTECT, related_name="superseded_by")
    deleted = models.BooleanField(default=False, help_text="This version removes the key.")
    set_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL,
                               related_name="+")
    set_by_label = models.CharField(max_length=200, blank=True)
    note = models.TextField(blank=True)
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["workspace", "key", "version"], name="trusted_state_version_unique"),
        ]
        indexes = [models.Index(fields=["workspace", "key", "-version"], name="trusted_state_key")]


class EpisodeCursor(models.Model):
    """How far a conversation has been cut into episodic segments: the last interaction
    the latest episode covers. One row per conversation, moved forward by extraction."""

    conversation = models.OneToOneField("conversations.Conversation", on_delete=models.CASCADE, primary_key=True,
                                        related_name="+")
    last_interaction_id = models.BigIntegerField(default=0)
    updated_at = models.DateTimeField(default=timezone.now)
