from __future__ import annotations

from celery import shared_task

from core.jobs import job_run, job_run_per_workspace
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


@shared_task(name="memory.decay", acks_late=True)
def decay(workspace_id: int | None = None, trigger: str = "schedule") -> dict:
    """Beat (nightly) or the maintenance page's "Run now" (one workspace): memories lose
    strength by their type's half-life and the weakest are archived. Idempotent per day."""
    return job_run_per_workspace(
        "memory.decay", lambda pk: services.memories_decay(workspace_id=pk, as_of=services.decay_reference_time()),
        workspace_id=workspace_id, trigger=trigger)


@shared_task(name="memory.consolidate", acks_late=True)
def consolidate(workspace_id: int | None = None, trigger: str = "schedule") -> dict:
    """Beat (hourly) or the maintenance page's "Run now" (one workspace): related memories
    become patterns, a bounded run per workspace, each recorded as a run of its own (issue 19
    part 1). Beat skips the workspaces whose policy turned consolidation off."""
    ids = [workspace_id] if workspace_id is not None else services.consolidation_workspaces()
    outcome = {"ok": 0, "failed": 0}
    for pk in ids:
        done = job_run_per_workspace("memory.consolidate", lambda w: services.memories_consolidate(workspace_id=w),
                                     workspace_id=pk, trigger=trigger)
        outcome = {key: outcome[key] + done[key] for key in outcome}
    return outcome


@shared_task(name="memory.consolidate_conversation", acks_late=True)
def consolidate_conversation(workspace_id: int, conversation_id: int) -> dict:
    """A conversation closed: its memories are grouped with what the workspace knows."""
    with job_run("memory.consolidate", workspace_id=workspace_id, trigger="conversation_closed") as counts:
        services.memories_consolidate(workspace_id=workspace_id, conversation_id=conversation_id, counts=counts)
    return counts


def consolidate_closed(conversation) -> None:
    """The memory layer's conversation_closed hook (core.layers)."""
    consolidate_conversation.delay(conversation.workspace_id, conversation.pk)


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
