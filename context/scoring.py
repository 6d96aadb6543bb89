"""The linking core (seed 001): pure relevance scoring of recall candidates, with the
per-dimension breakdown that lets a pack be explained and replayed.

Every dimension is a value in 0..1 for one candidate against one query. The score is their
weighted mean: contribution(d) = weight(d) * value(d) / sum of the counted weights, so the
contributions in the breakdown add up to the score and the score stays in 0..1 whatever the
weights. A dimension the query gives nothing to compare with (no time range, no concepts,
no entities) is not counted: it would lower every candidate alike and make scores of
different queries incomparable. The score of a candidate depends only on the query and the
candidate, never on the other candidates, and nothing here reads or writes storage."""

from __future__ import annotations

import functools
import math
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass, fields
from datetime import date, datetime, timedelta, timezone
from typing import Any, NamedTuple

from context.concepts import link_weight
from context.fusion import DEFAULT_K, reciprocal_rank

DIMENSIONS = ("similarity", "lexical", "fusion", "recency", "importance", "confidence", "certainty",
              "reinforcement", "concept", "entity", "time")

# Seed 004 decay constants by memory type (and by kind for rows that have no type): episodes
# and raw turns go stale in weeks, conversation summaries a little slower, facts, preferences
# and identity in about a year, procedures (and censors, which are rules too) over years.
RECENCY_HALF_LIFE_DAYS: Mapping[str, float] = {
    "episodic": 30, "interaction": 30,
    "summary": 60,
    "fact": 365, "preference": 365, "identity": 365, "entity": 365, "relationship": 365,
    "procedure": 1500, "censor": 1500,
}
# Anything else is assumed to be durable knowledge.
DEFAULT_HALF_LIFE_DAYS = RECENCY_HALF_LIFE_DAYS["fact"]

# Seed 004's separation of certainty: a quote beats a rule's extraction beats a pattern
# consolidated from several episodes beats an LLM's inference. "" (interactions, entities:
# not applicable) sits between extracted and consolidated; an unknown value is trusted least.
CERTAINTY_VALUE: Mapping[str, float] = {
    "verbatim": 1.0, "extracted": 0.85, "": 0.8, "consolidated": 0.75, "inferred": 0.6,
}

# Reinforcement saturates: log(1 + n) / log(1 + 10), so the 5th restatement (the graduation
# threshold) is worth 0.75 and anything from 10 on is worth 1.
REINFORCEMENT_SATURATION = 10
# Being served is not counted: a memory a pack served is no more relevant to the next
# question. It was counted as a tenth of a restatement until measured: after one pass of 997
# LoCoMo packs (one episode served 244 times) R@10 fell 1.1 / 1.8 points on the two parts of
# the development half, the often-served episodes rising for every question
# (bench/RESULTS.md, "Session 24"). Access still keeps a memory from decaying (memory.decay).

# A query concept reached only through a Hebbian link counts for at most half a direct hit:
# an association says the topic is near, not that it is the same.
LINK_CREDIT = 0.5

# Partial time credit outside the query's range falls linearly to 0 over a margin of half
# the range's length, and at least two days ("yesterday" is often off by a time zone).
TIME_MARGIN_FRACTION = 0.5
MIN_TIME_MARGIN_DAYS = 2.0


@dataclass(frozen=True, kw_only=True)
class Candidate:
    key: Hashable  # e.g. ("memory", 12)
    kind: str  # interaction | memory | entity | relationship | summary | procedure | …
    type: str = ""  # memory type, "" for other kinds
    text: str
    similarity: float | None = None  # cosine similarity from the vector search
    lexical_rank: int | None = None  # 1-based rank in the full-text results
    dense_rank: int | None = None  # 1-based rank in the vector results
    occurred_at: datetime | None = None  # event time
    learned_at: datetime | None = None
    importance: float = 0.5
    confidence: float = 1.0
    certainty: str = ""  # verbatim | extracted | inferred | consolidated | ""
    reinforcement: int = 0
    concepts: frozenset[str] = frozenset()
    entity_ids: frozenset[int] = frozenset()
    status: str = "active"  # carried for the caller; which statuses to recall is the selector's call

    def __post_init__(self) -> None:
        for name in ("lexical_rank", "dense_rank"):
            rank = getattr(self, name)
            if rank is not None and rank < 1:
                raise ValueError(f"{name} starts at 1, got {rank} for {self.key!r}")


