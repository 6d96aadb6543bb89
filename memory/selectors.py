"""Reads for memories, procedures, censors, working memory, scratchpads and trusted state.
Every read is scoped by workspace; another workspace's ids are not found (404)."""

from __future__ import annotations

from datetime import datetime, timedelta

from django.db.models import Count, Exists, OuterRef, Q, QuerySet, Subquery, TextField
from django.db.models.functions import Cast
from django.utils import timezone
from pgvector.django import CosineDistance

from conversations.selectors import conversations_quiet_past
from core.errors import NotFound
from core.jobs import job_run_daily_counts
from core.models import AuditEvent, Workspace
from core.selectors import workspaces_importing
from memory.models import (
    OPEN_STATUSES,
    Censor,
    EpisodeCursor,
    Graduation,
    GraduationStatus,
    Memory,
    MemoryEvidence,
    Procedure,
    Scratchpad,
    ScratchpadCheckpoint,
    TrustedState,
    WorkingMemoryItem,
    WorkingMemoryItemStatus,
    WorkingSession,
)


def memory_list(*, workspace: Workspace, type: str | None = None, status: str | None = None,
                entity: int | None = None, certainty: str | None = None, min_confidence: float | None = None,
                max_confidence: float | None = None, text: str | None = None, rule: str | None = None,
                interaction: int | None = None) -> QuerySet[Memory]:
    rows = Memory.objects.filter(workspace=workspace).select_related("subject")
    if type:
        rows = rows.filter(type=type)
    if status:
        rows = rows.filter(status=status)
    if entity:
        rows = rows.filter(subject_id=entity)
    if certainty:
        rows = rows.filter(certainty=certainty)
    if min_confidence is not None:
        rows = rows.filter(confidence__gte=min_confidence)
    if max_confidence is not None:
        rows = rows.filter(confidence__lte=max_confidence)
    if rule:
        rows = rows.filter(rule=rule)
    if interaction:
        rows = rows.filter(Exists(MemoryEvidence.objects.filter(memory=OuterRef("pk"), interaction_id=interaction)))
    if text:
        from django.contrib.postgres.search import SearchQuery

        rows = rows.filter(search=SearchQuery(text, search_type="websearch", config="english"))
    return rows.order_by("-created_at", "-id")


def memory_get(*, workspace: Workspace, memory_id: int) -> Memory:
    memory = Memory.objects.filter(workspace=workspace, pk=memory_id).select_related("subject", "decided_by").first()
    if memory is None:
        raise NotFound(f"Memory {memory_id} not found.")
    return memory


def memory_evidence(*, memory: Memory) -> list[MemoryEvidence]:
    return list(memory.evidence.select_related("interaction__api_key__agent").order_by("interaction__occurred_at", "interaction_id"))


def memory_consolidated_from(*, memory: Memory) -> list[int]:
    """The memories a pattern was consolidated from (issue 19 part 1), oldest first."""
    return list(memory.consolidated_sources.order_by("id").values_list("id", flat=True))


def memory_versions(*, memory: Memory) -> list[Memory]:
    """Every version of the memory, oldest first: what it superseded and what superseded it."""
    chain = [memory]
    older = memory
    while older.supersedes_id:
        older = Memory.objects.get(pk=older.supersedes_id)
        chain.insert(0, older)
    newer = memory
    while (nxt := Memory.objects.filter(supersedes=newer).order_by("id").first()) is not None:
        chain.append(nxt)
        newer = nxt
    return chain


def memory_history(*, memory: Memory) -> list[AuditEvent]:
    """Every change to any version of the memory, from the audit log."""
    ids = [str(m.pk) for m in memory_versions(memory=memory)]
    graduations = [str(g) for g in Graduation.objects.filter(memory_id__in=ids).values_list("pk", flat=True)]
    about = Q(target_type="memory.memory", target_id__in=ids)
    if graduations:
        about |= Q(target_type="memory.graduation", target_id__in=graduations)
    return list(AuditEvent.objects.filter(workspace_id=memory.workspace_id).filter(about)
                .select_related("actor_user", "actor_api_key__agent").order_by("at", "id"))


