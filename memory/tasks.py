from __future__ import annotations

from celery import shared_task

from core.jobs import job_run
from core.providers import ProviderError
from memory import services


@shared_task(name="memory.embed_memories", bind=True, acks_late=True, max_retries=5)
def embed_memories(self, memory_ids: list[int]) -> int:
    """Embed new memories (and fold near duplicates). Idempotent: embedded ones are skipped."""
    try:
        return services.memories_embed(memory_ids=memory_ids)
    except ProviderError as exc:
        if not exc.retryable:
            raise
        raise self.retry(exc=exc, countdown=min(300, 5 * 2 ** self.request.retries))


@shared_task(name="memory.embed_pending", acks_late=True)
def embed_pending() -> int:
    """Beat: memories whose embedding task was lost still get embedded."""
    done = 0
    while (batch := services.memories_embed()) > 0:
        done += batch
    return done


@shared_task(name="memory.flush_episodes", acks_late=True)
def flush_episodes() -> int:
    """Beat: the last turns of conversations that went quiet become an episode too."""
    return services.episodes_flush()


@shared_task(name="memory.consolidate", acks_late=True)
def consolidate() -> dict:
    """Beat: related memories become patterns, a bounded run per workspace (issue 19 part 1)."""
    with job_run("memory.consolidate") as counts:
        for workspace_id in services.consolidation_workspaces():
            services.memories_consolidate(workspace_id=workspace_id, counts=counts)
    return counts


@shared_task(name="memory.consolidate_conversation", acks_late=True)
def consolidate_conversation(workspace_id: int, conversation_id: int) -> dict:
    """A conversation closed: its memories are grouped with what the workspace knows."""
    with job_run("memory.consolidate", workspace_id=workspace_id, trigger="conversation_closed") as counts:
        services.memories_consolidate(workspace_id=workspace_id, conversation_id=conversation_id, counts=counts)
    return counts


def consolidate_closed(conversation) -> None:
    """The memory layer's conversation_closed hook (core.layers)."""
    consolidate_conversation.delay(conversation.workspace_id, conversation.pk)
