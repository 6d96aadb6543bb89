"""Consolidation policy (issue 19 part 1; seeds 001 and 004): which related memories form a
pattern, which member states it best, and the extractive pattern's wording. Pure: no
Django, no I/O; the service (memory.services.consolidation) reads the candidates through the
HNSW index and writes what this module decides.

A group is built around one seed memory from its nearest neighbours (never all pairs):
a neighbour joins when it is of the same type, lies within the time window of the seed,
and is close by embedding — or a little less close but sharing concepts with the seed (and
its subject, when both have one). The group's best-supported statement is the member most
central by embedding (the smallest summed distance to the others), ties going to the most
reinforced, then the oldest.

A pattern's growth is bounded by what it states, not by who it touches: every source lies
within `max_distance` of the pattern (of its central statement when it is made, of its
embedding when a later memory would reinforce it) and its sources span at most
`window_days`. A group reaching a member of an existing pattern no longer pulls its other
members in through that one (chains of near neighbours grew LoCoMo patterns to dozens of
episodes about different things): the extractive text is one member's statement, and a
source farther than `max_distance` from it is not what it says, on any chat."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date, datetime

import numpy as np

# Seed 001's tiers: what a pattern of each source type becomes (episodes about the same
# subject become a fact; a preference said many times stays a preference; a repeated
# procedure stays a procedure), and its weight by support: 0.9 from `strong_support`
# occurrences, 0.6 from `min_support` (seed 001's high and medium weights).
TARGET_TYPE = {"episodic": "fact", "preference": "preference", "procedure": "procedure", "fact": "fact"}
STRONG_IMPORTANCE = 0.9
SUPPORTED_IMPORTANCE = 0.6
# A neighbour sharing this many concepts with the seed may lie this much further away.
MIN_SHARED_CONCEPTS = 2
CONCEPT_DISTANCE_SLACK = 0.05
MAX_PATTERN_CHARS = 1200


@dataclass(frozen=True)
class Settings:
    """A workspace's consolidation policy (memory.models.ConsolidationPolicy)."""

    enabled: bool = True
    # Episodes are opt-in. Recall no longer pays for their patterns (a pattern is served in
    # place of its sources, never beside them: within ~1 point of R@10 on LoCoMo with a year
    # of decay), but at this distance a pair's episodes fall together whatever they are
    # about, and by default each pattern would be a review card (bench/RESULTS.md,
    # consolidation, second round).
    source_types: tuple[str, ...] = ("preference", "procedure")
    min_support: int = 3
    strong_support: int = 5
    max_distance: float = 0.25
    window_days: int = 365
    max_patterns_per_run: int = 50


DEFAULTS = Settings()


@dataclass(frozen=True)
class Item:
    id: int
    type: str
    text: str
    embedding: Sequence[float]
    concepts: frozenset[str]
    at: datetime | None
    subject_id: int | None = None
    reinforcement: int = 0
    confidence: float = 1.0
    pattern_id: int | None = None  # the pattern it was already consolidated into


def validate(settings: Settings) -> dict[str, str]:
    """Field -> what is wrong with it; empty when the policy is usable."""
    errors = {}
    unknown = sorted(set(settings.source_types) - set(TARGET_TYPE))
    if unknown:
        errors["source_types"] = f"Cannot consolidate {unknown[0]!r}; known: {', '.join(TARGET_TYPE)}."
    if not 2 <= settings.min_support <= 100:
        errors["min_support"] = "A pattern needs between 2 and 100 occurrences."
    if not settings.min_support <= settings.strong_support <= 1000:
        errors["strong_support"] = "Strong support is at least the minimum support (and at most 1000)."
    if not 0 < settings.max_distance < 1:
        errors["max_distance"] = "The maximum distance lies strictly between 0 and 1 (cosine)."
    if not 1 <= settings.window_days <= 36500:
        errors["window_days"] = "The time window is between 1 and 36500 days."
    if not 1 <= settings.max_patterns_per_run <= 1000:
        errors["max_patterns_per_run"] = "Between 1 and 1000 patterns per run."
    return errors


def _unit(vectors: Sequence[Sequence[float]]) -> np.ndarray:
    matrix = np.asarray(vectors, dtype=np.float64)
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    return matrix / np.where(norms == 0, 1.0, norms)


def joins(seed: Item, other: Item, distance: float, settings: Settings) -> bool:
    if other.type != seed.type or other.id == seed.id:
        return False
    if seed.at and other.at and abs((seed.at - other.at).days) > settings.window_days:
        return False
    if distance <= settings.max_distance:
        return True
    same_subject = seed.subject_id is None or other.subject_id is None or seed.subject_id == other.subject_id
    return (same_subject and distance <= settings.max_distance + CONCEPT_DISTANCE_SLACK
            and len(seed.concepts & other.concepts) >= MIN_SHARED_CONCEPTS)


def group(seed: Item, neighbours: Sequence[tuple[Item, float]], settings: Settings) -> list[Item]:
    """The seed and the neighbours (with their distance to it) that join it."""
    members = {seed.id: seed}
    for item, distance in neighbours:
        if item.id not in members and joins(seed, item, distance, settings):
            members[item.id] = item
    return list(members.values())