def memory_similar(*, memory: Memory, limit: int = 5) -> list[Memory]:
    if memory.embedding is None:
        return []
    from pgvector.django import CosineDistance

    return list(Memory.objects.filter(workspace_id=memory.workspace_id, type=memory.type)
                .exclude(pk=memory.pk).exclude(embedding__isnull=True)
                .annotate(distance=CosineDistance("embedding", memory.embedding)).order_by("distance")[:limit])


def memories_for_entity(*, entity, limit: int = 20) -> list[Memory]:
    return list(Memory.objects.filter(subject=entity, status__in=["active", "candidate"]).order_by("-created_at")[:limit])


def graduations(*, workspace: Workspace, status: str | None = GraduationStatus.PENDING) -> QuerySet[Graduation]:
    rows = Graduation.objects.filter(workspace=workspace).select_related("memory", "entity")
    return rows.filter(status=status) if status else rows


def graduation_get(*, workspace: Workspace, graduation_id: int) -> Graduation:
    row = Graduation.objects.filter(workspace=workspace, pk=graduation_id).select_related("memory").first()
    if row is None:
        raise NotFound(f"Graduation {graduation_id} not found.")
    return row


def procedure_get(*, workspace: Workspace, memory_id: int) -> Procedure:
    row = Procedure.objects.filter(memory__workspace=workspace, pk=memory_id).select_related("memory").first()
    if row is None:
        raise NotFound(f"Procedure {memory_id} not found.")
    return row


def censor_get(*, workspace: Workspace, memory_id: int) -> Censor:
    row = Censor.objects.filter(memory__workspace=workspace, pk=memory_id).select_related("memory").first()
    if row is None:
        raise NotFound(f"Censor {memory_id} not found.")
    return row


def procedures_flagged(*, workspace: Workspace) -> QuerySet[Procedure]:
    return Procedure.objects.filter(memory__workspace=workspace, flagged_at__isnull=False).select_related("memory")


def working_session_get(*, workspace: Workspace, key: str) -> WorkingSession:
    row = WorkingSession.objects.filter(workspace=workspace, key=key).first()
    if row is None:
        raise NotFound(f"Working memory session {key!r} not found.")
    return row


def working_items(*, session: WorkingSession, evicted_limit: int = 20) -> tuple[list, list]:
    """(the items in focus, highest attention first; the most recently evicted)."""
    in_focus = list(session.items.filter(status=WorkingMemoryItemStatus.IN_FOCUS).order_by("-attention", "loaded_at", "id"))
    evicted = list(session.items.filter(status=WorkingMemoryItemStatus.EVICTED).order_by("-evicted_at", "-id")[:evicted_limit])
    return in_focus, evicted


def scratchpad_get(*, workspace: Workspace, task: str) -> Scratchpad:
    row = Scratchpad.objects.filter(workspace=workspace, task=task).first()
    if row is None:
        raise NotFound(f"Scratchpad {task!r} not found.")
    return row


def checkpoint_get(*, scratchpad: Scratchpad, checkpoint_id: int | None = None, label: str | None = None) -> ScratchpadCheckpoint:
    rows = scratchpad.checkpoints.all()
    row = rows.filter(pk=checkpoint_id).first() if checkpoint_id else rows.filter(label=label).order_by("-id").first()
    if row is None:
        raise NotFound("Checkpoint not found.")
    return row


def trusted_state_current(*, workspace: Workspace) -> list[TrustedState]:
    """The current value of every key (the latest version), deleted keys left out."""
    latest = (TrustedState.objects.filter(workspace=workspace).order_by("key", "-version").distinct("key"))
    return [row for row in latest if not row.deleted]