@dataclass(frozen=True, kw_only=True)
class Query:
    text: str
    concepts: frozenset[str] = frozenset()
    entity_ids: frozenset[int] = frozenset()
    time_range: tuple[date, date] | None = None  # inclusive, from the query's time cues
    now: datetime
    # Multiplies Weights.recency (0: ignore age). None keeps the default weight; the per-type
    # half-lives already make an episode fade faster than a fact.
    recency_weight: float | None = None

    def __post_init__(self) -> None:
        if self.recency_weight is not None and not 0 <= self.recency_weight < math.inf:
            raise ValueError(f"recency_weight must be a non-negative number, got {self.recency_weight}")


@dataclass(frozen=True)
class Weights:
    """Relevance (similarity, lexical, fusion, concept, entity) holds 0.68 of the default
    total of 1, priors (importance, confidence, certainty, reinforcement) 0.22 and recency
    0.10. So a candidate that matches nothing scores at most 0.32 (0.39 when the query names
    no concepts or entities and those two are not counted), below a candidate that clearly
    matches, and recency mostly orders items that are about equally relevant."""

    # The embedding is the one signal that sees paraphrase: the strongest single evidence.
    similarity: float = 0.30
    # Exact words: names, numbers and rare terms that an embedding blurs.
    lexical: float = 0.10
    # Both retrievers agreeing, judged by ranks alone, so robust to either's score scale.
    fusion: float = 0.10
    # A tie-breaker between equally relevant items, not a reason to recall something.
    recency: float = 0.10
    # Priors about the item itself, whatever the query.
    importance: float = 0.08
    confidence: float = 0.05
    certainty: float = 0.05
    reinforcement: float = 0.04
    # The query's topics reached through the concept graph; a softer form of lexical.
    concept: float = 0.08
    # Naming a person or thing the query is about is strong evidence of relevance.
    entity: float = 0.10
    # Only counted when the query has a time range; then a dated question ("what did she do
    # in May 2023?") is answered mostly by items from that time, hence the largest prior.
    time: float = 0.15

    def __post_init__(self) -> None:
        for item in fields(self):
            value = getattr(self, item.name)
            if not 0 <= value < math.inf:
                raise ValueError(f"weight {item.name} must be a non-negative number, got {value}")


DEFAULT = Weights()


class Scored(NamedTuple):
    candidate: Candidate
    score: float  # 0..1
    breakdown: dict[str, float]  # weighted contribution of each dimension; they add up to score


def score(query: Query, candidates: Sequence[Candidate], *, weights: Weights = DEFAULT,
          concept_links: Mapping[tuple[str, str], float] | None = None) -> list[Scored]:
    """Score every candidate, best first; equal scores are ordered by key (candidates that
    share a key, which a recall should not produce, keep their input order)."""
    neighbours = _neighbours(query.concepts, concept_links or {})
    counted = _counted_weights(query, weights)
    total = sum(counted.values())
    weighted = [counted.get(name, 0.0) for name in DIMENSIONS]
    now = _utc(query.now)
    scored = []
    for candidate in candidates:
        values = _value_tuple(query, candidate, neighbours, now)
        breakdown = dict(zip(DIMENSIONS, [weight * value / total for weight, value in zip(weighted, values)]
                             if total else [0.0] * len(DIMENSIONS)))
        scored.append(Scored(candidate, sum(breakdown.values()), breakdown))
    scored.sort(key=lambda item: (-item.score, _orderable(item.candidate.key)))
    return scored


