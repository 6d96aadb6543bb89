"""Scoring whether two channel identities are one person: a shared email address is nearly
conclusive, full names and handles that spell them out are worth a review, a lone first
name or co-occurrence never is, and the score is symmetric, bounded and reproducible."""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given, strategies as st

from entities.similarity import (
    SUGGEST_THRESHOLD, Handle, email_of, handle_tokens, jaro_winkler, normalise_name, score_link,
)

ROOT = Path(__file__).resolve().parents[2]


def slack(display: str, user_id: str = "U024BE7LH") -> Handle:
    return Handle("slack", user_id, display, display)


def email(address: str, display: str = "") -> Handle:
    return Handle("email", address, display, display or address)


def score(a: Handle, b: Handle, co_occurrence: float = 0.0) -> float:
    return score_link(a, b, co_occurrence=co_occurrence).score


# --- who is suggested ---------------------------------------------------------------------


def test_the_same_email_address_links_an_email_handle_to_a_slack_profile_showing_it():
    link = score_link(email("ada@example.com"), slack("Ada (ada@example.com)"))
    assert link.score >= 0.97
    assert link.reasons[0] == "same email address ada@example.com"


def test_an_address_is_the_same_whatever_its_case_or_plus_tag():
    link = score_link(email("Ada+Lists@Example.com"), Handle("chat", "c-17", "ada@example.com", "Ada"))
    assert link.score >= 0.97
    assert "same email address ada@example.com" in link.reasons


def test_a_slack_display_name_matches_an_email_handle_that_spells_it_out():
    link = score_link(slack("Ada Lovelace"), email("ada.lovelace@example.com"))
    assert link.score >= SUGGEST_THRESHOLD
    assert link.reasons == ["handle ada.lovelace@example.com fits name 'Ada Lovelace' (0.75)"]


def test_a_surname_first_name_matches_the_same_name_in_order():
    link = score_link(Handle("chat", "c-17", "Lovelace, Ada", "Lovelace, Ada"), slack("Ada Lovelace"))
    assert link.score == score(Handle("chat", "c-17", "Ada Lovelace", "Ada Lovelace"), slack("Ada Lovelace"))
    assert link.score >= SUGGEST_THRESHOLD
    assert link.reasons == ["names match (reordered): 'Lovelace, Ada' ~ 'Ada Lovelace' (0.88)"]


def test_a_matrix_id_matches_an_email_handle_with_the_same_name_parts():
    link = score_link(Handle("matrix", "@ada.lovelace:matrix.org", "", ""), email("ada.lovelace@example.com"))
    assert link.score >= SUGGEST_THRESHOLD
    assert "handles share name parts" in link.reasons[0]


@pytest.mark.parametrize("handle", ["adalovelace@example.com", "AdaLovelace@example.com", "alovelace@example.com",
                                    "lovelace.ada@example.com", "ada_lovelace@example.com"])
def test_a_handle_made_of_the_name_joined_up_or_with_an_initial_is_suggested(handle):
    assert score(email(handle), slack("Ada Lovelace")) >= SUGGEST_THRESHOLD


def test_a_surname_with_a_matching_initial_is_suggested_but_weaker_than_the_full_name():
    initial = score_link(slack("A. Lovelace"), email("ada@example.com", "Ada Lovelace"))
    full = score(slack("Ada Lovelace"), email("ada@example.com", "Ada Lovelace"))
    assert SUGGEST_THRESHOLD <= initial.score < full
    assert "by initials" in initial.reasons[0]


def test_a_misspelt_surname_is_suggested_but_weaker_than_the_exact_one():
    typo = score_link(slack("Ada Lovelase"), email("ada@example.com", "Ada Lovelace"))
    assert SUGGEST_THRESHOLD <= typo.score < score(slack("Ada Lovelace"), email("ada@example.com", "Ada Lovelace"))
    assert "spelling differs" in typo.reasons[0]


def test_a_work_and_a_personal_address_spelling_the_same_name_are_suggested():
    # Two addresses are normal for email, so the same-channel damping does not apply.
    assert score(email("ada.lovelace@gmail.com"), email("ada.lovelace@example.com")) >= SUGGEST_THRESHOLD