def trusted_state_as_of(*, workspace_id: int, as_of: datetime | None = None) -> list[tuple[int, str, str]]:
    """(id, key, value) of every key's value as it stood at `as_of` (now when None), deleted
    keys left out, by key: what a context pack's trusted-state section serves."""
    rows = TrustedState.objects.filter(workspace_id=workspace_id)
    if as_of:
        rows = rows.filter(created_at__lte=as_of)
    latest = {}
    for pk, key, value, deleted in rows.order_by("key", "version").values_list("pk", "key", "value", "deleted"):
        latest[key] = (pk, value, deleted)
    return [(pk, key, value) for key, (pk, value, deleted) in latest.items() if not deleted]


def working_items_in_focus(*, workspace_id: int, session_key: str) -> list[WorkingMemoryItem]:
    """The session's items in focus, highest attention first (a pack's working-memory section)."""
    return list(WorkingMemoryItem.objects.filter(session__workspace_id=workspace_id, session__key=session_key,
                                                 status=WorkingMemoryItemStatus.IN_FOCUS).order_by("-attention", "id"))


def trusted_state_history(*, workspace: Workspace, key: str) -> list[TrustedState]:
    rows = list(TrustedState.objects.filter(workspace=workspace, key=key).select_related("set_by").order_by("-version"))
    if not rows:
        raise NotFound(f"Trusted state {key!r} not found.")
    return rows


def _uncut_tails(quiet_minutes: int):
    cut = Subquery(EpisodeCursor.objects.filter(conversation_id=OuterRef("pk")).values("last_interaction_id")[:1])
    return conversations_quiet_past(cut=cut, quiet_since=timezone.now() - timedelta(minutes=quiet_minutes))


def conversations_with_uncut_tail(*, quiet_minutes: int) -> list[int]:
    """Conversations with processed interactions past their last episode that went quiet:
    not active any more, or nothing logged for `quiet_minutes`."""
    return list(_uncut_tails(quiet_minutes).exclude(workspace_id__in=workspaces_importing())
                .order_by("pk").values_list("pk", flat=True)[:500])


def episode_tails_count(workspace: Workspace) -> int:
    """For /status: quiet conversations whose last turns wait for the episode flush."""
    from django.conf import settings

    return _uncut_tails(settings.MNEMO_EPISODE_QUIET_MINUTES).filter(workspace=workspace).count()


def memory_pending_count(workspace: Workspace) -> int:
    return Memory.objects.filter(workspace=workspace, embedding__isnull=True).count()


def memory_candidate_count(workspace: Workspace) -> int:
    return Memory.objects.filter(workspace=workspace, status="candidate").count()


def memory_growth(*, workspace_id: int, days: int = 90) -> tuple[list[str], dict[str, list[int]], dict[str, list[int]]]:
    """Memories by status, and active memories by type, per day: the snapshot the last decay
    run of each day recorded (core.jobs), then the counts as they are now (today's point).
    Returns (days, by status, by type), one value per day per series."""
    snapshots = [(day, counts.get("memories", {}))
                 for day, counts in job_run_daily_counts(name="memory.decay", workspace_id=workspace_id, days=days)]
    today = timezone.now().date().isoformat()
    snapshots = [s for s in snapshots if s[0] != today] + [(today, memory_counts(workspace_id=workspace_id))]
    statuses = sorted({status for _, counts in snapshots for status in counts})
    types = sorted({t for _, counts in snapshots for t in counts.get("active", {})})
    by_status = {s: [sum(counts.get(s, {}).values()) for _, counts in snapshots] for s in statuses}
    by_type = {t: [counts.get("active", {}).get(t, 0) for _, counts in snapshots] for t in types}
    return [day for day, _ in snapshots], by_status, by_type


def memory_counts(*, workspace_id: int) -> dict[str, dict[str, int]]:
    """The workspace's memories by status, then type (one grouped count on the
    workspace/status/type index)."""
    counts: dict[str, dict[str, int]] = {}
    grouped = (Memory.objects.filter(workspace_id=workspace_id).values_list("status", "type")
               .annotate(n=Count("pk")).order_by())
    for status, type_, n in grouped:
        counts.setdefault(status, {})[type_] = n
    return counts


