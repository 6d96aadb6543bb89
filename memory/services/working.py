"""Working memory, scratchpads and trusted state (seed 004, DESIGN.md).

Working memory is an agent session's focus: at most `capacity` items (7 by default). When
it overflows, the lowest-attention items leave focus and are stored as long-term memories;
nothing is deleted. A scratchpad is a task's exact state, kept as the JSON text the agent
sent, with checkpoints to go back to. Trusted state is what people curate: versioned
key/values, the highest-trust part of a context pack."""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass

from django.core.exceptions import ValidationError
from django.db import transaction
from django.utils import timezone

from core import privacy
from core.errors import Conflict, NotFound
from core.models import Workspace
from core.safe_text import refuse_secrets
from core.services import Actor, audit_record
from memory.models import (
    Memory,
    MemoryType,
    Scratchpad,
    ScratchpadCheckpoint,
    TrustedState,
    WorkingMemoryItem,
    WorkingMemoryItemStatus,
    WorkingSession,
)
from memory.services.memories import Draft, clean_text, memory_store, secret_error

MAX_CAPACITY = 50
MAX_STATE_BYTES = 1_000_000


@dataclass(frozen=True)
class FocusItem:
    content: str
    attention: float = 0.5
    key: str = ""
    kind: str = ""
    memory_id: int | None = None


def _key(item: FocusItem) -> str:
    return item.key or hashlib.sha256(item.content.encode()).hexdigest()[:32]


def _evict(item: WorkingMemoryItem, session: WorkingSession, actor: Actor, now) -> None:
    """Out of focus into long-term memory: a referenced memory is already there; anything
    else is stored (and deduplicated) as a memory of its kind, episodic by default."""
    if item.ref_memory_id is None:
        kind = item.kind if item.kind in MemoryType.values else MemoryType.EPISODIC
        stored = memory_store(workspace_id=session.workspace_id, actor=actor, draft=Draft(
            type=kind, text=item.content, certainty="verbatim", confidence=1.0, importance=item.attention,
            source="working_memory", metadata={"session": session.key, "key": item.key}))
        item.ref_memory = stored.memory
    item.status, item.evicted_at = WorkingMemoryItemStatus.EVICTED, now
    item.save(update_fields=["status", "evicted_at", "ref_memory"])


@transaction.atomic
def working_memory_put(*, workspace: Workspace, session_key: str, items: list[FocusItem], actor: Actor,
                       capacity: int | None = None, task: str | None = None) -> tuple[WorkingSession, list[WorkingMemoryItem]]:
    """Replace the session's focus with `items`. Items left out, and the lowest-attention
    ones past capacity, are evicted to long-term memory. Returns the session and the
    items evicted by this call."""
    refuse_secrets(session=session_key, **{f"items[{i}]": {"key": item.key, "kind": item.kind} for i, item in enumerate(items)})
    session_key = session_key.strip()
    if not session_key or len(session_key) > 200:
        raise ValidationError({"session": "A session key is 1–200 characters."})
    if capacity is not None and not 1 <= capacity <= MAX_CAPACITY:
        raise ValidationError({"capacity": f"Capacity lies between 1 and {MAX_CAPACITY}."})
    for index, item in enumerate(items):
        if not 0 <= item.attention <= 1:
            raise ValidationError({f"items[{index}].attention": "Attention lies between 0 and 1."})
        clean_text(item.content, f"items[{index}].content")
    keys = [_key(item) for item in items]
    if len(set(keys)) != len(keys):
        raise ValidationError({"items": "Two items share a key (or the same content without a key)."})
    refs = {item.memory_id for item in items if item.memory_id}
    known = set(Memory.objects.filter(workspace=workspace, pk__in=refs).values_list("pk", flat=True))
    if refs - known:
        raise NotFound(f"Memory {sorted(refs - known)[0]} not found.")

    now = timezone.now()
    session, _ = WorkingSession.objects.select_for_update(no_key=True).get_or_create(workspace=workspace, key=session_key)
    if capacity is not None:
        session.capacity = capacity
    if task is not None:
        session.task = clean_text(task, "task") if task.strip() else ""
    session.updated_at = now
    session.save()
    current = {i.key: i for i in session.items.filter(status=WorkingMemoryItemStatus.IN_FOCUS)}
    evicted = []
    for key, item in list(current.items()):
        if key not in keys:
            _evict(item, session, actor, now)
            evicted.append(item)
            del current[key]
    for key, item in zip(keys, items):
        content = clean_text(item.content, "content")
        row = current.get(key)
        if row is None:
            current[key] = WorkingMemoryItem.objects.create(session=session, key=key, content=content, kind=item.kind[:40],
                                                            attention=item.attention, ref_memory_id=item.memory_id,
                                                            loaded_at=now)
        else:
            row.content, row.kind, row.attention, row.ref_memory_id = content, item.kind[:40], item.attention, item.memory_id
            row.save(update_fields=["content", "kind", "attention", "ref_memory"])
    overflow = sorted(current.values(), key=lambda i: (i.attention, i.loaded_at, i.pk))
    for item in overflow[:max(0, len(current) - session.capacity)]:
        _evict(item, session, actor, now)
        evicted.append(item)
    audit_record(workspace=workspace, actor=actor, verb="working_memory.put", target=session, data={
        "in_focus": min(len(current), session.capacity), "evicted": [i.pk for i in evicted]})
    return session, evicted