def test_the_same_handle_is_the_same_identity():
    handle = slack("Ada Lovelace")
    assert score_link(handle, Handle("slack", "U024BE7LH", "", "someone else")) == score_link(handle, handle)
    assert score_link(handle, handle).score == 1.0
    assert score_link(handle, handle).reasons == ["same handle"]


# --- who is not ---------------------------------------------------------------------------


@pytest.mark.parametrize("other", [email("alex.morgan@example.com", "Alex Morgan"), Handle("chat", "c-9", "Alex", "Alex"),
                                   Handle("cli", "alex", "", "")])
def test_a_first_name_alone_is_not_suggested(other):
    # "Alex" could be any of the Alexes in a workspace; a person can link it by hand.
    assert score(slack("Alex"), other) < SUGGEST_THRESHOLD


def test_different_given_names_with_one_surname_are_not_suggested():
    link = score_link(slack("John Smith"), Handle("chat", "c-3", "Jane Smith", "Jane Smith"))
    assert link.score < 0.1
    assert link.reasons == ["names differ, sharing only smith: 'Jane Smith' ~ 'John Smith' (0.07)"]


def test_people_sharing_a_common_first_name_are_not_suggested():
    assert score(slack("Alex Morgan"), email("alex.chen@example.com", "Alex Chen")) < SUGGEST_THRESHOLD
    assert score(slack("Alex Morgan"), email("alex.chen@example.com")) < SUGGEST_THRESHOLD


def test_a_row_of_initials_is_not_suggested():
    assert score(slack("A. L."), email("ada@example.com", "Ada Lovelace")) < SUGGEST_THRESHOLD


def test_opaque_ids_without_names_give_no_evidence():
    link = score_link(slack(""), Handle("telegram", "123456789", "", ""))
    assert link.score == 0.0
    assert link.reasons == ["no shared email, name or handle"]


def test_two_slack_accounts_with_one_name_score_lower_than_the_name_across_channels():
    same_channel = score_link(slack("Ada Lovelace"), slack("Ada Lovelace", user_id="U99ZZZ1"))
    across = score(slack("Ada Lovelace"), Handle("matrix", "@ada:matrix.org", "Ada Lovelace", "Ada Lovelace"))
    assert same_channel.score < across
    assert "both on slack" in same_channel.reasons[-1]


# --- stronger evidence scores higher ------------------------------------------------------


def test_stronger_evidence_scores_higher():
    ada = slack("Ada Lovelace")
    ladder = [
        email("ada@example.com", "Ada Lovelace"),  # the same name ...
        email("ada.lovelace@example.com"),  # ... a handle spelling the name
        email("alovelace@example.com"),  # ... a handle with an initial
        email("ada@example.com", "Ada"),  # ... the first name only
        email("bob@example.com", "Bob"),  # nothing
    ]
    with_email = score(Handle("slack", "U024BE7LH", "Ada Lovelace (ada@example.com)", "Ada Lovelace"), ladder[0])
    scores = [score(ada, other) for other in ladder]
    assert with_email > scores[0] > scores[1] > scores[2] > scores[3] > scores[4] == 0.0


def test_an_extra_middle_name_scores_a_little_lower_than_the_same_name():
    same = score(slack("Ada Lovelace"), Handle("chat", "c-1", "Ada Lovelace", "Ada Lovelace"))
    middle = score(slack("Ada Lovelace"), Handle("chat", "c-1", "Ada King Lovelace", "Ada King Lovelace"))
    assert SUGGEST_THRESHOLD <= middle < same


def test_co_occurrence_adds_a_little_and_is_named_as_a_reason():
    a, b = slack("Ada"), email("ada@example.com", "Ada")
    linked = score_link(a, b, co_occurrence=0.8)
    assert score(a, b) < linked.score < score(a, b) + 0.15
    assert "appear in the same conversations (co-occurrence 0.80)" in linked.reasons


# --- the helpers --------------------------------------------------------------------------


@pytest.mark.parametrize(("raw", "normalised"), [
    ("Ada Lovelace", "ada lovelace"),
    ("  ADA   LOVELACE ", "ada lovelace"),
    ("Dr. Ada Lovelace (she/her) 🚀", "ada lovelace"),
    (":wave: Ada Lovelace", "ada lovelace"),
    ("Lovelace, Ada", "lovelace ada"),
    ("José Ñúñez-García", "jose nunez garcia"),
    ("Seán O’Brien", "sean obrien"),
    ("Straße", "strasse"),
    ("Ada <ada@example.com>", "ada"),
    ("🎉🎉", ""),
])
def test_normalise_name_keeps_only_the_words_of_the_name(raw, normalised):
    assert normalise_name(raw) == normalised