def closed_claims(*, interaction_ids) -> set[tuple[str, str, int]]:
    """(type, text hash, interaction) of every memory no longer open — rejected, the original
    of an edit, merged away, graduated, archived — citing these interactions: the claims a
    rebuild must not propose again (memory.services.rebuilding)."""
    return set(MemoryEvidence.objects.filter(interaction_id__in=list(interaction_ids))
               .exclude(memory__status__in=OPEN_STATUSES)
               .values_list("memory__type", "memory__text_hash", "interaction_id"))


# --- the dashboard's procedures, censors, working memory and scratchpads pages ------------------

def procedure_list(*, workspace: Workspace, status: str | None = None, flagged: bool | None = None,
                   text: str | None = None, order: str = "newest") -> QuerySet[Procedure]:
    """The workspace's procedures (every status unless asked), newest first or by
    effectiveness ("worst" first: what needs a look)."""
    rows = Procedure.objects.filter(memory__workspace=workspace).select_related("memory")
    if status:
        rows = rows.filter(memory__status=status)
    if flagged is not None:
        rows = rows.filter(flagged_at__isnull=not flagged)
    if text:
        rows = rows.filter(Q(name__icontains=text) | Q(memory__text__icontains=text))
    if order == "worst":
        return rows.order_by("effectiveness", "-activation_count", "-memory_id")
    return rows.order_by("-memory__created_at", "-memory_id")


def censor_list(*, workspace: Workspace, status: str | None = None, action: str | None = None,
                learned: str | None = None, text: str | None = None) -> QuerySet[Censor]:
    """The workspace's censors, newest first. `learned`: "any" for censors learned from a
    failure, or the kind of failure (decision, procedure, episode)."""
    rows = Censor.objects.filter(memory__workspace=workspace).select_related("memory")
    if status:
        rows = rows.filter(memory__status=status)
    if action:
        rows = rows.filter(action=action)
    if learned == "any":
        rows = rows.filter(memory__source__startswith="learned_from_")
    elif learned:
        rows = rows.filter(memory__source=f"learned_from_{learned}")
    if text:
        rows = rows.filter(Q(trigger__icontains=text) | Q(reason__icontains=text) | Q(memory__text__icontains=text))
    return rows.order_by("-memory__created_at", "-memory_id")


def censor_false_positives(*, censor: Censor) -> list[AuditEvent]:
    """The false positives people reported (censor_false_positive audits each, with its note)."""
    return list(AuditEvent.objects.filter(workspace_id=censor.memory.workspace_id, verb="censor.false_positive",
                                          target_type="memory.memory", target_id=str(censor.pk))
                .select_related("actor_user", "actor_api_key__agent").order_by("-at", "-id"))


def censors_learned_from(*, workspace_id: int, kind: str, source_id: int) -> list[Memory]:
    """The censors a failure taught (memory.services.learning's provenance)."""
    return list(Memory.objects.filter(workspace_id=workspace_id, type="censor",
                                      metadata__learned_from={"kind": kind, "id": source_id}).order_by("id"))


def _last_write(target_type: str):
    """The latest audited write to the outer row (a session or a scratchpad): who wrote it."""
    return AuditEvent.objects.filter(workspace_id=OuterRef("workspace_id"), target_type=target_type,
                                     target_id=Cast(OuterRef("pk"), TextField())).order_by("-at", "-id")


def _written_by_agent(rows: QuerySet, target_type: str, agent_id: int | None) -> QuerySet:
    last = _last_write(target_type)
    rows = rows.annotate(writer_label=Subquery(last.values("actor_label")[:1]),
                         writer_agent_id=Subquery(last.values("actor_api_key__agent_id")[:1]),
                         writer_agent=Subquery(last.values("actor_api_key__agent__name")[:1]))
    if agent_id:
        rows = rows.filter(Exists(_last_write(target_type).filter(actor_api_key__agent_id=agent_id)))
    return rows