def concept_terms(query: Query, concepts: Sequence[frozenset[str]], *, weights: Weights = DEFAULT,
                  concept_links: Mapping[tuple[str, str], float] | None = None) -> list[float]:
    """The concept dimension's weighted contribution (its breakdown entry in score()) for
    candidates holding these concepts, and nothing else computed: for re-scoring one
    dimension of candidates already scored."""
    counted = _counted_weights(query, weights)
    total = sum(counted.values())
    if not total or "concept" not in counted:
        return [0.0] * len(concepts)
    share = counted["concept"] / total
    neighbours = _neighbours(query.concepts, concept_links or {})
    return [share * _concept_overlap(query.concepts, held, neighbours) for held in concepts]


def explain(scored: Scored) -> list[tuple[str, float]]:
    """The dimensions that contributed, largest first (ties in DIMENSIONS order)."""
    contributions = [(name, scored.breakdown[name]) for name in DIMENSIONS if scored.breakdown.get(name)]
    return sorted(contributions, key=lambda pair: -pair[1])


def dimension_values(query: Query, candidate: Candidate,
                     concept_links: Mapping[tuple[str, str], float]) -> dict[str, float]:
    """Each dimension's value in 0..1, before weighting."""
    return _values(query, candidate, _neighbours(query.concepts, concept_links))


def _values(query: Query, candidate: Candidate, neighbours: Mapping[str, Mapping[str, float]]) -> dict[str, float]:
    return dict(zip(DIMENSIONS, _value_tuple(query, candidate, neighbours, _utc(query.now))))


def _value_tuple(query: Query, candidate: Candidate, neighbours: Mapping[str, Mapping[str, float]],
                 now: datetime) -> tuple[float, ...]:
    """The values in DIMENSIONS order (`now`: the query's, in UTC). score() makes a few
    hundred of these a request, hence the cached rank functions and no dict per candidate."""
    return (
        _unit(candidate.similarity or 0.0),
        _lexical(candidate.lexical_rank),
        _fusion(candidate.dense_rank, candidate.lexical_rank),
        _recency(candidate, now),
        _unit(candidate.importance),
        _unit(candidate.confidence),
        CERTAINTY_VALUE.get(candidate.certainty, CERTAINTY_VALUE["inferred"]),
        _reinforcement(candidate.reinforcement),
        _concept_overlap(query.concepts, candidate.concepts, neighbours),
        1.0 if query.entity_ids & candidate.entity_ids else 0.0,
        _time_match(query.time_range, candidate.occurred_at),
    )


def half_life_days(candidate: Candidate) -> float:
    """By memory type, else by kind, else the durable default."""
    return RECENCY_HALF_LIFE_DAYS.get(candidate.type) or RECENCY_HALF_LIFE_DAYS.get(
        candidate.kind, DEFAULT_HALF_LIFE_DAYS)


def recency(candidate: Candidate, now: datetime) -> float:
    """Exponential decay with the candidate's half-life, from its event time (else the time it
    was learned). Undated candidates get no recency credit; a future time counts as now."""
    return _recency(candidate, _utc(now))


_DAY = timedelta(days=1)


def _recency(candidate: Candidate, now: datetime) -> float:
    moment = candidate.occurred_at or candidate.learned_at
    if moment is None:
        return 0.0
    age_days = max((now - _utc(moment)) / _DAY, 0.0)
    return 0.5 ** (age_days / half_life_days(candidate))


def _counted_weights(query: Query, weights: Weights) -> dict[str, float]:
    counted = {name: getattr(weights, name) for name in DIMENSIONS}
    if query.recency_weight is not None:
        counted["recency"] *= query.recency_weight
    if query.time_range is None:
        del counted["time"]
    if not query.concepts:
        del counted["concept"]
    if not query.entity_ids:
        del counted["entity"]
    return counted


@functools.lru_cache(maxsize=4096)
def _lexical(rank: int | None) -> float:
    """DCG's discount, 1 / (1 + log2(rank)): 1, 0.5, 0.39, 0.33 for the first four, 0.25 at
    8. Full-text ranks matter a lot at the top and little further down; the flatter RRF view
    of the same rank is the fusion dimension's."""
    return 0.0 if rank is None else 1.0 / (1.0 + math.log2(rank))


