"""Relative time expressions (memory/timeexpr.py) resolved against when a message was
said. Pure functions, so no database.

The table pins each phrase to its dates against fixed anchors, including the edges where
"last month" crosses a year and "next month" starts after a 31st; the near misses are
words that only look like dates ("I may go", "a week of rain")."""

from __future__ import annotations

from datetime import date, datetime, timedelta, timezone
from itertools import pairwise

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memory.timeexpr import GRANULARITIES, TimeRange, annotate, label, query_range, replace_relative, resolve

MONDAY = datetime(2023, 5, 8, 13, 56, tzinfo=timezone.utc)  # LoCoMo's first session
NEW_YEAR_TUESDAY = datetime(2023, 1, 3, 9, 0, tzinfo=timezone.utc)
MONTH_END_FRIDAY = datetime(2023, 3, 31, 18, 0, tzinfo=timezone.utc)
YEAR_END_SUNDAY = datetime(2023, 12, 31, 22, 0, tzinfo=timezone.utc)

D = date
CASES = [
    # (anchor, text, phrase, first, last, granularity)
    (MONDAY, "I went to the support group yesterday", "yesterday", D(2023, 5, 7), D(2023, 5, 7), "day"),
    (MONDAY, "today was long", "today", D(2023, 5, 8), D(2023, 5, 8), "day"),
    (MONDAY, "see you tonight", "tonight", D(2023, 5, 8), D(2023, 5, 8), "day"),
    (MONDAY, "I ran this morning", "this morning", D(2023, 5, 8), D(2023, 5, 8), "day"),
    (MONDAY, "I'm free this afternoon", "this afternoon", D(2023, 5, 8), D(2023, 5, 8), "day"),
    (MONDAY, "dinner this evening?", "this evening", D(2023, 5, 8), D(2023, 5, 8), "day"),
    (MONDAY, "we danced last night", "last night", D(2023, 5, 7), D(2023, 5, 7), "day"),
    (MONDAY, "it was the day before yesterday", "the day before yesterday", D(2023, 5, 6), D(2023, 5, 6), "day"),
    (MONDAY, "tomorrow is fine", "tomorrow", D(2023, 5, 9), D(2023, 5, 9), "day"),
    (MONDAY, "the day after tomorrow works", "the day after tomorrow", D(2023, 5, 10), D(2023, 5, 10), "day"),
    (MONDAY, "last week was busy", "last week", D(2023, 5, 1), D(2023, 5, 7), "week"),
    (MONDAY, "this week is busy", "this week", D(2023, 5, 8), D(2023, 5, 14), "week"),
    (MONDAY, "next week I'm off", "next week", D(2023, 5, 15), D(2023, 5, 21), "week"),
    (MONDAY, "last weekend we hiked", "last weekend", D(2023, 5, 6), D(2023, 5, 7), "weekend"),
    (MONDAY, "this weekend we hike", "this weekend", D(2023, 5, 13), D(2023, 5, 14), "weekend"),
    (MONDAY, "next weekend we hike", "next weekend", D(2023, 5, 20), D(2023, 5, 21), "weekend"),
    (MONDAY, "last month was hard", "last month", D(2023, 4, 1), D(2023, 4, 30), "month"),
    (MONDAY, "this month is hard", "this month", D(2023, 5, 1), D(2023, 5, 31), "month"),
    (MONDAY, "next month we move", "next month", D(2023, 6, 1), D(2023, 6, 30), "month"),
    (MONDAY, "last year was hard", "last year", D(2022, 1, 1), D(2022, 12, 31), "year"),
    (MONDAY, "this year is good", "this year", D(2023, 1, 1), D(2023, 12, 31), "year"),
    (MONDAY, "next year we travel", "next year", D(2024, 1, 1), D(2024, 12, 31), "year"),
    (MONDAY, "last Friday I ran", "last Friday", D(2023, 5, 5), D(2023, 5, 5), "day"),
    (MONDAY, "last Monday I ran", "last Monday", D(2023, 5, 1), D(2023, 5, 1), "day"),
    (MONDAY, "next Friday I run", "next Friday", D(2023, 5, 12), D(2023, 5, 12), "day"),
    (MONDAY, "I joined a group last Tues.", "last Tues", D(2023, 5, 2), D(2023, 5, 2), "day"),
    (MONDAY, "this past Saturday was fun", "this past Saturday", D(2023, 5, 6), D(2023, 5, 6), "day"),
    (MONDAY, "I went there on Friday", "on Friday", D(2023, 5, 5), D(2023, 5, 5), "day"),
    (MONDAY, "I will go there on Friday", "on Friday", D(2023, 5, 12), D(2023, 5, 12), "day"),
    (MONDAY, "the party is this Saturday, can't wait", "this Saturday", D(2023, 5, 13), D(2023, 5, 13), "day"),
    (MONDAY, "two days ago", "two days ago", D(2023, 5, 6), D(2023, 5, 6), "day"),
    (MONDAY, "I started 3 weeks ago", "3 weeks ago", D(2023, 4, 17), D(2023, 4, 23), "week"),
    (MONDAY, "a few days ago", "a few days ago", D(2023, 5, 5), D(2023, 5, 5), "day"),
    (MONDAY, "a couple of months ago", "a couple of months ago", D(2023, 3, 1), D(2023, 3, 31), "month"),
    (MONDAY, "a couple weeks ago", "a couple weeks ago", D(2023, 4, 24), D(2023, 4, 30), "week"),
    (MONDAY, "twelve years ago", "twelve years ago", D(2011, 1, 1), D(2011, 12, 31), "year"),
    (MONDAY, "a year ago", "a year ago", D(2022, 1, 1), D(2022, 12, 31), "year"),
    (MONDAY, "the wedding is in two weeks", "in two weeks", D(2023, 5, 22), D(2023, 5, 28), "week"),
    (MONDAY, "I'll know in 3 days", "in 3 days", D(2023, 5, 11), D(2023, 5, 11), "day"),
    (MONDAY, "we move in a month", "in a month", D(2023, 6, 1), D(2023, 6, 30), "month"),
    (MONDAY, "two weeks from now", "two weeks from now", D(2023, 5, 22), D(2023, 5, 28), "week"),
    (MONDAY, "what did you do last May?", "last May", D(2022, 5, 1), D(2022, 5, 31), "month"),
    (MONDAY, "last April was wet", "last April", D(2023, 4, 1), D(2023, 4, 30), "month"),
    (MONDAY, "next May we go", "next May", D(2024, 5, 1), D(2024, 5, 31), "month"),
    (MONDAY, "the conference is in June", "in June", D(2023, 6, 1), D(2023, 6, 30), "month"),
    (MONDAY, "we went there in June", "in June", D(2022, 6, 1), D(2022, 6, 30), "month"),
    (MONDAY, "I'll go in April", "in April", D(2024, 4, 1), D(2024, 4, 30), "month"),
    (MONDAY, "in march it snowed", "in march", None, None, None),  # "march" the verb stays a word
    (MONDAY, "I've been here since May", "since May", D(2023, 5, 1), D(2023, 5, 8), "month"),
    (MONDAY, "I moved in May 2023", "May 2023", D(2023, 5, 1), D(2023, 5, 31), "month"),
    (MONDAY, "on 7 May 2023", "7 May 2023", D(2023, 5, 7), D(2023, 5, 7), "day"),
    (MONDAY, "on the 7th of May, 2023", "7th of May, 2023", D(2023, 5, 7), D(2023, 5, 7), "day"),
    (MONDAY, "June 5, 2023 works", "June 5, 2023", D(2023, 6, 5), D(2023, 6, 5), "day"),
    (MONDAY, "my birthday is June 5th", "June 5th", D(2023, 6, 5), D(2023, 6, 5), "day"),
    (MONDAY, "I was there in 2022", "in 2022", D(2022, 1, 1), D(2022, 12, 31), "year"),
    (MONDAY, "I've lived here since 2020", "since 2020", D(2020, 1, 1), D(2023, 5, 8), "year"),
    # across the new year
    (NEW_YEAR_TUESDAY, "last month was calm", "last month", D(2022, 12, 1), D(2022, 12, 31), "month"),
    (NEW_YEAR_TUESDAY, "last week was calm", "last week", D(2022, 12, 26), D(2023, 1, 1), "week"),
    (NEW_YEAR_TUESDAY, "last weekend was calm", "last weekend", D(2022, 12, 31), D(2023, 1, 1), "weekend"),
    (NEW_YEAR_TUESDAY, "last Saturday was calm", "last Saturday", D(2022, 12, 31), D(2022, 12, 31), "day"),
    (NEW_YEAR_TUESDAY, "yesterday was calm", "yesterday", D(2023, 1, 2), D(2023, 1, 2), "day"),
    (NEW_YEAR_TUESDAY, "last December was calm", "last December", D(2022, 12, 1), D(2022, 12, 31), "month"),
    (NEW_YEAR_TUESDAY, "a month ago", "a month ago", D(2022, 12, 1), D(2022, 12, 31), "month"),
    # after a 31st
    (MONTH_END_FRIDAY, "next month we move", "next month", D(2023, 4, 1), D(2023, 4, 30), "month"),
    (MONTH_END_FRIDAY, "a month ago", "a month ago", D(2023, 2, 1), D(2023, 2, 28), "month"),
    (MONTH_END_FRIDAY, "tomorrow", "tomorrow", D(2023, 4, 1), D(2023, 4, 1), "day"),
    (MONTH_END_FRIDAY, "last Friday", "last Friday", D(2023, 3, 24), D(2023, 3, 24), "day"),
    (YEAR_END_SUNDAY, "tomorrow", "tomorrow", D(2024, 1, 1), D(2024, 1, 1), "day"),
    (YEAR_END_SUNDAY, "next week", "next week", D(2024, 1, 1), D(2024, 1, 7), "week"),
    (YEAR_END_SUNDAY, "this weekend", "this weekend", D(2023, 12, 30), D(2023, 12, 31), "weekend"),
]