@pytest.mark.parametrize(("channel", "channel_id", "tokens"), [
    ("email", "ada.lovelace@example.com", {"ada", "lovelace"}),
    ("email", "ada+lists@example.com", {"ada"}),
    ("matrix", "@ada_l:matrix.org", {"ada", "l"}),
    ("cli", "AdaLovelace", {"ada", "lovelace"}),
    ("discord", "ada1815", {"ada"}),
    ("slack", "U024BE7LH", set()),
    ("telegram", "+15551234567", set()),
    ("chat", "3fa85f64-5717-4562-b3fc-2c963f66afa6", set()),
    ("email", "no-reply@example.com", set()),
    ("matrix", "@slack_U024BE7LH:bridge.example.org", set()),
])
def test_handle_tokens_are_the_name_like_words_of_a_handle(channel, channel_id, tokens):
    assert handle_tokens(channel, channel_id) == tokens


@pytest.mark.parametrize(("channel", "channel_id", "display", "found"), [
    ("email", "Ada@Example.COM", "", "ada@example.com"),
    ("slack", "U024BE7LH", "Ada Lovelace <Ada@Example.com>", "ada@example.com"),
    ("email", "mailto:ada@example.com", "", "ada@example.com"),
    ("matrix", "@ada:matrix.org", "Ada", None),
    ("slack", "U024BE7LH", "Ada Lovelace", None),
])
def test_email_of_finds_an_address_in_the_handle_or_the_display_name(channel, channel_id, display, found):
    assert email_of(channel, channel_id, display) == found


@pytest.mark.parametrize(("a", "b", "expected"), [
    ("martha", "marhta", 0.9611), ("dixon", "dicksonx", 0.8133), ("dwayne", "duane", 0.84), ("ada", "bob", 0.0),
])
def test_jaro_winkler_gives_the_published_values(a, b, expected):
    assert jaro_winkler(a, b) == pytest.approx(expected, abs=1e-4)


# --- properties ---------------------------------------------------------------------------

FIRST_NAMES = ["Ada", "Alex", "Sam", "Maria", "José", "Li", "Priya", "Alexander", "Kim", "Mohammed"]
SURNAMES = ["Lovelace", "Morgan", "Smith", "García", "Chen", "Patel", "Kowalczykowski", "O'Brien", "Ng"]
CHANNELS = ["email", "slack", "matrix", "cli", "chat"]

names = st.one_of(
    st.just(""),
    st.sampled_from(FIRST_NAMES),
    st.builds(lambda f, s: f"{f} {s}", st.sampled_from(FIRST_NAMES), st.sampled_from(SURNAMES)),
    st.builds(lambda f, s: f"{s}, {f}", st.sampled_from(FIRST_NAMES), st.sampled_from(SURNAMES)),
    st.builds(lambda f, s: f"{f[0]}. {s}", st.sampled_from(FIRST_NAMES), st.sampled_from(SURNAMES)),
    st.text(max_size=30),
)
channel_ids = st.one_of(
    st.builds(lambda f, s, sep: f"{f}{sep}{s}@example.com".lower(), st.sampled_from(FIRST_NAMES),
              st.sampled_from(SURNAMES), st.sampled_from([".", "_", ""])),
    st.builds(lambda f: f"@{f.lower()}:matrix.org", st.sampled_from(FIRST_NAMES)),
    st.sampled_from(["U024BE7LH", "W012A3CDE", "ada", "alex", "ada@example.com", "123456789"]),
    st.text(max_size=30),
)
handles = st.builds(Handle, st.one_of(st.sampled_from(CHANNELS), st.text(max_size=8)), channel_ids, names, names)
co_occurrences = st.floats(min_value=0.0, max_value=1.0)


@given(handles, handles, co_occurrences)
def test_the_score_is_symmetric(a, b, co):
    assert score_link(a, b, co_occurrence=co) == score_link(b, a, co_occurrence=co)