def cosine_distance(a: Sequence[float], b: Sequence[float]) -> float:
    unit = _unit([a, b])
    return float(1.0 - unit[0] @ unit[1])


def tightened(members: Sequence[Item], settings: Settings) -> list[Item]:
    """The members a new pattern may cite: those within `max_distance` of the group's central
    statement, and of those the most that fit in `window_days` with it (the seed's group is
    only bounded around the seed: twice that across). Recomputed until stable, since
    dropping members can move the centre; the central member always stays."""
    kept = list(members)
    while len(kept) > 1:
        best = central(kept)
        unit = _unit([item.embedding for item in kept])
        distances = 1.0 - unit @ unit[[item.id for item in kept].index(best.id)]
        close = [item for item, distance in zip(kept, distances)
                 if item.id == best.id or distance <= settings.max_distance + 1e-9]
        fits = _in_window(best, close, settings.window_days)
        if len(fits) == len(kept):
            break
        kept = fits
    return kept


def _in_window(best: Item, items: list[Item], days: int) -> list[Item]:
    """The most of `items` whose times fit in one span of `days` that holds `best`'s time
    (items without a time always fit)."""
    if best.at is None:
        return items
    timed = [item for item in items if item.at is not None]
    starts = [item.at for item in timed if item.at <= best.at and (best.at - item.at).days <= days]
    chosen: set[int] = set()
    for start in starts:
        inside = {item.id for item in timed if start <= item.at and (item.at - start).days <= days}
        if len(inside) > len(chosen):
            chosen = inside
    return [item for item in items if item.at is None or item.id in chosen]


@dataclass(frozen=True)
class Pattern:
    """An open pattern as a later group sees it: what it was made around and when its
    sources lie."""

    id: int
    embedding: Sequence[float]
    first: date | None
    last: date | None
    open: bool = True  # not rejected or otherwise decided away


def reinforces(pattern: Pattern, item: Item, settings: Settings) -> bool:
    """Whether `item` may join `pattern` as a new source: close to the pattern itself (not
    merely to one of its sources) and keeping its span within the window."""
    if cosine_distance(pattern.embedding, item.embedding) > settings.max_distance:
        return False
    if item.at is None or pattern.first is None or pattern.last is None:
        return True
    first, last = min(pattern.first, item.at.date()), max(pattern.last, item.at.date())
    return (last - first).days <= settings.window_days


def central(members: Sequence[Item]) -> Item:
    """The member most central by embedding; ties: most reinforced, then oldest."""
    unit = _unit([item.embedding for item in members])
    summed = (1.0 - unit @ unit.T).sum(axis=1)
    return min(zip(members, summed), key=lambda pair: (round(float(pair[1]), 6), -pair[0].reinforcement,
                                                        pair[0].id))[0]


def centroid(members: Sequence[Item]) -> list[float]:
    """The members' mean direction, unit length: what the pattern is found by."""
    mean = _unit([item.embedding for item in members]).mean(axis=0)
    norm = float(np.linalg.norm(mean)) or 1.0
    return (mean / norm).tolist()


def importance(support: int, settings: Settings) -> float:
    return STRONG_IMPORTANCE if support >= settings.strong_support else SUPPORTED_IMPORTANCE


def span_label(first: date, last: date) -> str:
    """"May 2023", "Mar–Jun 2023", "Dec 2022–Feb 2023"."""
    if (first.year, first.month) == (last.year, last.month):
        return first.strftime("%b %Y")
    if first.year == last.year:
        return f"{first.strftime('%b')}–{last.strftime('%b %Y')}"
    return f"{first.strftime('%b %Y')}–{last.strftime('%b %Y')}"


# An episode opens with its day and who talked (memory.extraction.episodes): the pattern
# spans many days, so that opening is dropped and the span says when instead.
_EPISODE_OPENING = re.compile(r"^On [^,]{3,40}, [^.]{1,200}? talked\.\s*")
_SUPPORT_WORDS = {"episodic": "in {n} episodes", "procedure": "repeated {n} times"}


def statement(text: str, source_type: str) -> str:
    return _EPISODE_OPENING.sub("", text).strip() if source_type == "episodic" else text.strip()


def pattern_text(*, text: str, source_type: str, support: int, first: date, last: date) -> str:
    """The extractive pattern: the best-supported statement, its support and time span
    ("Caroline goes running most mornings — said 5 times, Mar–Jun 2023")."""
    words = _SUPPORT_WORDS.get(source_type, "said {n} times").format(n=support)
    suffix = f" — {words}, {span_label(first, last)}"
    body = statement(text, source_type).rstrip(" .")
    if len(body) + len(suffix) > MAX_PATTERN_CHARS:
        body = body[:MAX_PATTERN_CHARS - len(suffix) - 1].rstrip() + "…"
    return body + suffix


def acceptable_llm_text(text: object) -> str | None:
    """The LLM's pattern when it is usable as a draft: a non-empty string within the length
    (the privacy filter is the service's, as for any draft)."""
    if not isinstance(text, str):
        return None
    cleaned = " ".join(text.split())
    return cleaned if 0 < len(cleaned) <= MAX_PATTERN_CHARS else None
