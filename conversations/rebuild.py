"""Rebuilding a workspace's derived layers from its log (issue 19 part 5): after the rules
or the embedding model change, every layer with a `reset` hook (core.layers) forgets what
it derived that no person decided, then reads the immutable interactions again through the
same `prepare` / `write` steps new messages go through (services.layers_prepare,
layers_write) — there is no second extraction path.

A RebuildJob records the run, so it is idempotent and resumable:
1. reset — one transaction: every chosen layer's `reset` (in reverse pipeline order, as
   erasure runs), the log's high-water mark, phase → derive. It first waits until no
   worker holds a lease on the workspace's backlog (a batch claimed before the rebuild
   would otherwise write after the reset);
2. derive — batches of interactions past the cursor, oldest first: prepare with no lock
   held, then one transaction that locks the job row, checks the cursor has not moved
   (another runner did this batch), writes, and moves the cursor. A kill anywhere loses
   at most the batch in flight, which the next run does again; nothing is written twice;
   Then each chosen layer's `rederive` (what is derived per conversation, not per message:
   summaries, which are immutable and get a superseding version where they now differ),
   step by step past a cursor in the job's report;
3. done — status ok; the messages that arrived meanwhile are handed to the worker, and the
   identity-link scan runs for the workspace.

Messages logged during a rebuild wait in the backlog (services._claim skips a workspace
with an unfinished rebuild, conversations_quiet_past its episode tails) and are derived
after it, in order: never derived twice (the rebuild reads only interactions that were not
waiting when it reset), never lost. A rebuild that failed keeps the workspace waiting until
it is run again (the command, or POST /rebuild), since deriving new messages before old
ones would cut episodes out of order.

Lock order (core.concurrency): the workspace's ingest lock (rank 1: erasure takes it too,
so an erasure waits for the batch being written, and the batch re-reads what is left),
the job row (rank 2, with the backlog), the memory lock (rank 3)."""

from __future__ import annotations

import time
from collections.abc import Callable
from datetime import timedelta

from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import IntegrityError, transaction
from django.db.models import Exists, Max, OuterRef, QuerySet
from django.utils import timezone

from conversations.models import Interaction, InteractionBacklog, RebuildJob
from conversations.services import (
    PROCESS_CHUNK,
    _enqueue_identity_links,
    _enqueue_processing,
    layers_after_write,
    layers_prepare,
    layers_write,
)
from core.concurrency import lock_workspaces, retry_on_conflict
from core.errors import Conflict
from core.jobs import job_run
from core.layers import Layer, rebuildable
from core.logging import mask_secrets
from core.models import Workspace
from core.services import SYSTEM, Actor, audit_record

Progress = Callable[[int, int], None]  # (interactions done, total)


def rebuild_layers(names: list[str] | None = None) -> list[Layer]:
    """The chosen layers in pipeline order (all that can be rebuilt when none is named)."""
    known = {layer.name: layer for layer in rebuildable()}
    unknown = sorted(set(names or ()) - set(known))
    if unknown:
        raise ValidationError({"layers": f"Unknown layer {unknown[0]!r}; layers that can be rebuilt: "
                                         f"{', '.join(known)}."})
    return [layer for name, layer in known.items() if not names or name in names]


def _to_derive(workspace_id: int, *, after: int, high_water: int) -> QuerySet:
    """The log a rebuild reads: up to its high-water mark, minus what waits in the backlog
    (the worker's, once the rebuild is done)."""
    waiting = InteractionBacklog.objects.filter(interaction_id=OuterRef("pk"))
    return (Interaction.objects.filter(workspace_id=workspace_id, pk__gt=after, pk__lte=high_water)
            .exclude(Exists(waiting)))


def rebuild_unfinished(*, workspace: Workspace) -> RebuildJob | None:
    return RebuildJob.objects.filter(workspace=workspace, status__in=RebuildJob.UNFINISHED).first()


def rebuild_plan(*, workspace: Workspace, layer_names: list[str] | None = None) -> dict:
    """What a rebuild would do (the command's --dry-run): changes nothing."""
    chosen = rebuild_layers(layer_names)
    high = Interaction.objects.filter(workspace=workspace).aggregate(high=Max("pk"))["high"] or 0
    unfinished = rebuild_unfinished(workspace=workspace)
    return {"layers": [layer.name for layer in chosen],
            "interactions": _to_derive(workspace.pk, after=0, high_water=high).count(),
            "waiting_in_backlog": InteractionBacklog.objects.filter(workspace=workspace).count(),
            "unfinished": str(unfinished.pk) if unfinished else None}