@given(handles, handles, st.one_of(st.sampled_from([math.nan, math.inf, -math.inf, -1.0, 2.0]), st.floats()))
def test_the_score_stays_between_0_and_1_whatever_the_co_occurrence(a, b, co):
    result = score_link(a, b, co_occurrence=co).score
    assert 0.0 <= result <= 1.0
    assert not math.isnan(result)


@given(handles, handles, co_occurrences, co_occurrences)
def test_more_co_occurrence_never_lowers_a_score(a, b, co1, co2):
    low, high = sorted([co1, co2])
    assert score(a, b, low) <= score(a, b, high)


@given(st.text())
def test_normalise_name_is_idempotent(name):
    once = normalise_name(name)
    assert normalise_name(once) == once


@given(st.sampled_from(CHANNELS), st.sampled_from(CHANNELS), st.sampled_from(FIRST_NAMES),
       st.sampled_from(SURNAMES + [""]), st.sampled_from(SURNAMES + [""]), co_occurrences)
def test_a_shared_first_name_never_reaches_the_threshold_whatever_the_co_occurrence(ca, cb, first, sa, sb, co):
    a = Handle(ca, "id-a", f"{first} {sa}".strip(), f"{first} {sa}".strip())
    b = Handle(cb, "id-b", f"{first} {sb}".strip(), f"{first} {sb}".strip())
    if sa and sa == sb:
        return  # a full name shared; covered by the positive tests
    assert score(a, b, co) < SUGGEST_THRESHOLD


@given(st.sampled_from(["U024BE7LH", "W012A3CDE", "123456789"]), st.sampled_from(["4f1c9e", "+15551234567"]),
       co_occurrences)
def test_co_occurrence_alone_never_reaches_the_threshold(slack_id, other_id, co):
    assert score(slack("", slack_id), Handle("telegram", other_id, "", ""), co) < SUGGEST_THRESHOLD


@given(names, names, st.sampled_from(CHANNELS), st.sampled_from(CHANNELS))
def test_a_shared_email_address_is_always_suggested_whatever_the_names(name_a, name_b, ca, cb):
    a = Handle(ca, "id-a", f"{name_a} <ada@example.com>", name_a)
    b = Handle(cb, "ada@example.com", name_b, name_b)
    assert score(a, b) >= SUGGEST_THRESHOLD


DETERMINISM_SCRIPT = """
import itertools, json
from entities.similarity import Handle, score_link
handles = [
    Handle("slack", "U024BE7LH", "Ada Lovelace", "Ada Lovelace"),
    Handle("email", "ada.lovelace@example.com", "", ""),
    Handle("email", "alovelace@example.com", "A. Lovelace", "A. Lovelace"),
    Handle("matrix", "@ada_l:matrix.org", "", "Lovelace, Ada"),
    Handle("cli", "AdaKingLovelace", "ada", "Ada King"),
    Handle("chat", "c-1", "Ann Anna Annabel", "Anna Ann"),
    Handle("slack", "U99ZZZ1", "Jon Jonathan John", "John Smith"),
    Handle("email", "john.jon.jonathan@example.com", "J. J. Smith", ""),
    Handle("email", "zara.yuki.xena.will.vera.ursula.ada.lovelace@example.com", "", ""),
    Handle("email", "ada@example.com", "Ada <ada@lovelace.org>", "Ada"),
    Handle("slack", "U0ADA", "ada@lovelace.org", "ada@example.com"),
]
print(json.dumps([[l.score, l.reasons] for a, b in itertools.product(handles, repeat=2)
                  for l in [score_link(a, b, co_occurrence=0.3)]]))
"""


def test_scores_and_reasons_do_not_depend_on_the_hash_seed():
    # Sets of words are iterated in hash order, which changes between processes; a score or a
    # reason that depended on it would change from one run of the suggester to the next.
    outputs = set()
    for seed in ("0", "1", "2", "3"):
        env = {**os.environ, "PYTHONHASHSEED": seed, "PYTHONPATH": str(ROOT)}
        run = subprocess.run([sys.executable, "-c", DETERMINISM_SCRIPT], env=env, cwd=ROOT,
                             capture_output=True, text=True, check=True)
        outputs.add(run.stdout)
    assert len(outputs) == 1
    assert len(json.loads(outputs.pop())) == 121
