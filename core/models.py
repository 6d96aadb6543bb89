from __future__ import annotations

import uuid

from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import models
from django.utils import timezone


class Workspace(models.Model):
    """The isolation boundary: every row of every app belongs to one workspace."""

    name = models.CharField(max_length=200)
    slug = models.SlugField(max_length=80, unique=True)
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["name"]

    def __str__(self) -> str:
        return self.name


class Role(models.TextChoices):
    VIEWER = "viewer", "Viewer"
    REVIEWER = "reviewer", "Reviewer"
    ADMIN = "admin", "Admin"


ROLE_RANK = {Role.VIEWER: 0, Role.REVIEWER: 1, Role.ADMIN: 2}


class Membership(models.Model):
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="memberships")
    workspace = models.ForeignKey(Workspace, on_delete=models.CASCADE, related_name="memberships")
    role = models.CharField(max_length=16, choices=Role.choices, default=Role.VIEWER)
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["user", "workspace"], name="membership_unique_user_workspace"),
            models.CheckConstraint(
                condition=models.Q(role__in=[r.value for r in Role]), name="membership_role_valid"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.user} in {self.workspace} ({self.role})"

    def allows(self, role: str) -> bool:
        return ROLE_RANK[Role(self.role)] >= ROLE_RANK[Role(role)]


class Scope(models.TextChoices):
    READ = "read", "Read"
    WRITE = "write", "Write"
    ADMIN = "admin", "Admin"


class ApiKey(models.Model):
    """An agent's credential. The key `mn_<prefix>_<secret>` is shown once; only the
    prefix (for lookup) and a SHA-256 hash of the whole key are stored."""

    workspace = models.ForeignKey(Workspace, on_delete=models.CASCADE, related_name="api_keys")
    name = models.CharField(max_length=200)
    prefix = models.CharField(max_length=16, unique=True)
    hash = models.CharField(max_length=64)
    scopes = models.JSONField(default=list)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(default=timezone.now)
    last_used_at = models.DateTimeField(null=True, blank=True)
    expires_at = models.DateTimeField(null=True, blank=True)
    revoked_at = models.DateTimeField(null=True, blank=True)
    # Issue 20: the agent entity this key acts for ("triage-bot"), when bound: what it writes
    # is shown as proposed by that agent, and recall can be narrowed to it (`agent`).
    agent = models.ForeignKey("entities.Entity", null=True, blank=True, on_delete=models.SET_NULL,
                              related_name="api_keys", help_text="The agent this key writes for, if any.")

    class Meta:
        verbose_name = "API key"
        ordering = ["-created_at"]
        constraints = [
            models.CheckConstraint(condition=models.Q(hash__regex=r"^[0-9a-f]{64}$"), name="apikey_hash_is_sha256"),
        ]

    def __str__(self) -> str:
        return f"{self.name} (mn_{self.prefix}_…)"

    @property
    def writer_label(self) -> str:
        """Who writes with this key, in words: "triage-bot (key ingest, mn_ab12…)"."""
        agent = self.agent.name if self.agent_id and self.agent else ""
        return f"{agent} (key {self.name}, mn_{self.prefix}…)" if agent else f"key {self.name} (mn_{self.prefix}…)"

    def clean(self) -> None:
        if self.agent_id and self.workspace_id and self.agent.workspace_id != self.workspace_id:
            raise ValidationError({"agent": "The agent must be an entity of the key's workspace."})

    def is_active(self, now=None) -> bool:
        now = now or timezone.now()
        return self.revoked_at is None and (self.expires_at is None or self.expires_at > now)

    def has_scope(self, scope: str) -> bool:
        # admin implies read and write; read and write are independent.
        return scope in self.scopes or Scope.ADMIN in self.scopes