@transaction.atomic
def rebuild_start(*, workspace: Workspace, layer_names: list[str] | None, actor: Actor = SYSTEM) -> RebuildJob:
    """A queued rebuild; or the workspace's failed one, queued again to resume (with the same
    layers). A rebuild already queued or running is a conflict."""
    chosen = [layer.name for layer in rebuild_layers(layer_names)]
    unfinished = RebuildJob.objects.select_for_update().filter(workspace=workspace,
                                                               status__in=RebuildJob.UNFINISHED).first()
    if unfinished is not None:
        if unfinished.status != RebuildJob.Status.FAILED or (layer_names and chosen != unfinished.layers):
            raise Conflict(f"Rebuild {unfinished.pk} of this workspace ({', '.join(unfinished.layers)}) is "
                           f"{unfinished.status}; let it finish (a failed one resumes with its own layers).",
                           details={"rebuild_id": str(unfinished.pk), "status": unfinished.status})
        unfinished.status, unfinished.updated_at = RebuildJob.Status.QUEUED, timezone.now()
        unfinished.save(update_fields=["status", "updated_at"])
        audit_record(workspace=workspace, actor=actor, verb="workspace.rebuild_resumed", target=unfinished)
        return unfinished
    try:
        with transaction.atomic():
            job = RebuildJob.objects.create(workspace=workspace, layers=chosen, requested_by=actor.label[:200])
    except IntegrityError:
        raise Conflict("Another rebuild of this workspace was started just now.") from None
    audit_record(workspace=workspace, actor=actor, verb="workspace.rebuild_requested", target=job,
                 data={"layers": chosen})
    return job


def rebuild_run(*, job_id, progress: Progress | None = None, batch_size: int = PROCESS_CHUNK,
                trigger: str = "command") -> RebuildJob:
    """Run (or resume) a rebuild to its end; recorded as a JobRun. Raises what failed, after
    marking the job failed (it stays resumable)."""
    job = RebuildJob.objects.get(pk=job_id)
    if job.status == RebuildJob.Status.OK:
        return job
    RebuildJob.objects.filter(pk=job.pk).update(status=RebuildJob.Status.RUNNING, updated_at=timezone.now())
    chosen = rebuild_layers(job.layers)
    try:
        with job_run("conversations.rebuild", workspace_id=job.workspace_id, trigger=trigger) as counts:
            _reset(job.pk, chosen)
            while _batch(job.pk, chosen, batch_size):
                if progress is not None:
                    job = RebuildJob.objects.get(pk=job.pk)
                    progress(job.done, job.total)
            _rederive(job.pk, chosen, batch_size)
            job = _finish(job.pk)
            counts.update(job.report.get("forgotten", {}))
            counts.update(job.report.get("rederived", {}))
            counts["interactions"] = job.done
    except BaseException as exc:
        RebuildJob.objects.filter(pk=job.pk).exclude(status=RebuildJob.Status.OK).update(
            status=RebuildJob.Status.FAILED, updated_at=timezone.now(),
            report={**RebuildJob.objects.get(pk=job.pk).report,
                    "error": mask_secrets(f"{type(exc).__name__}: {exc}")[:2000]})
        raise
    return job


def _reset(job_id, chosen: list[Layer]) -> None:
    """Phase 1, once: wait until no worker holds a batch of the workspace, then forget."""
    deadline = time.monotonic() + settings.MNEMO_CLAIM_LEASE_SECONDS + 5
    while not _try_reset(job_id, chosen):
        if time.monotonic() > deadline:
            raise RuntimeError("A worker still holds messages of this workspace past its lease; try again later.")
        time.sleep(1)


@retry_on_conflict
@transaction.atomic
def _try_reset(job_id, chosen: list[Layer]) -> bool:
    workspace_id = RebuildJob.objects.values_list("workspace_id", flat=True).get(pk=job_id)
    lock_workspaces("ingest", workspace_ids=[workspace_id])
    job = RebuildJob.objects.select_for_update().get(pk=job_id)
    if job.phase != RebuildJob.Phase.RESET:
        return True
    if InteractionBacklog.objects.filter(workspace_id=workspace_id, lease_until__gt=timezone.now()).exists():
        return False
    lock_workspaces("memory", workspace_ids=[workspace_id])
    forgotten: dict[str, int] = {}
    for layer in reversed(chosen):
        forgotten.update(layer.reset(workspace_id))
    job.high_water = Interaction.objects.filter(workspace_id=workspace_id).aggregate(high=Max("pk"))["high"] or 0
    job.total = _to_derive(workspace_id, after=0, high_water=job.high_water).count()
    job.phase, job.updated_at, job.report = RebuildJob.Phase.DERIVE, timezone.now(), {"forgotten": forgotten}
    job.save(update_fields=["high_water", "total", "phase", "updated_at", "report"])
    return True


