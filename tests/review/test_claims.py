"""review.claims: which facets form one claim — pure, no database."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from review.claims import Facet, OpenClaim, claim_join, group, overlaps


def test_spans_that_share_a_character_overlap_and_touching_ones_do_not():
    assert overlaps((0, 17), (8, 14))
    assert overlaps((8, 14), (0, 17))
    assert not overlaps((0, 5), (5, 9))
    assert overlaps((3, 3), (3, 3))  # the same (empty) quote
    assert overlaps(None, None)  # both unlocated in the same message
    assert not overlaps(None, (0, 4))


def test_a_facet_joins_the_open_claim_its_span_overlaps():
    join = claim_join((8, 14), [OpenClaim(1, (30, 40)), OpenClaim(2, (0, 17))])
    assert (join.claim, join.absorbed, join.span) == (2, (), (0, 17))


def test_a_facet_outside_every_claim_starts_a_new_one():
    assert claim_join((20, 25), [OpenClaim(1, (0, 17))]).claim is None


def test_a_facet_bridging_two_claims_joins_them_into_the_older():
    join = claim_join((10, 32), [OpenClaim(7, (30, 40)), OpenClaim(3, (0, 17))])
    assert (join.claim, join.absorbed, join.span) == (3, (7,), (0, 40))


def test_i_am_in_berlin_now_is_one_claim_of_four_facets():
    # the memory, the entity "Berlin", the lives_in relationship, the location profile value
    facets = [Facet(1, 10, (0, 17)), Facet(2, 10, (7, 13)), Facet(3, 10, (0, 17)), Facet(4, 10, (0, 17))]
    assert group(facets) == [[1, 2, 3, 4]]


def test_other_messages_sources_missing_and_conflicts_stay_apart():
    facets = [Facet(1, 10, (0, 17)), Facet(2, 11, (0, 17)), Facet(3, None, None), Facet(4, None, None),
              Facet(5, 10, (0, 17), groupable=False), Facet(6, 10, (20, 30))]
    assert group(facets) == [[1], [2], [3], [4], [5], [6]]


def test_unlocated_facets_of_one_message_share_a_claim():
    assert group([Facet(1, 10, None), Facet(2, 10, (0, 4)), Facet(3, 10, None)]) == [[1, 3], [2]]


spans = st.tuples(st.integers(0, 40), st.integers(1, 20)).map(lambda t: (t[0], t[0] + t[1]))
facet_lists = st.lists(st.tuples(st.integers(1, 3), spans), max_size=12)


@given(facet_lists)
def test_grouping_is_a_partition_into_overlap_connected_claims(rows):
    facets = [Facet(i, source, span) for i, (source, span) in enumerate(rows)]
    claims = group(facets)
    assert sorted(k for claim in claims for k in claim) == list(range(len(facets)))
    by_key = {f.key: f for f in facets}
    home = {k: n for n, claim in enumerate(claims) for k in claim}
    for a in facets:
        for b in facets:
            if a.source == b.source and overlaps(a.span, b.span):
                assert home[a.key] == home[b.key]  # overlapping facets never end up apart
    for claim in claims:
        assert len({by_key[k].source for k in claim}) == 1  # one interaction per claim