@pytest.mark.parametrize(("anchor", "text", "phrase", "first", "last", "granularity"), CASES)
def test_a_phrase_resolves_to_its_dates(anchor, text, phrase, first, last, granularity):
    mentions = resolve(text, anchor)
    if first is None:
        assert mentions == []
        return
    (mention,) = mentions
    assert mention.phrase == phrase
    assert text[mention.start : mention.end] == phrase
    assert (mention.first, mention.last, mention.granularity) == (first, last, granularity)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("yesterday", "7 May 2023"),
        ("last week", "the week of 1 May 2023"),
        ("last weekend", "the weekend of 6 May 2023"),
        ("next month", "June 2023"),
        ("last year", "2022"),
    ],
)
def test_the_label_renders_the_resolved_date(text, expected):
    (mention,) = resolve(text, MONDAY)
    assert mention.label == expected


def test_phrases_are_found_case_insensitively_and_in_text_order():
    mentions = resolve("YESTERDAY I ran, Last Week I swam and next MONTH I fly.", MONDAY)
    assert [m.phrase for m in mentions] == ["YESTERDAY", "Last Week", "next MONTH"]


def test_the_longer_of_two_overlapping_phrases_wins():
    assert [m.phrase for m in resolve("in May 2023", MONDAY)] == ["May 2023"]
    assert [m.phrase for m in resolve("the day before yesterday", MONDAY)] == ["the day before yesterday"]