def _batch(job_id, chosen: list[Layer], batch_size: int) -> bool:
    """Phase 2, one batch; False once the log is read to the high-water mark."""
    job = RebuildJob.objects.get(pk=job_id)
    if job.phase != RebuildJob.Phase.DERIVE:
        return False
    ids = list(_to_derive(job.workspace_id, after=job.cursor, high_water=job.high_water)
               .order_by("id").values_list("id", flat=True)[:batch_size])
    if not ids:
        return False
    interactions = list(Interaction.objects.filter(pk__in=ids).select_related("entity").order_by("id"))
    drafts = layers_prepare(interactions, chosen)
    written = _write(job_id, job.cursor, ids, drafts, chosen)
    layers_after_write(written, chosen)
    return True


@retry_on_conflict
@transaction.atomic
def _write(job_id, cursor: int, ids: list[int], drafts: dict, chosen: list[Layer]) -> list[Interaction]:
    workspace_id = RebuildJob.objects.values_list("workspace_id", flat=True).get(pk=job_id)
    lock_workspaces("ingest", workspace_ids=[workspace_id])
    job = RebuildJob.objects.select_for_update().get(pk=job_id)
    if job.cursor != cursor or job.phase != RebuildJob.Phase.DERIVE:
        return []  # another runner wrote this batch meanwhile
    # The cursor first: the layers count this batch as read again (selectors.
    # interactions_after) in the transaction that writes it.
    job.cursor, job.done, job.updated_at = ids[-1], job.done + len(ids), timezone.now()
    job.save(update_fields=["cursor", "done", "updated_at"])
    # Re-read under the ingest lock: an erasure since prepare removed its messages.
    interactions = list(Interaction.objects.filter(pk__in=ids).select_related("entity").order_by("id"))
    if interactions:
        layers_write(interactions, drafts, chosen)
    return interactions


def _rederive(job_id, chosen: list[Layer], batch_size: int) -> None:
    """Phase 2, after the log: each chosen layer's `rederive` (summaries), step by step past
    a cursor kept in the job's report, so a killed rebuild goes on from the last step."""
    for layer in chosen:
        if layer.rederive is None:
            continue
        while True:
            job = RebuildJob.objects.get(pk=job_id)
            cursors = job.report.get("rederive_cursors", {})
            after = cursors.get(layer.name, 0)
            if job.phase != RebuildJob.Phase.DERIVE or after is None:
                break
            last, counts = layer.rederive(job.workspace_id, after, batch_size)
            _rederive_step(job_id, layer.name, after, last, counts)


@transaction.atomic
def _rederive_step(job_id, name: str, after: int, last: int | None, counts: dict[str, int]) -> None:
    job = RebuildJob.objects.select_for_update().get(pk=job_id)
    cursors = job.report.get("rederive_cursors", {})
    if cursors.get(name, 0) != after:
        return  # another runner took this step
    totals = job.report.get("rederived", {})
    for what, n in counts.items():
        totals[what] = totals.get(what, 0) + n
    job.report = {**job.report, "rederive_cursors": {**cursors, name: last}, "rederived": totals}
    job.updated_at = timezone.now()
    job.save(update_fields=["report", "updated_at"])


@transaction.atomic
def _finish(job_id) -> RebuildJob:
    job = RebuildJob.objects.select_for_update().get(pk=job_id)
    if job.status != RebuildJob.Status.OK:
        now = timezone.now()
        job.phase, job.status, job.finished_at, job.updated_at = RebuildJob.Phase.DONE, RebuildJob.Status.OK, now, now
        job.save(update_fields=["phase", "status", "finished_at", "updated_at"])
        audit_record(workspace=job.workspace, actor=SYSTEM, verb="workspace.rebuild", target=job,
                     data={"layers": job.layers, "interactions": job.done, "forgotten": job.report.get("forgotten", {})})
        waiting = list(InteractionBacklog.objects.filter(workspace_id=job.workspace_id).order_by("interaction_id")
                       .values_list("interaction_id", flat=True))
        if waiting:
            transaction.on_commit(lambda: _enqueue_processing(waiting), robust=True)
        # The entities may have changed: identity links are proposed again for the workspace
        # (the periodic scan's work, bounded the same way), not in a quarter of an hour.
        transaction.on_commit(lambda: _enqueue_identity_links(job.workspace_id), robust=True)
    return job


def rebuilds_resume_stale(*, stale_minutes: int = 10) -> list[str]:
    """Beat: rebuilds whose runner died (a worker killed mid-run, a lost task): queued or
    running with no batch written for `stale_minutes`. Failed ones wait for a person."""
    now = timezone.now()
    stale = list(RebuildJob.objects.filter(status__in=[RebuildJob.Status.QUEUED, RebuildJob.Status.RUNNING],
                                           updated_at__lt=now - timedelta(minutes=stale_minutes))
                 .values_list("pk", flat=True))
    # Touched, so the next beat does not start it a second time before the task runs.
    RebuildJob.objects.filter(pk__in=stale).update(updated_at=now)
    return [str(pk) for pk in stale]