@functools.lru_cache(maxsize=16384)
def _fusion(dense_rank: int | None, lexical_rank: int | None) -> float:
    """RRF of the two ranks, divided by its maximum (first in both lists): 1.0 for first in
    both, 0.5 for first in one list only, 0.87 for tenth in both."""
    fused = sum(reciprocal_rank(rank, DEFAULT_K) for rank in (dense_rank, lexical_rank) if rank is not None)
    return fused / (2 * reciprocal_rank(1, DEFAULT_K))


def _reinforcement(reinforcement: int) -> float:
    return min(math.log1p(max(reinforcement, 0)) / math.log1p(REINFORCEMENT_SATURATION), 1.0)


def _neighbours(query_concepts: frozenset[str], links: Mapping[tuple[str, str], float]) -> dict[str, dict[str, float]]:
    """For each query concept (in a fixed order), the concepts it is linked to and the weight
    of that link: found once per query rather than looked up for every candidate's concept."""
    neighbours: dict[str, dict[str, float]] = {concept: {} for concept in sorted(query_concepts)}
    for a, b in links:  # one pass (a query of 20 concepts over 400 links made 8,000 checks)
        if a != b and (a in neighbours or b in neighbours):
            weight = link_weight(links, a, b)  # the sorted pair's, as stored
            if a in neighbours:
                neighbours[a][b] = weight
            if b in neighbours:
                neighbours[b][a] = weight
    return neighbours


def _concept_overlap(query_concepts: frozenset[str], candidate_concepts: frozenset[str],
                     neighbours: Mapping[str, Mapping[str, float]]) -> float:
    """The mean, over the query's concepts, of how well the candidate covers each: 1 when it
    has the concept, else LINK_CREDIT times its strongest link to one of the candidate's."""
    if not query_concepts or not candidate_concepts:
        return 0.0  # what the loop gives: no concept covered, nothing linked
    covered = []
    for concept, linked in neighbours.items():  # sorted: a fixed order keeps the float sum reproducible
        if concept in candidate_concepts:
            covered.append(1.0)
        else:
            strongest = max((_unit(linked[other]) for other in linked.keys() & candidate_concepts), default=0.0)
            covered.append(LINK_CREDIT * strongest)
    return sum(covered) / len(covered)


def _time_match(time_range: tuple[date, date] | None, occurred_at: datetime | None) -> float:
    """1 when the event's calendar day (in its own time zone) is inside the inclusive range,
    falling linearly to 0 over the margin outside it."""
    if time_range is None or occurred_at is None:
        return 0.0
    start, end = sorted(time_range)
    day = occurred_at.date()
    if start <= day <= end:
        return 1.0
    outside_days = (start - day).days if day < start else (day - end).days
    margin = max(MIN_TIME_MARGIN_DAYS, TIME_MARGIN_FRACTION * ((end - start).days + 1))
    return max(1.0 - outside_days / margin, 0.0)


def _unit(value: float) -> float:
    """Clamp to 0..1; NaN counts as 0."""
    return min(float(value), 1.0) if value > 0 else 0.0


def _utc(moment: datetime) -> datetime:
    """Naive datetimes are taken as UTC, so a naive and an aware time can be compared."""
    return moment.replace(tzinfo=timezone.utc) if moment.tzinfo is None else moment


def _orderable(key: Any) -> tuple:
    """A sort key for any mix of hashable keys: numbers, then strings, then tuples (element by
    element), then anything else by type name and repr, so ("memory", 2) sorts before
    ("memory", 12) and a mix of key shapes never raises."""
    if isinstance(key, (int, float)):
        return (0, key)
    if isinstance(key, str):
        return (1, key)
    if isinstance(key, tuple):
        if len(key) == 2 and type(key[0]) is str and type(key[1]) is int:  # (kind, id): most keys
            return (2, ((1, key[0]), (0, key[1])))
        return (2, tuple(_orderable(part) for part in key))
    return (3, type(key).__name__, repr(key))
