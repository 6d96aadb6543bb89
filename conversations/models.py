import uuid

from django.contrib.postgres.indexes import GinIndex, OpClass
from django.contrib.postgres.search import SearchVector, SearchVectorField
from django.db import models
from django.db.models.functions import Upper
from django.utils import timezone
from pgvector.django import HnswIndex, VectorField

from core.models import ApiKey, Workspace
from entities.models import Entity

EMBEDDING_DIMENSIONS = 384


class Direction(models.TextChoices):
    INBOUND = "inbound"
    OUTBOUND = "outbound"
    SYSTEM = "system"


class ConversationStatus(models.TextChoices):
    ACTIVE = "active"
    IDLE = "idle"
    CLOSED = "closed"


class Conversation(models.Model):
    """Layer 1: a run of interactions under one key. With a client `thread` the key is
    (channel, thread) — every participant's messages in that thread; without one it is the
    sender's (channel, channel_id). `entity` is the first sender. Mutable: counts, times,
    status and the pointer to the current summary change as the log grows."""

    workspace = models.ForeignKey(Workspace, on_delete=models.CASCADE, related_name="conversations")
    entity = models.ForeignKey(Entity, on_delete=models.PROTECT, related_name="conversations")
    channel = models.CharField(max_length=40)
    channel_id = models.CharField(max_length=255)
    thread = models.CharField(max_length=255, blank=True)
    key = models.CharField(max_length=600, help_text="The grouping key: thread or sender handle, per channel.")
    topic = models.CharField(max_length=300, blank=True)
    status = models.CharField(max_length=16, choices=ConversationStatus.choices, default=ConversationStatus.ACTIVE)
    status_reason = models.CharField(max_length=300, blank=True)
    status_changed_at = models.DateTimeField(default=timezone.now)
    interaction_count = models.PositiveIntegerField(default=0)
    first_interaction_at = models.DateTimeField(null=True, blank=True)
    last_interaction_at = models.DateTimeField(null=True, blank=True)
    last_interaction_pk = models.BigIntegerField(null=True, blank=True)
    # The occurred_at of the latest messages (newest last): the rhythm idle detection uses.
    recent_times = models.JSONField(default=list, blank=True)
    current_summary = models.ForeignKey(
        "ConversationSummary", null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(default=timezone.now)
    updated_at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["-last_interaction_at", "-id"]
        indexes = [
            models.Index(fields=["workspace", "-last_interaction_at"], name="conv_ws_last"),
            models.Index(fields=["workspace", "status", "last_interaction_at"], name="conv_ws_status_last"),
            models.Index(fields=["workspace", "channel"], name="conv_ws_channel"),
        ]
        constraints = [
            # One open (active or idle) conversation per key; closed ones are history.
            models.UniqueConstraint(
                fields=["workspace", "channel", "key"],
                condition=~models.Q(status="closed"),
                name="conversation_one_open_per_key",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.channel}:{self.key} ({self.status})"


class Interaction(models.Model):
    """Layer 0, the source of truth: INSERT-only, enforced by a database trigger (see
    migration 0002). Derived data lives elsewhere (InteractionIndex), so nothing ever needs
    to update a row here; only erasure may delete, through its audited path."""

    # The composite indexes below lead with workspace and conversation, so their single-
    # column FK indexes would only slow the hottest insert in Mnemo down. Keys are revoked,
    # not deleted, so the api_key column needs no index either.
    workspace = models.ForeignKey(Workspace, on_delete=models.PROTECT, related_name="+", db_index=False)
    entity = models.ForeignKey(Entity, on_delete=models.PROTECT, related_name="interactions")
    conversation = models.ForeignKey(Conversation, on_delete=models.PROTECT, related_name="interactions", db_index=False)
    api_key = models.ForeignKey(ApiKey, null=True, blank=True, on_delete=models.SET_NULL, related_name="+",
                                db_index=False, help_text="The agent key that logged it.")
    channel = models.CharField(max_length=40)
    channel_id = models.CharField(max_length=255)
    sender_name = models.CharField(max_length=300, blank=True)
    thread = models.CharField(max_length=255, blank=True)
    direction = models.CharField(max_length=16, choices=Direction.choices)
    content = models.TextField()
    private_filtered = models.BooleanField(default=False, help_text="A <private> block was stripped before storage.")
    metadata = models.JSONField(default=dict, blank=True)
    occurred_at = models.DateTimeField()
    created_at = models.DateTimeField(default=timezone.now)
    external_id = models.CharField(max_length=255, null=True, blank=True)
    content_hash = models.CharField(max_length=64)
    search = models.GeneratedField(
        expression=SearchVector("content", config="english"),
        output_field=SearchVectorField(),
        db_persist=True,
    )

    class Meta:
        indexes = [
            models.Index(fields=["workspace", "-occurred_at"], name="interaction_ws_occurred"),
            models.Index(fields=["conversation", "occurred_at"], name="interaction_conv_occurred"),
            models.Index(fields=["workspace", "entity", "-occurred_at"], name="interaction_ws_entity"),
            models.Index(fields=["workspace", "channel", "-occurred_at"], name="interaction_ws_channel"),
            models.Index(fields=["content_hash"], name="interaction_content_hash"),
            # GIN over the generated tsvector: full-text search (`q`) without a scan.
            GinIndex(fields=["search"], name="interaction_search_gin"),
            # Trigrams of the upper-cased content: `content__icontains` (UPPER(content) LIKE)
            # without a scan, for the review queue's search in source messages (issue 21).
            GinIndex(OpClass(Upper("content"), name="gin_trgm_ops"), name="interaction_content_trgm"),
        ]
        constraints = [
            models.UniqueConstraint(
                fields=["workspace", "external_id"],
                condition=models.Q(external_id__isnull=False),
                name="interaction_unique_external_id",
            ),
            models.CheckConstraint(condition=~models.Q(content=""), name="interaction_content_not_empty"),
            models.CheckConstraint(
                condition=models.Q(direction__in=["inbound", "outbound", "system"]), name="interaction_direction_valid"
            ),
        ]

    def __str__(self) -> str:
        return f"#{self.pk} {self.channel}:{self.channel_id} {self.content[:40]!r}"


class InteractionIndex(models.Model):
    """What background processing derived from one interaction: its embedding. A row here
    means the interaction is processed; /status counts the interactions without one."""

    interaction = models.OneToOneField(Interaction, on_delete=models.CASCADE, primary_key=True, related_name="index")
    workspace = models.ForeignKey(Workspace, on_delete=models.CASCADE, related_name="+")
    embedding = VectorField(dimensions=EMBEDDING_DIMENSIONS)
    model = models.CharField(max_length=120)
    processed_at = models.DateTimeField(default=timezone.now)

    class Meta:
        verbose_name_plural = "interaction indexes"
        indexes = [
            HnswIndex(name="interaction_embedding_hnsw", fields=["embedding"], m=16, ef_construction=64,
                      opclasses=["vector_cosine_ops"]),
        ]


class InteractionKinds(models.Model):
    """The kinds of things one interaction names (core.kinds: "Rome" → city, capital…), as
    full-text lexemes apart from its words (mnemo_kind_vector, core.search.KIND_PREFIX),
    derived with its embedding. A narrow table of its own: a question asking for a kind
    reads the kinds of every row its full text found, by primary key, and filters the rows
    its kinds find by sender here. Interactions indexed before kinds existed have none
    until `manage.py index_kinds`."""

    interaction = models.OneToOneField(Interaction, on_delete=models.CASCADE, primary_key=True, related_name="kinds")
    workspace = models.ForeignKey(Workspace, on_delete=models.CASCADE, related_name="+", db_index=False)
    # The interaction's entity (its sender), kept equal to it by merges and splits
    # (conversations.erasure.log_move): a question naming people finds by kinds only their
    # messages, without reading the interactions the kinds of everyone else match.
    entity = models.ForeignKey(Entity, on_delete=models.CASCADE, related_name="+", db_index=False)
    kinds = SearchVectorField()

    class Meta:
        verbose_name_plural = "interaction kinds"
        indexes = [GinIndex(fields=["kinds"], name="interaction_kinds_gin")]


class InteractionBacklog(models.Model):
    """Interactions waiting for background processing: a row per interaction, inserted
    with it by a database trigger and deleted once it is processed. A worker claims rows
    for a lease (SKIP LOCKED, so each one takes a whole batch), derives with no lock held,
    and deletes them when it writes; a lease that ran out is anyone's again (a worker died
    mid-derivation). /status counts the rows of a workspace."""

    interaction = models.OneToOneField(Interaction, on_delete=models.CASCADE, primary_key=True, related_name="+")
    workspace = models.ForeignKey(Workspace, on_delete=models.CASCADE, related_name="+")
    created_at = models.DateTimeField(default=timezone.now)
    claimed_by = models.CharField(max_length=32, blank=True, db_default="")  # the trigger omits it
    lease_until = models.DateTimeField(null=True, blank=True)

    class Meta:
        indexes = [models.Index(fields=["workspace"], name="interaction_backlog_ws")]


class ConversationSummary(models.Model):
    """Immutable (seed 002: a summary is never edited, only superseded). The current one is
    the summary nothing supersedes."""

    workspace = models.ForeignKey(Workspace, on_delete=models.PROTECT, related_name="+")
    conversation = models.ForeignKey(Conversation, on_delete=models.PROTECT, related_name="summaries")
    text = models.TextField()
    source_first = models.ForeignKey(Interaction, on_delete=models.PROTECT, related_name="+")
    source_last = models.ForeignKey(Interaction, on_delete=models.PROTECT, related_name="+")
    source_count = models.PositiveIntegerField()
    tone = models.JSONField(default=dict)
    pending_actions = models.JSONField(default=list)
    supersedes = models.OneToOneField("self", null=True, blank=True, on_delete=models.PROTECT, related_name="superseded_by")
    made_by = models.CharField(max_length=80, help_text='"extractive" or "llm:<prompt version>"')
    # 0: the worker's summary of a new range. A rebuild from the log that derives the same
    # range differently supersedes it with revision + 1 (conversations.resummarise).
    revision = models.PositiveIntegerField(default=0, db_default=0)
    created_at = models.DateTimeField(default=timezone.now)
    # Full-text search over summaries (recall): generated, so the row stays as written.
    search = models.GeneratedField(
        expression=SearchVector("text", config="english"),
        output_field=SearchVectorField(),
        db_persist=True,
    )

    class Meta:
        verbose_name_plural = "conversation summaries"
        ordering = ["created_at", "id"]
        constraints = [
            # Summarising is idempotent: one summary per conversation, last interaction and
            # revision (a rebuild's new version of a range is the next revision).
            models.UniqueConstraint(fields=["conversation", "source_last", "revision"], name="summary_unique_range_end"),
        ]
        indexes = [GinIndex(fields=["search"], name="summary_search_gin")]

    def __str__(self) -> str:
        return f"summary #{self.pk} of conversation {self.conversation_id}"


class RebuildJob(models.Model):
    """A rebuild of a workspace's derived layers from its log (issue 19 part 5,
    conversations.rebuild): which layers, how far it got, how it went. Durable, so a run
    killed mid-way resumes where its last committed batch ended. While a workspace has an
    unfinished rebuild, the worker leaves its new messages waiting in the backlog (they
    are derived once the rebuild is done, in order), so nothing is derived twice or lost."""

    class Status(models.TextChoices):
        QUEUED = "queued"
        RUNNING = "running"
        OK = "ok"
        FAILED = "failed"  # resumable: run it again

    class Phase(models.TextChoices):
        RESET = "reset"  # nothing forgotten yet
        DERIVE = "derive"  # forgotten; deriving again past `cursor`
        DONE = "done"

    UNFINISHED = (Status.QUEUED, Status.RUNNING, Status.FAILED)

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    workspace = models.ForeignKey(Workspace, on_delete=models.CASCADE, related_name="+")
    layers = models.JSONField(default=list, help_text="The layers re-derived, in pipeline order.")
    status = models.CharField(max_length=8, choices=Status.choices, default=Status.QUEUED)
    phase = models.CharField(max_length=8, choices=Phase.choices, default=Phase.RESET)
    # The log as it stood when the layers were reset: interactions up to `high_water` that
    # were not waiting in the backlog then. Later ones are the worker's, after the rebuild.
    high_water = models.BigIntegerField(default=0)
    cursor = models.BigIntegerField(default=0, help_text="The last interaction re-derived.")
    total = models.PositiveIntegerField(default=0)
    done = models.PositiveIntegerField(default=0)
    report = models.JSONField(default=dict, blank=True, help_text="Rows forgotten per layer; the error if it failed.")
    requested_by = models.CharField(max_length=200, blank=True)
    created_at = models.DateTimeField(default=timezone.now)
    updated_at = models.DateTimeField(default=timezone.now)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at"]
        constraints = [
            models.CheckConstraint(condition=models.Q(status__in=["queued", "running", "ok", "failed"]),
                                   name="rebuildjob_status_valid"),
            models.CheckConstraint(condition=models.Q(phase__in=["reset", "derive", "done"]),
                                   name="rebuildjob_phase_valid"),
            # One unfinished rebuild per workspace: a second would reset under the first.
            models.UniqueConstraint(fields=["workspace"], condition=models.Q(status__in=["queued", "running", "failed"]),
                                    name="rebuildjob_one_unfinished"),
        ]

    def __str__(self) -> str:
        return f"rebuild {self.pk} of workspace {self.workspace_id} ({self.status}, {self.phase})"
