"""What the rules produce: memory candidates and episode drafts."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date

TYPES = ("identity", "preference", "episodic", "fact", "procedure", "censor")
ROUTES = ("memory", "entity")
# Seed 000: decisions, requirements and constraints have their canonical home among the
# entities, so their cues become entity candidates rather than memories.
ENTITY_KINDS = ("decision", "requirement", "constraint")
SPEAKER = "{speaker}"  # the caller puts the speaker's name here


@dataclass(frozen=True)
class MemoryCandidate:
    rule: str  # stable name, "preference.love"
    type: str  # one of TYPES
    text: str  # a standalone sentence naming the speaker as "{speaker}", dates resolved
    attribute: str  # key for contradiction detection ("employer", "likes:hiking"); "" when not keyed
    value: str  # normalised value ("acme", "hiking")
    polarity: int  # +1 states it, -1 denies it ("I don't like hiking")
    confidence: float  # 0..1, how surely the wording says it
    certainty: str  # "extracted": a deterministic rule matched
    importance: float  # 0..1, how much it matters to remember
    quote: str  # text[start:end] of the source
    start: int
    end: int
    event_first: date | None  # when it happened or will happen, from the time words
    event_last: date | None
    route: str  # one of ROUTES
    entity_kind: str | None  # one of ENTITY_KINDS when route is "entity", else None
    name: str  # a short title for entity and procedure candidates, "" otherwise
    steps: tuple[str, ...]  # a procedure's steps, () otherwise
    trigger: str  # what a censor guards against, "" otherwise


@dataclass(frozen=True)
class EpisodeDraft:
    text: str
    first: date
    last: date
    participants: tuple[str, ...]
    turn_ids: tuple[int, ...]  # every turn of the run, in order
    quotes: dict[int, str]  # turn id -> the sentence used from it, verbatim
