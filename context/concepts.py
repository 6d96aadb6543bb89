"""The Hebbian links between concepts (seed 001: `concept_links`, `key_cooccurrence`).

Concepts (`core.concepts`) that appear together in one interaction are linked; each
co-occurrence strengthens the link towards 1 ("cells that fire together wire together"),
links decay when not seen, and the scorer credits a candidate whose concepts are linked to
the query's. Everything here is pure, and the order of every result is independent of
string hashing, so two processes derive the same links."""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Mapping


def cooccurrence_pairs(concepts: Iterable[str]) -> list[tuple[str, str]]:
    """Every pair of distinct concepts, each as (a, b) with a < b, sorted: the keys of the
    concept-link table."""
    return list(itertools.combinations(sorted(set(concepts)), 2))


def link_weight(links: Mapping[tuple[str, str], float], a: str, b: str) -> float:
    """The weight of the link between two concepts, stored under the sorted pair."""
    return links.get((a, b) if a < b else (b, a), 0.0)


def strengthen(weight: float, *, rate: float = 0.1) -> float:
    """One Hebbian co-occurrence: move the weight `rate` of the way towards 1. Saturating, so
    a pair seen a thousand times is not a thousand times stronger than one seen ten times
    (from 0: 0.1 after one, 0.65 after ten, 0.99 after forty-four)."""
    if not 0 <= rate <= 1:
        raise ValueError(f"rate must be between 0 and 1, got {rate}")
    weight = _unit(weight)
    return weight + rate * (1.0 - weight)


def decay(weight: float, *, days: float, half_life_days: float = 90) -> float:
    """Exponential forgetting: a link not reinforced for `half_life_days` keeps half its
    weight. 90 days: an association unseen for a season is half as telling. A negative age
    (clock skew) counts as no time passed."""
    if not half_life_days > 0:
        raise ValueError(f"half_life_days must be positive, got {half_life_days}")
    return _unit(weight) * 0.5 ** (max(days, 0.0) / half_life_days)


def expand(query_concepts: Iterable[str], links: Mapping[tuple[str, str], float], *,
           top: int = 10, min_weight: float = 0.2) -> dict[str, float]:
    """Concepts linked to the query's, strongest first (ties by name), with the weight of
    their strongest link to any query concept; the query's own concepts are excluded. Links
    under `min_weight` are noise from one or two chance co-occurrences and are ignored."""
    originals = set(query_concepts)
    neighbours: dict[str, float] = {}
    for (a, b), weight in links.items():
        if weight < min_weight or (a in originals) == (b in originals):
            continue
        other = b if a in originals else a
        neighbours[other] = max(neighbours.get(other, 0.0), weight)
    ranked = sorted(neighbours.items(), key=lambda item: (-item[1], item[0]))
    return dict(ranked[:max(top, 0)])


def _unit(value: float) -> float:
    """Clamp to 0..1; NaN counts as 0."""
    return min(float(value), 1.0) if value > 0 else 0.0
