"""The read side across all layers: unified recall and token-budgeted context packs.

The pure parts live here as plain modules with no Django imports, so they can be tested in
microseconds and property-tested: `fusion` (reciprocal-rank fusion), `scoring` (the linking
core: relevance with a per-dimension breakdown), `concepts` (concept extraction and Hebbian
links) and `packing` (filling sections in trust order within a token budget)."""
