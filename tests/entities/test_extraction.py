"""The extraction rules (entities/extraction): profile facts and relationships a speaker
states about themselves. Pure functions, so no database.

Each rule has a realistic positive with its exact value and span, and near misses that
must stay quiet: a person reviews every candidate, so a wrong one costs more than a
missed one. Lines marked LoCoMo are turns from the LoCoMo benchmark conversations."""

from __future__ import annotations

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from entities.extraction import (
    PREDICATES,
    PROFILE_KEYS,
    ProfileCandidate,
    RelationCandidate,
    extract_profile,
    extract_relationships,
)


def _one_profile(text: str, key: str) -> ProfileCandidate:
    found = [c for c in extract_profile(text) if c.key == key]
    assert len(found) == 1, found
    return found[0]


def _one_relation(text: str, predicate: str) -> RelationCandidate:
    found = [c for c in extract_relationships(text) if c.predicate == predicate]
    assert len(found) == 1, found
    return found[0]


# --- profile: positives ------------------------------------------------------------------

PROFILE_CASES = [
    ("Sure! My email is Ada@Example.com.", "email", "ada@example.com", "My email is Ada@Example.com"),
    ("You can email me at bob.smith@acme.io if it breaks", "email", "bob.smith@acme.io", "email me at bob.smith@acme.io"),
    ("Best to reach me at ops@mnemo.dev.", "email", "ops@mnemo.dev", "reach me at ops@mnemo.dev"),
    ("Hi, my name is Ada Lovelace.", "name", "Ada Lovelace", "my name is Ada Lovelace"),
    ("My name's Priya, nice to meet you", "name", "Priya", "My name's Priya"),
    ("Please call me Addie.", "preferred_name", "Addie", "call me Addie"),
    ("I go by Sam these days", "preferred_name", "Sam", "I go by Sam"),
    ("I work at Acme Corp. It's a big place.", "employer", "Acme Corp", "I work at Acme Corp"),
    ("I work at the Red Cross on weekends", "employer", "Red Cross", "I work at the Red Cross"),
    ("I work at Home Depot", "employer", "Home Depot", "I work at Home Depot"),
    ("I'm a nurse at St. Mary's.", "employer", "St. Mary's", "I'm a nurse at St. Mary's"),
    ("I'm a senior software engineer at Acme in Berlin", "employer", "Acme", "I'm a senior software engineer at Acme"),
    ("I just joined Globex as a designer!", "employer", "Globex", "I just joined Globex"),
    ("I'm a senior software engineer at Acme in Berlin", "role", "senior software engineer", "I'm a senior software engineer at Acme"),
    ("I just joined Globex as a designer!", "role", "designer", "I just joined Globex as a designer"),
    ("I'm a teacher, so summers are quiet.", "role", "teacher", "I'm a teacher"),
    ("I work as a UX designer", "role", "UX designer", "I work as a UX designer"),
    ("I'm a Python developer", "role", "Python developer", "I'm a Python developer"),
    ("I'm the CTO at Initech", "employer", "Initech", "I'm the CTO at Initech"),
    ("I'm the founder of Acme Labs.", "employer", "Acme Labs", "I'm the founder of Acme Labs"),
    # LoCoMo
    ("It has paid off now that I'm an assistant manager- it's like a stepping stone", "role", "assistant manager", "I'm an assistant manager"),
    ("I live in New York with my wife.", "location", "New York", "I live in New York"),
    ("I'm in Berlin now, finally.", "location", "Berlin", "I'm in Berlin now"),
    ("I moved to San Francisco last year", "location", "San Francisco", "I moved to San Francisco"),
    ("I'm based in London, UK.", "location", "London", "I'm based in London"),
    ("I live in The Hague", "location", "The Hague", "I live in The Hague"),
    ("I'm located in Austin, TX", "location", "Austin", "I'm located in Austin"),
    ("my timezone is CET", "timezone", "CET", "my timezone is CET"),
    ("I'm on Pacific time, so mornings are hard", "timezone", "America/Los_Angeles", "I'm on Pacific time"),
    ("My time zone is UTC+2.", "timezone", "UTC+02:00", "My time zone is UTC+2"),
    ("I'm on GMT-5 this month", "timezone", "UTC-05:00", "I'm on GMT-5"),
    ("I'm in Asia/Kolkata", "timezone", "Asia/Kolkata", "I'm in Asia/Kolkata"),
    ("I'm on EST", "timezone", "America/New_York", "I'm on EST"),
    ("my tz is est", "timezone", "America/New_York", "my tz is est"),
    ("My phone number is +49 30 1234 5678.", "phone", "+493012345678", "My phone number is +49 30 1234 5678"),
    ("Text me at (555) 123-4567 tonight", "phone", "5551234567", "Text me at (555) 123-4567"),
    ("my email is jo@x.org and my cell is 555-867-5309", "phone", "5558675309", "my cell is 555-867-5309"),
    ("Please keep it short.", "communication_style", "concise", "Please keep it short"),
    ("I prefer detailed explanations with examples", "communication_style", "detailed", "I prefer detailed explanations"),
    ("No emojis, please!", "communication_style", "no emojis", "No emojis, please"),
    ("I'm not very technical", "technical_level", "beginner", "I'm not very technical"),
    ("I'm a complete beginner with Python.", "technical_level", "beginner", "I'm a complete beginner with Python"),
    ("Can you explain it like I'm five?", "technical_level", "beginner", "explain it like I'm five"),
    ("Honestly I'm fairly technical", "technical_level", "intermediate", "I'm fairly technical"),
    ("I'm an expert in Kubernetes", "technical_level", "expert", "I'm an expert in Kubernetes"),
    ("I'm a senior engineer, skip the basics", "technical_level", "expert", "I'm a senior engineer"),
]


