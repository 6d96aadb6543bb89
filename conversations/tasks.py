from __future__ import annotations

from celery import shared_task
from django.db import OperationalError

from conversations import services
from conversations.rebuild import rebuild_run, rebuilds_resume_stale
from core.concurrency import is_retryable_conflict
from core.models import Workspace
from core.selectors import workspaces_importing
from core.providers import ProviderError


@shared_task(name="conversations.process_interactions", bind=True, acks_late=True, max_retries=5)
def process_interactions(self, interaction_ids: list[int]) -> int:
    """Run the derivation pipeline (core.layers: embeddings, entities, memories, concept
    links) over new interactions. Idempotent: interactions already processed are skipped."""
    try:
        processed = services.interactions_index(interaction_ids=interaction_ids)
    except ProviderError as exc:
        if not exc.retryable:
            raise
        raise self.retry(exc=exc, countdown=min(300, 5 * 2 ** self.request.retries))
    except OperationalError as exc:
        # Conflicts the service's own retries did not get past (core.concurrency): later.
        if not is_retryable_conflict(exc):
            raise
        raise self.retry(exc=exc, countdown=min(60, 2 ** self.request.retries))
    if processed >= services.PROCESS_CHUNK:
        # A full batch: more may be waiting that no task of its own will come for.
        process_interactions.delay([])
    return processed


@shared_task(name="conversations.summarise_conversation", acks_late=True)
def summarise_conversation(conversation_id: int) -> int | None:
    summary = services.conversation_summarise(conversation_id=conversation_id)
    services.conversation_closed_announce(conversation_id=conversation_id)
    return summary.pk if summary else None


@shared_task(name="conversations.sweep", acks_late=True)
def sweep_conversations() -> int:
    """Beat: conversations that went quiet become idle (and later closed); each one that
    changed gets a summary covering its latest interaction."""
    changed = services.conversations_sweep()
    for conversation_id in changed:
        summarise_conversation.delay(conversation_id)
    return len(changed)


@shared_task(name="conversations.drain_backlog", acks_late=True)
def drain_backlog() -> int:
    """Beat: interactions whose processing task was lost still get processed."""
    return services.interactions_backlog_drain()


@shared_task(name="conversations.suggest_identity_links", acks_late=True)
def suggest_identity_links(workspace_id: int | None = None) -> int:
    """Beat: propose identity links in every workspace, for people to accept or reject;
    with `workspace_id`, in that one (after a rebuild). Idempotent: a pair proposed before
    is not proposed again."""
    workspaces = Workspace.objects.exclude(pk__in=workspaces_importing())
    if workspace_id is not None:
        workspaces = workspaces.filter(pk=workspace_id)
    return sum(services.identity_links_suggest(workspace=workspace) for workspace in workspaces)


@shared_task(name="conversations.index_missing", acks_late=True)
def index_missing(workspace_id: int | None = None, max_batches: int | None = None) -> int:
    """After an import whose vectors came from another embedding model: embed its log.
    Without a workspace (beat): every workspace whose import's task was lost, at most
    `max_batches` batches a run (the next run goes on)."""
    ids = [workspace_id] if workspace_id is not None else services.workspaces_index_missing()
    done = batches = 0
    for pk in ids:
        while max_batches is None or batches < max_batches:
            batch = services.interactions_index_missing(workspace_id=pk)
            if not batch:
                break
            done, batches = done + batch, batches + 1
    return done


@shared_task(name="conversations.kinds_missing", acks_late=True)
def kinds_missing(max_batches: int | None = None) -> int:
    """Beat: the kinds of things processed interactions name, for those indexed before Mnemo
    derived them (an install upgraded past issue 22's kinds): what `manage.py index_kinds`
    does, at most `max_batches` batches a run, so that an upgraded install's log gets its
    kinds over the next runs without anyone running the command."""
    return services.interactions_kinds_fill(max_batches=max_batches)


@shared_task(name="conversations.rebuild", acks_late=True)
def rebuild(job_id: str) -> int:
    """A rebuild the API started (conversations.rebuild), or one the beat found stalled.
    Resumable, so a redelivered task carries on where the last committed batch ended."""
    return rebuild_run(job_id=job_id, trigger="api").done


@shared_task(name="conversations.rebuild_resume_stale", acks_late=True)
def rebuild_resume_stale() -> list[str]:
    """Beat: rebuilds whose runner died mid-way are started again."""
    stale = rebuilds_resume_stale()
    for job_id in stale:
        rebuild.delay(job_id)
    return stale
