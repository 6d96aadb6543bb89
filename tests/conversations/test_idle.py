"""Idle detection from the conversation's own rhythm: a fast chat pauses sooner than a slow
thread, a goodbye shortens the wait, and silence only ever moves the state forward."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest
from hypothesis import given, settings as hsettings, strategies as st

from conversations.idle import (
    CLOSED_FLOOR, CLOSING_CUE_FLOOR, IDLE_CEILING, IDLE_FLOOR, NO_RHYTHM_IDLE_AFTER, closing_cue, judge_idle,
)

START = datetime(2024, 3, 12, 9, 0, tzinfo=timezone.utc)


def every(gap: timedelta, count: int = 10) -> list[datetime]:
    return [START + i * gap for i in range(count)]


def after(times: list[datetime], silence: timedelta) -> datetime:
    return times[-1] + silence


def test_a_steady_chat_is_active_shortly_after_a_message_and_idle_after_a_long_silence():
    times = every(timedelta(minutes=2))
    soon = judge_idle(times, after(times, timedelta(minutes=1)), "Let me check the logs.")
    late = judge_idle(times, after(times, timedelta(minutes=42)), "Let me check the logs.")
    assert soon.state == "active"
    assert soon.idle_after == timedelta(minutes=8)  # four times the usual 2 minutes
    assert late.state == "idle"
    assert late.reason == "no message for 42 min; this conversation's usual gap is 2 min"


def test_a_fast_chat_goes_idle_sooner_than_a_slow_one():
    fast, slow = every(timedelta(seconds=20)), every(timedelta(minutes=15))
    silence = timedelta(minutes=20)
    assert judge_idle(fast, after(fast, silence), "ok").state == "idle"
    assert judge_idle(slow, after(slow, silence), "ok").state == "active"
    assert judge_idle(fast, START, "ok").idle_after < judge_idle(slow, START, "ok").idle_after


def test_occasional_longer_pauses_stretch_the_threshold():
    steady = every(timedelta(minutes=2), 22)
    with_pauses = [START]
    for gap in [2, 2, 10] * 7:  # every third reply takes ten minutes
        with_pauses.append(with_pauses[-1] + timedelta(minutes=gap))
    assert judge_idle(steady, START, "").idle_after == timedelta(minutes=8)
    assert judge_idle(with_pauses, START, "").idle_after == timedelta(minutes=40)


@pytest.mark.parametrize("goodbye", ["Thanks, that's all!", "ok bye", "Talk to you later", "Good night 🌙",
                                     "see you tomorrow", "ttyl", "Cheers!", "Later!"])
def test_a_goodbye_shortens_the_wait(goodbye):
    times = every(timedelta(minutes=2))
    plain = judge_idle(times, after(times, timedelta(minutes=3)), "Let me look into it.")
    closing = judge_idle(times, after(times, timedelta(minutes=3)), goodbye)
    assert plain.state == "active"
    assert closing.state == "idle"
    assert closing.idle_after == CLOSING_CUE_FLOOR
    assert "the last message said" in closing.reason


@pytest.mark.parametrize("text", ["bypass the cache", "see your diff?", "later today we ship", "nightly builds",
                                  "the goodbyes module"])
def test_words_that_merely_contain_a_goodbye_are_not_one(text):
    assert closing_cue(text) is None


def test_the_threshold_never_drops_below_the_floor_nor_exceeds_the_ceiling():
    assert judge_idle(every(timedelta(seconds=1)), START, "").idle_after == IDLE_FLOOR
    assert judge_idle(every(timedelta(hours=5)), START, "").idle_after == IDLE_CEILING


def test_a_single_message_waits_the_no_rhythm_default():
    verdict = judge_idle([START], START + timedelta(minutes=20), "Hello?")
    assert verdict.state == "active" and verdict.idle_after == NO_RHYTHM_IDLE_AFTER
    assert judge_idle([START], START + timedelta(minutes=31), "Hello?").state == "idle"


def test_a_break_of_days_is_not_part_of_the_rhythm():
    times = every(timedelta(minutes=1), 5) + [START + timedelta(days=3, minutes=i) for i in range(5)]
    assert judge_idle(times, START, "").idle_after == IDLE_FLOOR


def test_a_conversation_closes_after_a_day_of_silence():
    times = every(timedelta(minutes=1))
    assert judge_idle(times, after(times, timedelta(hours=23)), "").state == "idle"
    closed = judge_idle(times, after(times, CLOSED_FLOOR), "")
    assert closed.state == "closed"
    assert closed.reason == "no message for 24 h; closed after 24 h of silence"


def test_a_slow_thread_takes_several_idle_thresholds_to_close():
    times = every(timedelta(hours=5))  # idle after the 8 h ceiling, closed after 6 x 8 h
    assert judge_idle(times, after(times, timedelta(hours=30)), "").state == "idle"
    assert judge_idle(times, after(times, timedelta(hours=48)), "").state == "closed"


def test_no_times_is_an_error():
    with pytest.raises(ValueError):
        judge_idle([], START, "")


ORDER = {"active": 0, "idle": 1, "closed": 2}


@hsettings(max_examples=200, deadline=None)
@given(
    gaps=st.lists(st.integers(min_value=0, max_value=3 * 86400), max_size=40),
    earlier=st.integers(min_value=-3600, max_value=10 * 86400),
    extra=st.integers(min_value=0, max_value=10 * 86400),
    last_content=st.sampled_from(["", "ok", "bye!", "Let me check.", "good night"]),
)
def test_more_silence_never_moves_the_state_backwards(gaps, earlier, extra, last_content):
    times = [START]
    for gap in gaps:
        times.append(times[-1] + timedelta(seconds=gap))
    first = judge_idle(times, after(times, timedelta(seconds=earlier)), last_content)
    second = judge_idle(times, after(times, timedelta(seconds=earlier + extra)), last_content)
    assert ORDER[first.state] <= ORDER[second.state]
    assert first.idle_after == second.idle_after
    assert CLOSING_CUE_FLOOR <= first.idle_after <= IDLE_CEILING