@pytest.mark.parametrize(("text", "key", "value", "quote"), PROFILE_CASES)
def test_it_finds_the_stated_profile_value_and_its_exact_span(text, key, value, quote):
    candidate = _one_profile(text, key)
    assert candidate.value == value
    assert candidate.quote == quote
    assert (candidate.start, candidate.end) == (text.index(quote), text.index(quote) + len(quote))
    assert candidate.rule.startswith(f"profile.{key}.")


def test_a_name_and_a_preferred_name_in_one_sentence_are_two_facts():
    found = {c.key: c.value for c in extract_profile("My name is Ada Lovelace, but call me Addie.")}
    assert found == {"name": "Ada Lovelace", "preferred_name": "Addie"}


def test_an_ambiguous_zone_abbreviation_is_kept_as_written_with_low_confidence():
    candidate = _one_profile("my timezone is CST", "timezone")  # US Central or China?
    assert candidate.value == "CST"
    assert candidate.confidence <= 0.5


def test_a_student_at_a_university_is_a_member_not_an_employee():
    text = "I'm a student at MIT."
    assert {c.key: c.value for c in extract_profile(text)} == {"role": "student"}
    relation = _one_relation(text, "member_of")
    assert (relation.object_name, relation.object_kind) == ("MIT", "organisation")
    assert extract_relationships(text) == [relation]


def test_a_senior_title_outside_technology_says_nothing_about_technical_level():
    assert [c.key for c in extract_profile("I'm a senior nurse")] == ["role"]


def test_an_explicit_statement_is_more_confident_than_a_softer_cue():
    lives = _one_profile("I live in Berlin", "location")
    visiting_now = _one_profile("I'm in Berlin now", "location")
    work_at = _one_profile("I work at Acme", "employer")
    work_for = _one_profile("I work for Acme", "employer")  # "I work for Jane" reads the same
    assert lives.confidence > visiting_now.confidence
    assert work_at.confidence > work_for.confidence


def test_the_same_fact_stated_twice_is_proposed_once_from_its_most_confident_wording():
    text = "Reach me at ada@example.com. Again: my email is ada@example.com"
    (candidate,) = extract_profile(text)
    assert candidate.rule == "profile.email.stated"
    assert candidate.start == text.index("my email is")


# --- profile: near misses ----------------------------------------------------------------

NOT_PROFILE = [
    "I work at home most days",
    "I'm at the gym",
    "I'm a big fan of that",
    "I'm a huge fan of Lord of the Rings!",  # LoCoMo
    "I'm a shooting guard for the team and our season opener is next week",  # LoCoMo
    "my email is down again",
    "call me later, ok?",
    "Call me Monday",
    "Don't call me Bob.",
    "I'm in a meeting now",
    "I'm in Tokyo right now for work",
    "I'm in Berlin this week",
    "I'm in Paris now for a conference",
    "I'm from Sweden originally",
    "i work at google",  # no capital, no name: precision over recall
    "Last year I worked at Acme",
    "I'm a student of life",
    "I used to work at Acme",
    "I lost my job at Door Dash this month.",  # LoCoMo
    "When I'm a doctor I'll travel more",
    "My mom thinks I'm a nurse",
    "I'm not a doctor",
    "I'm a retired teacher",
    "I'm a beginner at painting",
    "I think I am an expert hiker now.",  # LoCoMo
    "I moved to Linux last year",
    "I joined Discord yesterday",
    "I joined a gym last week!",  # LoCoMo
    "my number is 7",
    "my phone is dead",
    "I don't use emojis much",
    "I'm in IT",
    "I'm on CT",
    "my timezone is UTC+25",
    "I live in a small town",
    "I love hiking and my dog",
]


