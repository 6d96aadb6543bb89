"""The gaps layer (core.layers): capability gaps from what agents declined or failed to do
(after memory: it reads nothing of the layers before it but the log, and runs last among
the deriving layers so its findings never hold up the others), its review kind, what an
erasure removes and a merge moves, and its counts."""

from core.layers import Layer
from gaps import archive, review, selectors, services
from gaps.rebuilding import gaps_forget_derived

LAYER = Layer(
    name="gaps",
    prepare=services.interactions_prepare_gaps,
    write=services.interactions_write_gaps,
    erase=services.gaps_erase,
    move=services.gaps_move,
    restore=services.gaps_restore,
    reset=gaps_forget_derived,
    review_kinds=review.KINDS,
    pending={"gaps to embed": selectors.unembedded_count},
    counts={"Open capability gaps": selectors.open_gap_count, "TODOs from gaps": selectors.todo_count},
    archive=archive.TABLES,
)