NOT_DATES = [
    "I may go to the party",
    "May I ask you something?",
    "May the force be with you",
    "a week of rain",
    "we march on together",
    "an august institution",
    "the last week of the trip was best",
    "over the last month things changed",
    "the next day we left",
    "in today's world everything is fast",
    "I run twice in a week",
    "I lost 20 pounds in two months",
    "we had 2000 users in 2000 ms",
    "Sun and sand",
    "see you on sat",
    "I go running on Mondays",
    "on 31 February",
]


@pytest.mark.parametrize("text", NOT_DATES)
def test_words_that_only_look_like_dates_resolve_to_nothing(text):
    assert resolve(text, MONDAY) == []


# --- annotate, replace_relative, query_range ---------------------------------------------------

def test_annotate_puts_the_date_after_each_relative_phrase():
    assert annotate("I went to the support group yesterday", MONDAY) == "I went to the support group yesterday (7 May 2023)"
    assert annotate("Last week I won, next month I fly.", MONDAY) == (
        "Last week (the week of 1 May 2023) I won, next month (June 2023) I fly."
    )


@pytest.mark.parametrize("text", ["I moved here in May 2023.", "I've lived here since 2020", "on 7 May 2023", "no dates here"])
def test_annotate_leaves_phrases_that_name_their_year_alone(text):
    assert annotate(text, MONDAY) == text