@pytest.mark.parametrize("text", NOT_PROFILE)
def test_a_near_miss_proposes_no_profile_value(text):
    assert extract_profile(text) == []


# --- relationships: positives --------------------------------------------------------------

RELATION_CASES = [
    ("I work at Acme Corp.", "works_at", "Acme Corp", "organisation", "I work at Acme Corp", None),
    ("I just joined Acme!", "works_at", "Acme", "organisation", "I just joined Acme", "now"),
    ("I work at Acme now", "works_at", "Acme", "organisation", "I work at Acme now", "now"),
    ("I've been working at Acme since May", "works_at", "Acme", "organisation", "I've been working at Acme", "now"),
    ("I work at New Relic", "works_at", "New Relic", "organisation", "I work at New Relic", None),
    ("I live in New York now.", "lives_in", "New York", "place", "I live in New York now", "now"),
    ("I live in Berlin.", "lives_in", "Berlin", "place", "I live in Berlin", None),
    ("I moved to Berlin in March", "lives_in", "Berlin", "place", "I moved to Berlin", "now"),
    ("my sister Jane is visiting", "family_of", "Jane", "person", "my sister Jane", None),
    # LoCoMo
    ("That was for my daughter Sara's birthday - so much fun!", "family_of", "Sara", "person", "my daughter Sara", None),
    ("my little brother Tom Baker called", "family_of", "Tom Baker", "person", "my little brother Tom Baker", None),
    ("My mom's name is Grace.", "family_of", "Grace", "person", "My mom's name is Grace", None),
    ("my dad, Bruno, is visiting", "family_of", "Bruno", "person", "my dad, Bruno", None),
    # LoCoMo
    ("And nothing too soon, but my colleague Rob invited me to yoga.", "knows", "Rob", "person", "my colleague Rob", None),
    ("my best friend Ana lives nearby", "knows", "Ana", "person", "my best friend Ana", None),
    ("My boss is Mr. Smith.", "reports_to", "Mr. Smith", "person", "My boss is Mr. Smith", None),
    ("I report to Jane Doe.", "reports_to", "Jane Doe", "person", "I report to Jane Doe", None),
    ("my new manager Li Wei starts Monday", "reports_to", "Li Wei", "person", "my new manager Li Wei", "now"),
    ("I manage the platform team", "manages", "platform team", "organisation", "I manage the platform team", None),
    ("I manage Priya and two contractors", "manages", "Priya", "person", "I manage Priya", None),
    ("Since Monday, Jane now reports to me.", "manages", "Jane", "person", "Jane now reports to me", "now"),
    ("I'm part of the design team", "member_of", "design team", "organisation", "I'm part of the design team", None),
    ("I'm on the platform team", "member_of", "platform team", "organisation", "I'm on the platform team", None),
    ("I joined the chess club", "member_of", "chess club", "organisation", "I joined the chess club", "now"),
    ("I'm a member of the Sierra Club.", "member_of", "Sierra Club", "organisation", "I'm a member of the Sierra Club", None),
]


@pytest.mark.parametrize(("text", "predicate", "name", "kind", "quote", "hint"), RELATION_CASES)
def test_it_finds_the_speakers_relationship_with_its_object_and_exact_span(text, predicate, name, kind, quote, hint):
    relation = _one_relation(text, predicate)
    assert (relation.object_name, relation.object_kind, relation.valid_from_hint) == (name, kind, hint)
    assert relation.subject_is_speaker is True
    assert relation.quote == quote
    assert (relation.start, relation.end) == (text.index(quote), text.index(quote) + len(quote))
    assert relation.rule.startswith(f"relationship.{predicate}.")


def test_a_location_and_an_employer_come_with_their_relationship():
    text = "I'm a nurse at St. Mary's and I live in Leeds now."
    assert {(r.predicate, r.object_name) for r in extract_relationships(text)} == {
        ("works_at", "St. Mary's"),
        ("lives_in", "Leeds"),
    }