class AuditEvent(models.Model):
    """Who did what to which row. Written by every write service, in its transaction.

    A rejected API key with an unknown prefix and a failed login belong to no workspace."""

    workspace = models.ForeignKey(
        Workspace, null=True, blank=True, on_delete=models.CASCADE, related_name="audit_events"
    )
    actor_user = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    actor_api_key = models.ForeignKey(ApiKey, null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    actor_label = models.CharField(max_length=200, help_text="Readable actor, kept if the user or key is deleted.")
    verb = models.CharField(max_length=80)
    target_type = models.CharField(max_length=80, blank=True)
    target_id = models.CharField(max_length=64, blank=True)
    data = models.JSONField(default=dict, blank=True)
    request_id = models.CharField(max_length=64, blank=True)
    at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["-at", "-id"]
        indexes = [
            models.Index(fields=["workspace", "-at"], name="audit_workspace_at"),
            models.Index(fields=["workspace", "target_type", "target_id"], name="audit_workspace_target"),
            models.Index(fields=["workspace", "verb"], name="audit_workspace_verb"),
        ]

    def __str__(self) -> str:
        return f"{self.at:%Y-%m-%d %H:%M} {self.actor_label} {self.verb} {self.target_type}:{self.target_id}"


class WorkerHeartbeat(models.Model):
    """Last time a Celery worker ran the heartbeat task that beat sends, so /status can
    tell "nothing pending" apart from "no worker running"."""

    name = models.CharField(max_length=80, primary_key=True)
    seen_at = models.DateTimeField()
    hostname = models.CharField(max_length=200, blank=True)

    def __str__(self) -> str:
        return f"{self.name} @ {self.seen_at:%Y-%m-%d %H:%M:%S}"


class JobRun(models.Model):
    """One run of a scheduled maintenance job (issue 19: consolidation, decay, dedup scans,
    rebuilds…): when, how long, what it changed. Written by core.jobs.job_run outside the
    job's own transactions, so a failed or killed run is still seen (a run left `running`
    past its job's bound was killed)."""

    class Status(models.TextChoices):
        RUNNING = "running"
        OK = "ok"
        FAILED = "failed"

    name = models.CharField(max_length=80, help_text="The job, as the beat schedule names its task")
    workspace = models.ForeignKey(Workspace, null=True, blank=True, on_delete=models.CASCADE, related_name="+",
                                  help_text="Set when the run was for one workspace; empty for all")
    trigger = models.CharField(max_length=20, default="schedule", help_text='"schedule", "manual" or "command"')
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.RUNNING)
    started_at = models.DateTimeField(default=timezone.now)
    finished_at = models.DateTimeField(null=True, blank=True)
    counts = models.JSONField(default=dict, blank=True, help_text='What it changed: {"archived": 12, …}')
    error = models.TextField(blank=True)

    class Meta:
        ordering = ["-started_at", "-id"]
        indexes = [models.Index(fields=["name", "-started_at"], name="jobrun_name_started")]
        constraints = [models.CheckConstraint(condition=models.Q(status__in=["running", "ok", "failed"]),
                                              name="jobrun_status_valid")]

    def __str__(self) -> str:
        return f"{self.name} {self.status} @ {self.started_at:%Y-%m-%d %H:%M:%S}"

    @property
    def seconds(self) -> float | None:
        return (self.finished_at - self.started_at).total_seconds() if self.finished_at else None


class ArchiveJob(models.Model):
    """An export or import of a workspace archive run in the background for the API (issue
    19 part 6; the run itself is a JobRun too). An export's file is downloaded with the
    workspace's admin key, or once with the link's token (only its hash is kept)."""

    class Kind(models.TextChoices):
        EXPORT = "export"
        IMPORT = "import"

    class Status(models.TextChoices):
        QUEUED = "queued"
        RUNNING = "running"
        OK = "ok"
        FAILED = "failed"

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    workspace = models.ForeignKey(Workspace, on_delete=models.CASCADE, related_name="+")
    kind = models.CharField(max_length=8, choices=Kind.choices)
    status = models.CharField(max_length=8, choices=Status.choices, default=Status.QUEUED)
    path = models.CharField(max_length=500, help_text="The archive file on this server")
    size = models.BigIntegerField(null=True, blank=True)
    token_hash = models.CharField(max_length=64, blank=True, help_text="SHA-256 of the one-time download token")
    downloaded_at = models.DateTimeField(null=True, blank=True)
    report = models.JSONField(default=dict, blank=True, help_text="Counts, or what was wrong with the archive")
    created_at = models.DateTimeField(default=timezone.now)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at"]
        constraints = [
            models.CheckConstraint(condition=models.Q(kind__in=["export", "import"]), name="archivejob_kind_valid"),
            models.CheckConstraint(condition=models.Q(status__in=["queued", "running", "ok", "failed"]),
                                   name="archivejob_status_valid"),
        ]


class ImportProgress(models.Model):
    """An archive import into this workspace, loaded in bounded transactions (issue 19 part
    6; core.archive.loading): while the row exists the workspace is being imported into —
    refused to agents and the dashboard, skipped by the background jobs — and it is deleted
    in the transaction of the import's last step, so the workspace appears whole or not at
    all. A killed import resumes from here (`import_workspace --resume`)."""

    workspace = models.OneToOneField(Workspace, on_delete=models.CASCADE, primary_key=True,
                                     related_name="import_progress")
    archive_digest = models.CharField(max_length=64, help_text="SHA-256 of the manifest: a resume reads the same archive")
    table = models.CharField(max_length=80, blank=True, help_text="The table being loaded")
    lines_done = models.BigIntegerField(default=0, help_text="Its lines committed (inserted or skipped)")
    tables_done = models.JSONField(default=list, blank=True)
    counts = models.JSONField(default=dict, blank=True)
    skipped = models.JSONField(default=dict, blank=True)
    started_at = models.DateTimeField(default=timezone.now)
    updated_at = models.DateTimeField(default=timezone.now)


class ImportIdMap(models.Model):
    """Source id -> new id of each row an import in progress inserted, per model label (and,
    under `pks:<table>`, the keys an `after_import` hook is given at the end): written in
    the batch's own transaction, so a resumed import knows every id the committed batches
    gave. Deleted with the ImportProgress."""

    id = models.BigAutoField(primary_key=True)
    workspace = models.ForeignKey(Workspace, on_delete=models.CASCADE, related_name="+")
    label = models.CharField(max_length=120)
    old = models.BigIntegerField()
    new = models.BigIntegerField()


class ImportDeferred(models.Model):
    """A nullable reference of an imported row to a row the archive lists further on (a
    forward `supersedes`, a conversation's current summary): set in the import's last step."""

    id = models.BigAutoField(primary_key=True)
    workspace = models.ForeignKey(Workspace, on_delete=models.CASCADE, related_name="+")
    label = models.CharField(max_length=120)
    row = models.BigIntegerField()
    attname = models.CharField(max_length=120)
    target = models.CharField(max_length=120)
    old = models.BigIntegerField()
