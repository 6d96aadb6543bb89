"""The review layer (core.layers): derives nothing itself; it holds the queue items of
every later layer's candidates. Listed right after the log, so an erasure runs its eraser
after theirs (an item whose target they removed goes too) and before the log's."""

from core.layers import Layer
from review import archive, selectors, services

LAYER = Layer(
    name="review",
    erase=services.review_items_erase,
    move=services.review_items_move,
    restore=services.review_items_restore,
    counts={"Pending review": selectors.pending_count},
    archive=archive.TABLES,
)
