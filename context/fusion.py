"""Reciprocal-rank fusion (Cormack, Clarke & Büttcher, SIGIR 2009): merge ranked lists from
retrievers whose scores live on different scales (pgvector's cosine similarity, PostgreSQL's
ts_rank) using only the ranks: fused(d) = sum over lists i of w_i / (k + rank_i(d)).

Why k = 60: the paper found it near-optimal across TREC collections and insensitive around
that value, and pgvector-python's hybrid-search example uses it. A large k flattens the
curve, so agreement between lists outweighs one list's top spot: an item ranked 3rd by both
lists (2/63 = 0.032) beats one ranked 1st by one list and missing from the other
(1/61 = 0.016). A small k (say 1) would let a single list's first place dominate."""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from typing import TypeVar

K = TypeVar("K", bound=Hashable)

DEFAULT_K = 60


def reciprocal_rank(rank: int, k: int = DEFAULT_K) -> float:
    """One list's contribution for an item at 1-based `rank`: 1 / (k + rank)."""
    if rank < 1:
        raise ValueError(f"ranks start at 1, got {rank}")
    if k < 0:
        raise ValueError(f"k must be at least 0, got {k}")
    return 1.0 / (k + rank)


def ranks(ranking: Sequence[K]) -> dict[K, int]:
    """1-based rank of each item; an item listed twice keeps its first (best) rank."""
    positions: dict[K, int] = {}
    for position, item in enumerate(ranking, start=1):
        positions.setdefault(item, position)
    return positions


def rrf(rankings: Sequence[Sequence[K]], k: int = DEFAULT_K,
        weights: Sequence[float] | None = None) -> dict[K, float]:
    """Fused score of every item in any ranking, best first; ties keep the order in which
    the items were first seen (list by list), so the result never depends on hashing."""
    if weights is None:
        weights = [1.0] * len(rankings)
    if len(weights) != len(rankings):
        raise ValueError(f"{len(weights)} weights for {len(rankings)} rankings")
    if any(not weight >= 0 for weight in weights):
        raise ValueError(f"weights must be non-negative numbers, got {list(weights)}")
    fused: dict[K, float] = {}
    for ranking, weight in zip(rankings, weights):
        for item, rank in ranks(ranking).items():
            fused[item] = fused.get(item, 0.0) + weight * reciprocal_rank(rank, k)
    first_seen = {item: index for index, item in enumerate(fused)}
    return dict(sorted(fused.items(), key=lambda pair: (-pair[1], first_seen[pair[0]])))