# --- scratchpads ----------------------------------------------------------------------------

def _check_state(raw: str) -> None:
    if len(raw.encode()) > MAX_STATE_BYTES:
        raise ValidationError({"state": f"A scratchpad holds at most {MAX_STATE_BYTES} bytes."})
    try:
        json.loads(raw)
    except ValueError as exc:
        raise ValidationError({"state": f"The state is not valid JSON: {exc}."}) from None
    secrets = privacy.find_secrets(raw)
    if secrets:
        raise secret_error(privacy.SecretFound(secrets[0]), "state")


def _task_key(task: str) -> str:
    refuse_secrets(task=task)
    task = task.strip()
    if not task or len(task) > 200:
        raise ValidationError({"task": "A task key is 1–200 characters."})
    return task


@transaction.atomic
def scratchpad_put(*, workspace: Workspace, task: str, raw_state: str, actor: Actor,
                   expected_version: int | None = None) -> Scratchpad:
    """Store the task's state exactly as sent. With `expected_version`, a write based on an
    older state is refused (409) instead of silently overwriting a newer one."""
    task = _task_key(task)
    _check_state(raw_state)
    pad, created = Scratchpad.objects.select_for_update(no_key=True).get_or_create(
        workspace=workspace, task=task, defaults={"state": raw_state})
    if expected_version is not None and pad.version != expected_version and not created:
        raise Conflict(f"The scratchpad is at version {pad.version}, not {expected_version}.",
                       details={"version": pad.version})
    if not created:
        pad.state, pad.version, pad.updated_at = raw_state, pad.version + 1, timezone.now()
        pad.save(update_fields=["state", "version", "updated_at"])
    audit_record(workspace=workspace, actor=actor, verb="scratchpad.put", target=pad, data={"version": pad.version})
    return pad


@transaction.atomic
def scratchpad_checkpoint(*, scratchpad: Scratchpad, actor: Actor, label: str = "") -> ScratchpadCheckpoint:
    refuse_secrets(label=label)
    label = label.strip()[:200]
    checkpoint = ScratchpadCheckpoint.objects.create(scratchpad=scratchpad, label=label, state=scratchpad.state,
                                                     version=scratchpad.version)
    audit_record(workspace=scratchpad.workspace, actor=actor, verb="scratchpad.checkpoint", target=scratchpad,
                 data={"checkpoint": checkpoint.pk, "label": label, "version": scratchpad.version})
    return checkpoint


@transaction.atomic
def scratchpad_restore(*, scratchpad: Scratchpad, checkpoint: ScratchpadCheckpoint, actor: Actor) -> Scratchpad:
    """The checkpoint's state becomes the current one, as a new version (the state it
    replaces can itself be checkpointed first)."""
    pad = Scratchpad.objects.select_for_update(no_key=True).get(pk=scratchpad.pk)
    pad.state, pad.version, pad.updated_at = checkpoint.state, pad.version + 1, timezone.now()
    pad.save(update_fields=["state", "version", "updated_at"])
    audit_record(workspace=pad.workspace, actor=actor, verb="scratchpad.restore", target=pad,
                 data={"checkpoint": checkpoint.pk, "version": pad.version})
    return pad


# --- trusted state --------------------------------------------------------------------------

def _current_trusted(workspace: Workspace, key: str) -> TrustedState | None:
    return TrustedState.objects.filter(workspace=workspace, key=key).order_by("-version").first()


@transaction.atomic
def trusted_state_set(*, workspace: Workspace, key: str, value: str, actor: Actor, note: str = "",
                      delete: bool = False) -> TrustedState:
    """A new version of `key` (or its removal); setting the value it has changes nothing."""
    refuse_secrets(key=key, note=note)
    key = key.strip()
    if not key or len(key) > 120:
        raise ValidationError({"key": "A key is 1–120 characters."})
    value = "" if delete else clean_text(value, "value")
    Workspace.objects.select_for_update(no_key=True).get(pk=workspace.pk)  # versions are read-then-write
    current = _current_trusted(workspace, key)
    if current is not None and current.deleted == delete and current.value == value:
        return current
    if current is None and delete:
        raise NotFound(f"Trusted state {key!r} not found.")
    row = TrustedState.objects.create(workspace=workspace, key=key, value=value, deleted=delete,
                                      version=(current.version + 1) if current else 1, supersedes=current,
                                      set_by=actor.user, set_by_label=actor.label[:200], note=note[:2000])
    audit_record(workspace=workspace, actor=actor, verb="trusted_state.delete" if delete else "trusted_state.set",
                 target=row, data={"key": key, "version": row.version})
    return row
