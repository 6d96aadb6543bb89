"""The extractive summariser: readable, attributed, within budget, and honest about what is
still pending. Pure code, so no database."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest
from hypothesis import given, settings as hsettings, strategies as st

from conversations.summarise import PendingAction, Turn, date_range, split_sentences, summarise

START = datetime(2024, 3, 12, 18, 2, tzinfo=timezone.utc)

DOG_CHAT = [
    ("Priya", "Hey Tom! 😊"),
    ("Tom", "Hi Priya! How have you been?"),
    ("Priya", "Pretty good, thanks! Big news: I adopted a beagle called Biscuit last Saturday."),
    ("Tom", "No way, that's amazing! How old is he?"),
    ("Priya", "He's 14 months old and came from the Riverside shelter."),
    ("Tom", "lol I bet he's already chewing everything."),
    ("Priya", "Haha yes, he destroyed two of my sneakers on Monday."),
    ("Tom", "Is he house-trained yet?"),
    ("Priya", "Mostly. The shelter started crate training and we walk at 7 am every day."),
    ("Tom", "Nice. My sister Anna trains dogs in Leeds, she could give you tips."),
    ("Priya", "Oh that would be great!"),
    ("Tom", "I'll send you her number tomorrow."),
    ("Priya", "Thanks!"),
    ("Tom", "How's work going, by the way?"),
    ("Priya", "Busy. We launch the new booking app on 2 April, so I'm working late most nights."),
    ("Tom", "Ugh, that sounds stressful."),
    ("Priya", "It's fine, I'm going to take a week off in May to recover."),
    ("Tom", "Good plan 👍"),
    ("Tom", "lol"),
    ("Priya", "Anyway, gotta run. Do you want to come hiking with Biscuit and me on Sunday?"),
]


def make_turns(lines, *, start=START, gap=timedelta(seconds=45), first_id=1):
    return [
        Turn(id=first_id + i, speaker=speaker, direction="inbound" if speaker == lines[0][0] else "outbound",
             content=content, occurred_at=start + i * gap)
        for i, (speaker, content) in enumerate(lines)
    ]


@pytest.fixture
def dog_chat():
    return make_turns(DOG_CHAT)


# --- the text ------------------------------------------------------------------------------

def test_it_opens_with_who_talked_when_and_how_much(dog_chat):
    assert summarise(dog_chat).text.splitlines()[0] == "Conversation between Priya and Tom on 12 March 2024 (20 messages)."


def test_the_header_gives_a_date_range_when_the_conversation_spans_days():
    turns = make_turns([("Ana", "The migration ran overnight."), ("Ben", "It finished at 3 am.")],
                       start=datetime(2023, 5, 8, 23, 50, tzinfo=timezone.utc), gap=timedelta(hours=3))
    assert summarise(turns).text.startswith("Conversation between Ana and Ben on 8–9 May 2023 (2 messages).")


@pytest.mark.parametrize("first, last, expected", [
    ((2023, 5, 8), (2023, 5, 8), "8 May 2023"),
    ((2023, 5, 8), (2023, 5, 9), "8–9 May 2023"),
    ((2023, 4, 30), (2023, 5, 2), "30 April – 2 May 2023"),
    ((2023, 12, 31), (2024, 1, 1), "31 December 2023 – 1 January 2024"),
])
def test_date_ranges_read_naturally(first, last, expected):
    assert date_range(datetime(*first, 12, tzinfo=timezone.utc), datetime(*last, 12, tzinfo=timezone.utc)) == expected


def test_it_keeps_specific_facts_attributed_and_drops_filler(dog_chat):
    text = summarise(dog_chat).text
    assert "Priya: " in text and "I adopted a beagle called Biscuit last Saturday." in text
    assert "He's 14 months old and came from the Riverside shelter." in text
    assert "We launch the new booking app on 2 April" in text
    for filler in ("Hey Tom", "How have you been", "lol", "Thanks!", "Good plan", "Oh that would be great"):
        assert filler not in text


def test_the_selected_sentences_stay_in_the_order_they_were_said(dog_chat):
    draft = summarise(dog_chat)
    body = draft.text.splitlines()[1:]
    positions = [next(i for i, t in enumerate(dog_chat) if line.split(": ", 1)[1].split(" ")[0] in t.content
                      and t.speaker == line.split(": ", 1)[0]) for line in body]
    assert len(body) >= 4
    assert positions == sorted(positions)
    assert draft.salient_turn_ids == sorted(draft.salient_turn_ids)
    assert {3, 5, 15} <= set(draft.salient_turn_ids)


def test_a_tight_budget_keeps_the_header_and_the_best_facts(dog_chat):
    draft = summarise(dog_chat, max_chars=240)
    assert len(draft.text) <= 240
    assert draft.text.startswith("Conversation between Priya and Tom")
    assert "I adopted a beagle called Biscuit" in draft.text and "2 April" in draft.text
    assert "sister Anna" not in draft.text


def test_a_budget_smaller_than_the_header_still_holds(dog_chat):
    assert len(summarise(dog_chat, max_chars=20).text) == 20


def test_small_talk_alone_summarises_to_the_header():
    turns = make_turns([("Ana", "Hey!"), ("Ben", "Hi! 😊"), ("Ana", "lol"), ("Ben", "Thanks!")])
    draft = summarise(turns)
    assert draft.text == "Conversation between Ana and Ben on 12 March 2024 (4 messages)."
    assert draft.salient_turn_ids == []


def test_system_turns_are_counted_but_neither_quoted_nor_named():
    turns = make_turns([("Ana", "I moved the standup to 9:30 on Thursdays."), ("Ben", "Works for me.")])
    turns.append(Turn(id=9, speaker="mnemo", direction="system", content="Reminder scheduled for 9:30 tomorrow.",
                      occurred_at=START + timedelta(minutes=5)))
    text = summarise(turns).text
    assert text.startswith("Conversation between Ana and Ben on 12 March 2024 (3 messages).")
    assert "mnemo" not in text and "Reminder" not in text


def test_no_turns_is_an_error():
    with pytest.raises(ValueError):
        summarise([])


def test_naive_times_are_an_error():
    with pytest.raises(ValueError):
        summarise([Turn(1, "Ana", "inbound", "Hello there.", datetime(2024, 1, 1))])


# --- sentences -----------------------------------------------------------------------------

def test_sentences_split_on_punctuation_and_emoji_but_not_abbreviations_or_decimals():
    assert split_sentences("Dr. Smith said v3.5 is fine! Really?? Yes 😀 Great news, e.g. the API works.") == [
        "Dr. Smith said v3.5 is fine!", "Really??", "Yes 😀", "Great news, e.g. the API works.",
    ]


def test_sentences_do_not_split_on_an_ellipsis_mid_thought_or_an_emoji_mid_sentence():
    assert split_sentences("I was like... whatever 😅 it happens") == ["I was like... whatever 😅 it happens"]
    assert split_sentences("Line one\nLine two.") == ["Line one", "Line two."]


def test_fenced_code_is_not_a_sentence():
    assert split_sentences("Try this:\n```\nx = 1. y = 2\n```\nThen rerun.") == ["Try this:", "Then rerun."]


# --- pending actions -----------------------------------------------------------------------

def test_it_lists_commitments_and_the_question_nobody_answered(dog_chat):
    assert summarise(dog_chat).pending_actions == [
        PendingAction("commitment", "I'll send you her number tomorrow.", "Tom", 12),
        PendingAction("commitment", "It's fine, I'm going to take a week off in May to recover.", "Priya", 17),
        PendingAction("question", "Do you want to come hiking with Biscuit and me on Sunday?", "Priya", 20),
    ]


def test_a_question_stays_open_while_only_the_asker_keeps_talking():
    turns = make_turns([
        ("Ana", "Can you review PR 42 before Friday?"),
        ("Ana", "It touches the billing code."),
        ("Ben", "Sure, I will look at it today."),
        ("Ben", "Did the deploy on staging pass?"),
        ("Ben", "Let me know when you see this."),
    ])
    assert summarise(turns).pending_actions == [
        PendingAction("commitment", "Sure, I will look at it today.", "Ben", 3),
        PendingAction("question", "Did the deploy on staging pass?", "Ben", 4),
    ]


def test_greetings_tags_and_figures_of_speech_are_not_pending():
    turns = make_turns([
        ("Ana", "I bet we'll laugh about this later."),
        ("Ben", "I'll never understand CSS."),
        ("Ana", "How are you?"),
    ])
    assert summarise(turns).pending_actions == []


# --- tone ------------------------------------------------------------------------------------

FORMAL_TECHNICAL = [
    ("Dr. Okafor", "Good morning. Could you please review the database migration in migrations/0042_index.py?"),
    ("Engineer", "Certainly. The migration adds a partial index on the `created_at` column to reduce query latency."),
    ("Dr. Okafor", "Thank you. Please confirm that the deployment will not lock the table during the transaction."),
    ("Engineer", "The index is built concurrently, so the table remains available.\n```sql\nCREATE INDEX CONCURRENTLY ...\n```"),
    ("Dr. Okafor", "Understood. I would appreciate a benchmark of the endpoint before and after the change. Kind regards."),
]
CASUAL_EMOJI = [
    ("jess", "omg hiii 😍😍"),
    ("sam", "heyyy!! whats up lol"),
    ("jess", "nm just got back from the beach, it was sooo fun!! 🌊☀️"),
    ("sam", "yay thats awesome!!! 🎉 gonna go next weekend too haha"),
    ("jess", "yesss we gotta go together 😎"),
]


def test_a_formal_technical_chat_reads_formal_and_technical():
    formal = summarise(make_turns(FORMAL_TECHNICAL)).tone
    casual = summarise(make_turns(CASUAL_EMOJI)).tone
    assert formal["formality"] > 0.6 > 0.3 > casual["formality"]
    assert formal["technical_level"] > 0.6 > 0.1 > casual["technical_level"]
    assert casual["sentiment"] > 0.5


def test_sentiment_notices_negation():
    upset = make_turns([("Ana", "The new release is not good."), ("Ben", "No, it isn't working and I'm frustrated.")])
    pleased = make_turns([("Ana", "The new release is good."), ("Ben", "Yes, it is working and I'm pleased.")])
    assert summarise(upset).tone["sentiment"] < 0 < summarise(pleased).tone["sentiment"]


@pytest.mark.parametrize("gap, pace", [
    (timedelta(seconds=20), "rapid"), (timedelta(minutes=5), "steady"), (timedelta(hours=3), "slow"),
])
def test_pace_follows_the_median_gap(gap, pace):
    tone = summarise(make_turns(DOG_CHAT[:6], gap=gap)).tone
    assert tone["pace"] == pace
    assert tone["messages_per_hour"] == pytest.approx(3600 / gap.total_seconds(), rel=0.01)


def test_bursts_separated_by_long_silences_are_sporadic():
    turns = make_turns(DOG_CHAT[:6], gap=timedelta(seconds=30))
    late = [Turn(t.id + 10, t.speaker, t.direction, t.content, t.occurred_at + timedelta(hours=6)) for t in turns]
    assert summarise(turns + late).tone["pace"] == "sporadic"


# --- superseding a summary -----------------------------------------------------------------

def test_the_earlier_summary_is_carried_forward_within_budget(dog_chat):
    first = summarise(dog_chat[:10])
    later = make_turns([
        ("Priya", "Quick update: the booking app launch moved to 9 April."),
        ("Tom", "Oh no, what happened?"),
        ("Priya", "Legal needs another review of the payment terms."),
        ("Tom", "Makes sense. I'm going to book the hiking trail for Sunday then."),
    ], start=START + timedelta(days=1), first_id=21)
    second = summarise(later, previous_summary=first.text, max_chars=500)
    lines = second.text.splitlines()
    assert len(second.text) <= 500
    assert lines[0] == "Conversation between Priya and Tom on 13 March 2024 (4 messages)."
    assert lines[1].startswith("Earlier: Priya: ") and "Biscuit" in lines[1]
    assert "9 April" in second.text
    assert set(second.salient_turn_ids) <= {21, 22, 23, 24}


def test_a_chain_of_summaries_keeps_its_oldest_fact(dog_chat):
    text = summarise(dog_chat[:5], max_chars=400).text
    for day in range(1, 4):
        chunk = make_turns([("Priya", f"Day {day}: the sprint review covered ticket {100 + day} and the roadmap."),
                            ("Tom", f"Noted, the retro is on day {day + 1} at 4 pm.")],
                           start=START + timedelta(days=day), first_id=100 * day)
        text = summarise(chunk, previous_summary=text, max_chars=400).text
        assert len(text) <= 400
    assert "Biscuit" in text


def test_a_free_text_previous_summary_is_carried_forward_too():
    turns = make_turns([("Ana", "The vendor shipped the replacement server on Tuesday.")])
    text = summarise(turns, previous_summary="Ana reported that the old server failed in March. Ben ordered a new one.").text
    assert "Earlier: Ana reported that the old server failed in March." in text


# --- properties ------------------------------------------------------------------------------

WORDS = ["I", "went", "to", "Paris", "on", "3", "May", "lol", "hey", "the", "server", "crashed", "I'll", "fix",
         "it", "tomorrow", "thanks", "?", "!", ".", "😀", "Dr.", "e.g.", "3.5", "\n", "```", "we're", "going"]
turn_lists = st.lists(
    st.tuples(st.sampled_from(["Ana", "Ben", "Cy Dee", "  "]), st.sampled_from(["inbound", "outbound", "system"]),
              st.one_of(st.lists(st.sampled_from(WORDS), max_size=30).map(" ".join), st.text(max_size=120)),
              st.integers(min_value=0, max_value=100_000)),
    min_size=1, max_size=25,
)


@hsettings(max_examples=150, deadline=None)
@given(raw=turn_lists, max_chars=st.integers(min_value=1, max_value=1500), previous=st.one_of(st.none(), st.text(max_size=600)))
def test_any_conversation_summarises_within_budget_and_deterministically(raw, max_chars, previous):
    turns, at = [], START
    for i, (speaker, direction, content, gap) in enumerate(raw):
        at += timedelta(seconds=gap)
        turns.append(Turn(id=1000 + i, speaker=speaker, direction=direction, content=content, occurred_at=at))
    draft = summarise(turns, previous_summary=previous, max_chars=max_chars)
    assert len(draft.text) <= max_chars
    assert draft == summarise(list(reversed(turns)), previous_summary=previous, max_chars=max_chars)
    ids = {t.id for t in turns}
    assert set(draft.salient_turn_ids) <= ids
    assert {a.interaction_id for a in draft.pending_actions} <= ids
    assert 0 <= draft.tone["formality"] <= 1 and 0 <= draft.tone["technical_level"] <= 1
    assert -1 <= draft.tone["sentiment"] <= 1
    assert draft.tone["pace"] in {"rapid", "steady", "slow", "sporadic"}