@pytest.mark.parametrize("text", ["yesterday and last week", "in June, or next Friday", "two weeks ago on Friday", "5 May"])
def test_annotate_never_annotates_twice(text):
    once = annotate(text, MONDAY)
    assert once != text
    assert annotate(once, MONDAY) == once


def test_replace_relative_writes_the_date_into_the_sentence():
    assert replace_relative("I'm going to Paris next month", MONDAY) == "I'm going to Paris in June 2023"
    assert replace_relative("I went there yesterday", MONDAY) == "I went there on 7 May 2023"
    assert replace_relative("finish it by next Friday", MONDAY) == "finish it by 12 May 2023"


@pytest.mark.parametrize(
    ("query", "first", "last"),
    [
        ("what did Caroline do last May?", D(2022, 5, 1), D(2022, 5, 31)),
        ("in 2022", D(2022, 1, 1), D(2022, 12, 31)),
        ("yesterday", D(2023, 5, 7), D(2023, 5, 7)),
        ("when did X happen in June 2023", D(2023, 6, 1), D(2023, 6, 30)),
        ("what happened last week or yesterday", D(2023, 5, 1), D(2023, 5, 7)),
    ],
)
def test_a_query_names_the_range_it_asks_about(query, first, last):
    found = query_range(query, MONDAY)
    assert isinstance(found, TimeRange)
    assert (found.first, found.last) == (first, last)
    assert found.phrase


def test_a_query_without_a_time_cue_has_no_range():
    assert query_range("when did Caroline go to the support group?", MONDAY) is None


# --- properties ----------------------------------------------------------------------------

FRAGMENTS = [
    "yesterday", "today", "tonight", "tomorrow", "the day before ", "last ", "next ", "this ", "on ", "in ", "since ",
    "week", "weekend", "month", "year", "Friday", "Tues", "May", "may", "June", "March", " 2023", "1999", "5th",
    " of ", "ago", "two ", "a few ", "a couple of ", "12 ", "days", "weeks", "from now", "I went", "I will", "(",
    "(7 May 2023)", ")", ". ", ", ", "\n", " ", "the ", "İ", "ß", "’",
]
TEXTS = st.one_of(
    st.text(),
    st.lists(st.one_of(st.sampled_from(FRAGMENTS), st.text(max_size=3)), max_size=16).map("".join),
)
OFFSETS = st.timedeltas(min_value=timedelta(hours=-12), max_value=timedelta(hours=14))
ANCHORS = st.datetimes(timezones=st.builds(timezone, OFFSETS))  # any year, 1 to 9999


@settings(max_examples=500)
@given(TEXTS, ANCHORS)
def test_resolve_never_raises_and_its_mentions_are_well_formed(text, anchor):
    mentions = resolve(text, anchor)
    for mention in mentions:
        assert text[mention.start : mention.end] == mention.phrase
        assert mention.first <= mention.last
        assert mention.granularity in GRANULARITIES
        assert mention.label == label(mention.first, mention.granularity)
    for before, after in pairwise(mentions):
        assert before.end <= after.start  # sorted and never overlapping


@settings(max_examples=300)
@given(TEXTS, ANCHORS)
def test_annotate_is_idempotent(text, anchor):
    once = annotate(text, anchor)
    assert annotate(once, anchor) == once
