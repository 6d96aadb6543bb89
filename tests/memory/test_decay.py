"""memory.decay, the forgetting policy (issue 19 part 2): pure, property-tested like
context/scoring.py."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest
from hypothesis import given
from hypothesis import strategies as st

from memory import decay

strengths = st.floats(min_value=0.0, max_value=1.0)
ages = st.floats(min_value=0.0, max_value=20_000.0)
half_lives = st.floats(min_value=0.5, max_value=5_000.0)
counts = st.integers(min_value=0, max_value=10_000)


@given(strengths, ages, ages, half_lives)
def test_strength_never_rises_with_time(strength, a, b, half_life):
    early, late = sorted((a, b))
    assert decay.decayed(strength, days=late, half_life_days=half_life) <= \
        decay.decayed(strength, days=early, half_life_days=half_life)


@given(strengths, half_lives)
def test_one_half_life_halves_the_strength(strength, half_life):
    assert decay.decayed(strength, days=half_life, half_life_days=half_life) == pytest.approx(strength / 2)


@given(strengths, ages, ages, half_lives)
def test_two_steps_equal_one_step_of_their_sum(strength, a, b, half_life):
    # What makes a run killed mid-way and finished later land where one run would have.
    stepped = decay.decayed(decay.decayed(strength, days=a, half_life_days=half_life), days=b, half_life_days=half_life)
    assert stepped == pytest.approx(decay.decayed(strength, days=a + b, half_life_days=half_life), abs=1e-12)


@given(strengths, half_lives)
def test_no_time_and_negative_time_change_nothing(strength, half_life):
    assert decay.decayed(strength, days=0, half_life_days=half_life) == strength
    assert decay.decayed(strength, days=-3, half_life_days=half_life) == strength


@given(st.floats(allow_nan=True), ages, half_lives)
def test_strength_stays_between_0_and_1(strength, days, half_life):
    assert 0.0 <= decay.decayed(strength, days=days, half_life_days=half_life) <= 1.0


@given(half_lives, counts, counts, st.integers(min_value=1, max_value=100))
def test_reinforcement_and_use_lengthen_the_half_life(base, reinforcements, accesses, more):
    before = decay.effective_half_life(base, reinforcements=reinforcements, accesses=accesses)
    assert decay.effective_half_life(base, reinforcements=reinforcements + more, accesses=accesses) > before
    assert decay.effective_half_life(base, reinforcements=reinforcements, accesses=accesses + more) > before
    assert before >= base


@given(strengths, st.floats(min_value=1.0, max_value=5_000.0), half_lives, counts)
def test_a_reinforced_memory_keeps_more_strength(strength, days, base, reinforcements):
    plain = decay.decayed(strength, days=days, half_life_days=decay.effective_half_life(base))
    confirmed = decay.decayed(strength, days=days, half_life_days=decay.effective_half_life(
        base, reinforcements=reinforcements + 1))
    assert confirmed >= plain


def test_the_spacing_effect_by_the_numbers():
    assert decay.effective_half_life(30) == 30
    assert decay.effective_half_life(30, reinforcements=1) == 60
    assert decay.effective_half_life(30, reinforcements=3) == 90
    assert decay.effective_half_life(30, accesses=4) == 60  # four uses count as one restatement


def test_the_anchor_is_the_latest_of_the_step_and_any_use():
    t = datetime(2026, 1, 1, tzinfo=timezone.utc)
    assert decay.anchor(strength_at=None, created_at=t, last_confirmed_at=None, last_accessed_at=None) == t
    later = t + timedelta(days=3)
    assert decay.anchor(strength_at=t, created_at=t - timedelta(days=9), last_confirmed_at=later,
                        last_accessed_at=None) == later
    assert decay.anchor(strength_at=later, created_at=t, last_confirmed_at=t, last_accessed_at=t) == later


@pytest.mark.parametrize("memory_type", sorted(decay.NEVER_ARCHIVED))
def test_identity_and_censors_never_archive(memory_type):
    assert not decay.archives(strength=0.0, memory_type=memory_type, threshold=0.05)


def test_others_archive_only_under_the_threshold():
    assert decay.archives(strength=0.049, memory_type="fact", threshold=0.05)
    assert not decay.archives(strength=0.05, memory_type="fact", threshold=0.05)
    assert decay.archives(strength=0.049, memory_type="episodic", threshold=0.05, consolidated=True)
    assert not decay.archives(strength=0.05, memory_type="episodic", threshold=0.05, consolidated=True)


def test_an_episode_no_pattern_kept_only_weakens():
    assert not decay.archives(strength=0.0, memory_type="episodic", threshold=0.05)
    assert not decay.archives(strength=0.0, memory_type="episodic", threshold=0.05, consolidated=False)


@pytest.mark.parametrize("bad", [0, -1, float("nan")])
def test_a_half_life_is_positive(bad):
    with pytest.raises(ValueError):
        decay.decayed(1.0, days=1, half_life_days=bad)
    with pytest.raises(ValueError):
        decay.effective_half_life(bad)
