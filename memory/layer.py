"""The memory layer (core.layers): memories and episodes from new interactions (after
the entities layer, so graduation signal 4 sees this batch's entity candidates), its
review kinds, what an erasure removes and a merge moves, and its counts."""

from core.layers import Layer
from memory import archive, review, search, selectors, services, tasks
from memory.services.rebuilding import memories_forget_derived

LAYER = Layer(
    name="memories",
    prepare=services.interactions_prepare_memories,
    write=services.interactions_write_memories,
    erase=services.memories_erase,
    move=services.memories_move,
    restore=services.memories_restore,
    reset=memories_forget_derived,
    review_kinds=review.KINDS,
    pending={"memories to embed": selectors.memory_pending_count, "episode tails": selectors.episode_tails_count},
    counts={"Memory candidates": selectors.memory_candidate_count},
    search_kinds=search.SEARCH_KINDS,
    conversation_closed=tasks.consolidate_closed,
    archive=archive.TABLES,
)