def memory_writers(*, workspace: Workspace, target_type: str) -> list[tuple[int, str]]:
    """(agent id, name) of the agents whose keys wrote rows of `target_type`: the pages'
    "written by" filter choices."""
    return list(AuditEvent.objects.filter(workspace=workspace, target_type=target_type,
                                          actor_api_key__agent__isnull=False)
                .values_list("actor_api_key__agent_id", "actor_api_key__agent__name")
                .order_by("actor_api_key__agent__name", "actor_api_key__agent_id").distinct()[:200])


WORKING_SESSION = "memory.workingsession"
SCRATCHPAD = "memory.scratchpad"


def working_session_list(*, workspace: Workspace, text: str | None = None,
                         agent_id: int | None = None) -> QuerySet[WorkingSession]:
    rows = WorkingSession.objects.filter(workspace=workspace).annotate(
        in_focus=Count("items", filter=Q(items__status=WorkingMemoryItemStatus.IN_FOCUS)),
        evicted=Count("items", filter=Q(items__status=WorkingMemoryItemStatus.EVICTED)))
    if text:
        rows = rows.filter(Q(key__icontains=text) | Q(task__icontains=text))
    return _written_by_agent(rows, WORKING_SESSION, agent_id).order_by("-updated_at", "-id")


def _by_id(model, workspace: Workspace, pk: int, what: str):
    row = model.objects.filter(workspace=workspace, pk=pk).first()
    if row is None:
        raise NotFound(f"{what} {pk} not found.")
    return row


def working_session_by_id(*, workspace: Workspace, session_id: int) -> WorkingSession:
    return _by_id(WorkingSession, workspace, session_id, "Working memory session")


def working_evicted(*, session: WorkingSession) -> QuerySet[WorkingMemoryItem]:
    return session.items.filter(status=WorkingMemoryItemStatus.EVICTED).order_by("-evicted_at", "-id")


def scratchpad_list(*, workspace: Workspace, text: str | None = None,
                    agent_id: int | None = None) -> QuerySet[Scratchpad]:
    rows = Scratchpad.objects.filter(workspace=workspace).annotate(checkpoint_count=Count("checkpoints")).defer("state")
    if text:
        rows = rows.filter(task__icontains=text)
    return _written_by_agent(rows, SCRATCHPAD, agent_id).order_by("-updated_at", "-id")


def scratchpad_by_id(*, workspace: Workspace, scratchpad_id: int) -> Scratchpad:
    return _by_id(Scratchpad, workspace, scratchpad_id, "Scratchpad")


def scratchpad_checkpoints(*, scratchpad: Scratchpad) -> QuerySet[ScratchpadCheckpoint]:
    return scratchpad.checkpoints.order_by("-id")


def target_history(*, workspace: Workspace, target_type: str, target_id: int, limit: int = 50) -> list[AuditEvent]:
    """The latest audited changes to one row, newest first."""
    return list(AuditEvent.objects.filter(workspace=workspace, target_type=target_type, target_id=str(target_id))
                .select_related("actor_user", "actor_api_key__agent").order_by("-at", "-id")[:limit])


def pattern_sources_nearest(*, pattern_ids: list[int], vector: list[float]) -> dict[int, int]:
    """For each pattern, its source (consolidated into it, of any status) nearest the query
    vector: the one whose interactions a pattern served on its own cites."""
    if not pattern_ids:
        return {}
    rows = (Memory.objects.filter(consolidated_into_id__in=pattern_ids, embedding__isnull=False)
            .order_by("consolidated_into_id", CosineDistance("embedding", vector), "id")
            .distinct("consolidated_into_id").values_list("consolidated_into_id", "id"))
    return dict(rows)
