from __future__ import annotations

from celery import shared_task

from context.services import concept_links_decay
from core.jobs import job_run_per_workspace
from memory.services import decay_reference_time, memories_touch


@shared_task(name="context.touch_memories", acks_late=True)
def touch_memories(memory_ids: list[int]) -> int:
    """Memories a pack served count as accessed (seed 004: retrieval strengthens), off the
    request that served them."""
    return memories_touch(memory_ids=memory_ids)


@shared_task(name="context.decay_concept_links", acks_late=True)
def decay_concept_links(workspace_id: int | None = None, trigger: str = "schedule") -> dict:
    """Beat (nightly) or the maintenance page's "Run now" (one workspace): concept links
    lose weight by their half-life, so recall expands queries through the decayed weights."""
    return job_run_per_workspace(
        "context.decay_concept_links",
        lambda pk: concept_links_decay(workspace_id=pk, as_of=decay_reference_time()),
        workspace_id=workspace_id, trigger=trigger)
