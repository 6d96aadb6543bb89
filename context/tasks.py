from __future__ import annotations

from celery import shared_task

from memory.services import memories_touch


@shared_task(name="context.touch_memories", acks_late=True)
def touch_memories(memory_ids: list[int]) -> int:
    """Memories a pack served count as accessed (seed 004: retrieval strengthens), off the
    request that served them."""
    return memories_touch(memory_ids=memory_ids)
