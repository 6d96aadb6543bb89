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


@shared_task(name="memory.dedup_scan", acks_late=True)
def dedup_scan() -> dict:
    """Beat: the next slice of active memories, near duplicates proposed for a merge."""
    with job_run("memory.dedup_scan") as counts:
        counts.update(services.memories_dedup_scan())
    return counts


@shared_task(name="memory.learn_from_failures", acks_late=True)
def learn_from_failures() -> dict:
    """Beat: failed decisions and episodes with an outcome propose censors and count
    procedure uses (memory.services.learning). No provider call: episodes are read once
    embedded, and censors are embedded by their own task."""
    with job_run("memory.learn_from_failures") as counts:
        counts.update({f"decisions_{k}": v for k, v in services.censors_learn_from_decisions().items()})
        counts.update({f"episodes_{k}": v for k, v in services.episodes_learn().items()})
    return counts
