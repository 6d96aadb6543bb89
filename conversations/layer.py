"""The log layer (core.layers): first in the pipeline. It embeds each new interaction
(what marks it processed), is erased last, and moves interactions and conversations with
their entity on a merge."""

from conversations import archive, erasure, search, selectors, services
from conversations.resummarise import summaries_rederive
from core.layers import Layer

LAYER = Layer(
    name="interactions",
    prepare=services.interactions_embed,
    write=services.interactions_index_write,
    interactions_of=erasure.interactions_of,
    interactions_containing=selectors.interaction_ids_containing,
    erase=erasure.log_erase,
    move=erasure.log_move,
    restore=erasure.log_restore,
    reset=services.interactions_index_forget,
    rederive=summaries_rederive,
    pending={
        "interactions": selectors.interactions_unprocessed_count,
        "conversation summaries": selectors.summaries_due_count,
    },
    counts={"Interactions": selectors.interaction_count, "Conversations": selectors.conversation_count},
    search_kinds=search.SEARCH_KINDS,
    archive=archive.TABLES,
)
