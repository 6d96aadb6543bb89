"""Which review items form one claim (DESIGN.md: what one derivation step finds about one
span of one interaction is one claim, reviewed once with its facets). Pure: no Django, so
the rule is tested on its own (tests/review/test_claims.py).

The rule: two facets belong to one claim when they come from the same source interaction
and their spans overlap ("I'm in Berlin now" → the memory, the `lives_in` relationship,
the entity "Berlin", the `location` profile value). Facets of one interaction without a
span (the extractor quoted nothing it could find) share that interaction's span-less
claim. Facets without a source interaction — and conflicts, which have their own
side-by-side decision — are never grouped: each is a claim of its own. The rule is
transitive: a facet that overlaps two open claims of its interaction joins them into one.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

Span = tuple[int, int] | None


def overlaps(a: Span, b: Span) -> bool:
    """Spans overlap when they share at least one character; two missing spans are the
    same (the whole message, unlocated); a located span and a missing one do not."""
    if a is None or b is None:
        return a is None and b is None
    if a == b:  # the same quote, also an empty one
        return True
    return a[0] < b[1] and b[0] < a[1]


def union(a: Span, b: Span) -> Span:
    if a is None or b is None:
        return a if b is None else b
    return (min(a[0], b[0]), max(a[1], b[1]))


@dataclass(frozen=True)
class OpenClaim:
    id: int
    span: Span


@dataclass(frozen=True)
class Join:
    """Where a new facet goes: into `claim` (None: a new claim), which absorbs `absorbed`
    (other open claims of the interaction the facet bridges), covering `span` afterwards."""

    claim: int | None
    absorbed: tuple[int, ...]
    span: Span


def claim_join(span: Span, open_claims: Sequence[OpenClaim]) -> Join:
    """The claim a facet with `span` joins among the open claims of its interaction. The
    oldest overlapping claim (lowest id) keeps its id, so links to it stay valid."""
    hits = sorted((c for c in open_claims if overlaps(span, c.span)), key=lambda c: c.id)
    if not hits:
        return Join(claim=None, absorbed=(), span=span)
    covered = span
    for claim in hits:
        covered = union(covered, claim.span)
    return Join(claim=hits[0].id, absorbed=tuple(c.id for c in hits[1:]), span=covered)


@dataclass(frozen=True)
class Facet:
    """One item to group: its key, its source interaction (None: never grouped) and span."""

    key: int
    source: int | None
    span: Span
    groupable: bool = True


def group(facets: Iterable[Facet]) -> list[list[int]]:
    """Facets in claims, for a backfill: the same rule as opening them one by one in this
    order (claim_join), so both paths agree. Claims keep the order of their first facet."""
    claims: dict[int, list[int]] = {}
    spans: dict[int, Span] = {}
    by_source: dict[int, list[int]] = {}
    next_id = 0
    for facet in facets:
        if facet.source is None or not facet.groupable:
            claims[next_id] = [facet.key]
            next_id += 1
            continue
        open_ids = by_source.setdefault(facet.source, [])
        join = claim_join(facet.span, [OpenClaim(i, spans[i]) for i in open_ids])
        if join.claim is None:
            claims[next_id], spans[next_id] = [facet.key], facet.span
            open_ids.append(next_id)
            next_id += 1
            continue
        for absorbed in join.absorbed:
            claims[join.claim] += claims.pop(absorbed)
            open_ids.remove(absorbed)
        claims[join.claim].append(facet.key)
        spans[join.claim] = join.span
    return [keys for _, keys in sorted(claims.items())]
