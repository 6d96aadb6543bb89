"""The concepts layer (core.layers): links between concepts said together, strengthened
by each new message; an erasure drops the links and the packs that quoted the person."""

from context import archive, services
from core.layers import Layer

LAYER = Layer(
    name="concepts",
    write=services.interactions_link_concepts,
    erase=services.context_erase,
    reset=services.concept_links_forget,
    archive=archive.TABLES,
)