NOT_RELATION = [
    "my sister is great",
    "my kids are so excited about summer break!",  # LoCoMo
    "Thanks, my friend! See you soon",
    "Thanks, my friend, Jon!",  # Jon is addressed, not introduced
    "I run the Boston marathon every year",
    "my ex-wife Jane called",
    "I manage to do it somehow",
    "I'm on the right path",  # LoCoMo
    "I'm on the phone",
    "I'm part of the team",
    "I'm on the same team as you",
    "I joined a travel club!",  # LoCoMo
    "I just joined a new LGBTQ activist group last Tues.",  # LoCoMo
    "I joined Discord yesterday",
    "I work at home",
    "I'm at the gym",
    "I'm in a meeting now",
    "I used to live in Paris",
    "The team reports to me",
]


@pytest.mark.parametrize("text", NOT_RELATION)
def test_a_near_miss_proposes_no_relationship(text):
    assert extract_relationships(text) == []


# --- properties ----------------------------------------------------------------------------

# Cue words, names and punctuation, mixed with arbitrary text, so that the rules fire often
# on inputs nobody wrote by hand.
FRAGMENTS = [
    "my email is ", "email me at ", "ada@example.com", "my name is ", "call me ", "I go by ",
    "I work at ", "I work for ", "I'm a ", "I’m an ", "senior ", "software engineer", "nurse",
    " at ", " as a ", "I just joined ", "the ", "I live in ", "I'm in ", " now", "I moved to ",
    "my timezone is ", "UTC+2", "UTC-13", "CET", "Europe/Berlin", "I'm on ", "Pacific time",
    "my phone is ", "+49 30 1234567", "(555) 123-4567", "please keep it short", "no emojis please",
    "I'm not technical", "my sister ", "my friend ", "my boss is ", "I report to ", "I manage ",
    " reports to me", "I'm part of ", "platform team", "Acme Corp", "New York", "Jane", "St. ",
    "Mary's", "'s", "’s", "if ", "don't ", ". ", ", ", "\n", " ", "İ", "ß",
]
TEXTS = st.one_of(
    st.text(),
    st.lists(st.one_of(st.sampled_from(FRAGMENTS), st.text(max_size=4)), max_size=14).map("".join),
)


def _check_span(text, candidate):
    assert 0 <= candidate.start < candidate.end <= len(text)
    assert text[candidate.start : candidate.end] == candidate.quote
    assert 0.0 <= candidate.confidence <= 1.0


@settings(max_examples=400)
@given(TEXTS)
def test_profile_candidates_are_well_formed_and_quote_the_text(text):
    found = extract_profile(text)
    for candidate in found:
        _check_span(text, candidate)
        assert candidate.key in PROFILE_KEYS
        assert candidate.rule.startswith(f"profile.{candidate.key}.")
        assert candidate.value and candidate.value == candidate.value.strip()
        if candidate.key in {"email", "name", "preferred_name", "employer", "location", "role"}:
            # the reviewer can see the value inside the quote
            assert candidate.value.casefold() in candidate.quote.casefold()
    assert len({(c.key, c.value.casefold()) for c in found}) == len(found)
    assert extract_profile(text) == found


@settings(max_examples=400)
@given(TEXTS)
def test_relationship_candidates_are_well_formed_and_quote_the_text(text):
    found = extract_relationships(text)
    for candidate in found:
        _check_span(text, candidate)
        assert candidate.predicate in PREDICATES
        assert candidate.rule.startswith(f"relationship.{candidate.predicate}.")
        assert candidate.subject_is_speaker is True
        assert candidate.valid_from_hint in (None, "now")
        assert candidate.object_name and candidate.object_name in candidate.quote
    assert len({(c.predicate, c.object_name.casefold()) for c in found}) == len(found)
    assert extract_relationships(text) == found


@given(
    st.sampled_from([(text, key, value) for text, key, value, _ in PROFILE_CASES]),
    st.text(),
    st.text(),
)
@example(("My name's Priya, nice to meet you", "name", "Priya"), "IF", "")  # a condition word alone on the line before
def test_a_statement_is_found_the_same_way_on_its_own_line_in_any_message(case, before, after):
    text, key, value = case
    alone = [c for c in extract_profile(text) if c.key == key and c.value == value]
    prefix = before + "\n"
    embedded = [c for c in extract_profile(prefix + text + "\n" + after) if c.key == key and c.value == value]
    assert [(c.rule, c.start + len(prefix), c.end + len(prefix)) for c in alone] == [
        (c.rule, c.start, c.end) for c in embedded
    ]
