"""The entities layer (core.layers): profile values, relationships and entity candidates
from the rules, then the embeddings of what they made; its review kinds and counts. An
entity's own rows are erased and moved by entities.services itself (it is the entry
point of erasure and merging), so this layer has no eraser or mover."""

from core.layers import Layer
from entities import archive, review, search, selectors
from entities.services.embedding import interactions_embed_entities
from entities.services.extracting import entities_forget_derived, interactions_extract

LAYER = Layer(
    name="entities",
    write=interactions_extract,
    after_write=interactions_embed_entities,
    reset=entities_forget_derived,
    review_kinds=review.KINDS,
    pending={"entities to embed": selectors.embedding_pending_count},
    counts={"Entities": selectors.entity_count, "Link suggestions": selectors.link_suggestion_pending_count},
    search_kinds=search.SEARCH_KINDS,
    archive=archive.TABLES,
)
