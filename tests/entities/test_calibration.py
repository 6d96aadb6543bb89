"""Calibration of stated confidence against outcomes: exact numbers on a small fixture,
bins that include their lower edge and close at 1.0, and properties that hold for any
set of reviewed decisions."""

from __future__ import annotations

import pytest
from hypothesis import given, strategies as st

from entities.calibration import OUTCOME_VALUES, calibration

# Six reviewed decisions; values success 1, partial 0.5, failure 0.
FIXTURE = [(0.9, "success"), (0.9, "failure"), (0.7, "partial"), (0.5, "success"), (0.2, "failure"), (1.0, "success")]


def test_the_fixture_gives_the_hand_computed_brier_score_and_overconfidence():
    report = calibration(FIXTURE)
    assert report["count"] == 6
    # Squared errors 0.01 + 0.81 + 0.04 + 0.25 + 0.04 + 0 = 1.15.
    assert report["brier"] == pytest.approx(1.15 / 6)
    # Mean confidence 4.2 / 6 = 0.7 against a mean outcome of 3.5 / 6.
    assert report["overconfidence"] == pytest.approx(0.7 - 3.5 / 6)


def test_the_fixture_fills_five_equal_bins_and_keeps_the_empty_one():
    bins = calibration(FIXTURE)["bins"]
    assert [(b["from"], b["to"]) for b in bins] == [(0.0, 0.2), (0.2, 0.4), (0.4, 0.6), (0.6, 0.8), (0.8, 1.0)]
    assert [b["count"] for b in bins] == [0, 1, 1, 1, 3]
    assert bins[0]["mean_confidence"] is None and bins[0]["success_rate"] is None
    assert (bins[1]["mean_confidence"], bins[1]["success_rate"]) == (pytest.approx(0.2), 0.0)
    assert (bins[2]["mean_confidence"], bins[2]["success_rate"]) == (pytest.approx(0.5), 1.0)
    assert (bins[3]["mean_confidence"], bins[3]["success_rate"]) == (pytest.approx(0.7), 0.5)
    assert (bins[4]["mean_confidence"], bins[4]["success_rate"]) == (pytest.approx(2.8 / 3), pytest.approx(2 / 3))


def test_no_reviewed_decisions_give_no_scores_but_the_full_table():
    report = calibration([], bins=4)
    assert report["count"] == 0 and report["brier"] is None and report["overconfidence"] is None
    assert [b["count"] for b in report["bins"]] == [0, 0, 0, 0]
    assert all(b["mean_confidence"] is None and b["success_rate"] is None for b in report["bins"])


def test_a_confidence_on_an_edge_lands_in_the_bin_that_starts_there():
    # 0.29 * 100 is 28.999… in floating point; the bin reported as starting at 0.29 holds it.
    bins = calibration([(0.29, "success")], bins=100)["bins"]
    assert bins[29]["from"] == 0.29 and bins[29]["count"] == 1


def test_certainty_lands_in_the_last_bin():
    bins = calibration([(1.0, "success"), (0.0, "failure")], bins=3)["bins"]
    assert [b["count"] for b in bins] == [1, 0, 1]


@pytest.mark.parametrize("pairs, bins", [([(1.5, "success")], 5), ([(-0.1, "failure")], 5),
                                         ([(float("nan"), "success")], 5), ([(0.5, "meh")], 5), ([], 0)])
def test_it_rejects_what_it_cannot_score(pairs, bins):
    with pytest.raises(ValueError):
        calibration(pairs, bins=bins)


# --- properties -----------------------------------------------------------------------------------

confidences = st.floats(min_value=0, max_value=1, allow_nan=False)
outcomes = st.sampled_from(list(OUTCOME_VALUES))
pairs_strategy = st.lists(st.tuples(confidences, outcomes), max_size=60)


@given(pairs=pairs_strategy, bins=st.integers(min_value=1, max_value=20))
def test_scores_are_bounded_and_every_decision_is_in_exactly_one_bin(pairs, bins):
    report = calibration(pairs, bins=bins)
    assert report["count"] == len(pairs)
    assert len(report["bins"]) == bins
    assert sum(b["count"] for b in report["bins"]) == len(pairs)
    if pairs:
        assert 0 <= report["brier"] <= 1
        assert -1 <= report["overconfidence"] <= 1
    for b in report["bins"]:
        if b["count"]:
            # A mean of equal floats may differ from them in the last bit.
            assert b["from"] - 1e-9 <= b["mean_confidence"] <= b["to"] + 1e-9
            assert 0 <= b["success_rate"] <= 1


@given(outcome_list=st.lists(outcomes, min_size=1, max_size=60), bins=st.integers(min_value=1, max_value=20))
def test_perfect_calibration_scores_zero(outcome_list, bins):
    report = calibration([(OUTCOME_VALUES[o], o) for o in outcome_list], bins=bins)
    assert report["brier"] == 0
    assert report["overconfidence"] == pytest.approx(0)


@given(pairs=st.lists(st.tuples(confidences, outcomes), min_size=1, max_size=60))
def test_the_order_of_the_decisions_does_not_matter(pairs):
    forward, backward = calibration(pairs), calibration(list(reversed(pairs)))
    assert forward["count"] == backward["count"]
    assert forward["brier"] == pytest.approx(backward["brier"])
    assert [b["count"] for b in forward["bins"]] == [b["count"] for b in backward["bins"]]
