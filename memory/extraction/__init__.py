"""Deterministic, named rules that find memories in a message: who the speaker is, what
they like, what happened to them or what they plan, decisions and requirements, how to do
something, and what never to do again. Plus `episode`, the episodic memory of a run of
turns.

Pure Python, no Django, so the rules run in microseconds and are property-tested.

Every candidate goes to a person for review (or is stored with the certainty "extracted",
below what was said verbatim), so the rules choose precision over recall: a cue fires only
on first-person statements; questions ("do you like hiking?"), conditions ("if I were
rich"), wishes ("I'd love to"), quoted and reported speech ("she said I'm ...") and
objects that only the conversation can explain ("I love that!") stay quiet. A rule that is
unsure says nothing: a wrong memory costs more than a missed one, which the LLM extractor
or a later message may still supply.

Each candidate's text is a standalone sentence that names the speaker as "{speaker}" (the
caller puts the name in) with relative times resolved to dates by `memory.timeexpr`, and
it quotes the exact span it came from. Rule names are stable, `<family>.<cue>`, and listed
with a description in RULES for the review screen. Seed 000: decision, requirement and
constraint cues become entity candidates (route "entity"), not memories."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from datetime import datetime

from memory.extraction import censors, decisions, episodic, identity, preferences, procedures
from memory.extraction._common import Source
from memory.extraction._types import ENTITY_KINDS, ROUTES, TYPES, EpisodeDraft, MemoryCandidate
from memory.extraction.episodes import MAX_EPISODE_CHARS, episode

__all__ = [
    "ENTITY_KINDS",
    "MAX_EPISODE_CHARS",
    "ROUTES",
    "RULES",
    "TYPES",
    "EpisodeDraft",
    "MemoryCandidate",
    "episode",
    "extract",
]

RULES: dict[str, str] = {
    **identity.RULES,
    **preferences.RULES,
    **episodic.RULES,
    **decisions.RULES,
    **procedures.RULES,
    **censors.RULES,
}

_RULES: tuple[Callable[[Source], Iterable[MemoryCandidate]], ...] = (
    *identity.IDENTITY_RULES,
    *preferences.PREFERENCE_RULES,
    *episodic.EPISODIC_RULES,
    *decisions.DECISION_RULES,
    *procedures.PROCEDURE_RULES,
    *censors.CENSOR_RULES,
)


def _candidates(source: Source) -> Iterator[MemoryCandidate]:
    for rule in _RULES:
        yield from rule(source)


def extract(text: str, *, anchor: datetime) -> list[MemoryCandidate]:
    """The memory candidates in `text`, said at `anchor` (timezone-aware): one per (type,
    attribute, value), from its most confident wording (the earliest on a tie), in text
    order."""
    best: dict[tuple[str, str, str], MemoryCandidate] = {}
    for found in _candidates(Source.of(text, anchor)):
        key = (found.type, found.attribute, found.value)
        current = best.get(key)
        if current is None or (-found.confidence, found.start) < (-current.confidence, current.start):
            best[key] = found
    return sorted(best.values(), key=lambda c: (c.start, c.end, c.rule))
