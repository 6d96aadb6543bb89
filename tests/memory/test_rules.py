"""The memory extraction rules (memory/extraction): identity and facts, preferences, plans
and events, decisions and requirements, procedures, censors, and the episode of a run of
turns. Pure functions, so no database.

Each family has a table of realistic positives with the exact memory text and quoted span,
and a table of near misses that must stay quiet (questions, negations, third person,
conditions, lowercase names): a reviewer pays for every wrong candidate. Lines marked
LoCoMo are turns from the LoCoMo benchmark conversations."""

from __future__ import annotations

from datetime import date, datetime, timedelta, timezone

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from conversations.summarise._types import Turn
from memory.extraction import (
    ENTITY_KINDS,
    MAX_EPISODE_CHARS,
    ROUTES,
    RULES,
    TYPES,
    MemoryCandidate,
    episode,
    extract,
)

MONDAY = datetime(2023, 5, 8, 13, 56, tzinfo=timezone.utc)


def _by_rule(text: str, family: str) -> list[MemoryCandidate]:
    return [c for c in extract(text, anchor=MONDAY) if c.rule.startswith(family)]


def _check(text: str, found: MemoryCandidate, rule: str, quote: str) -> None:
    assert found.rule == rule
    assert found.quote == quote
    assert (found.start, found.end) == (text.index(quote), text.index(quote) + len(quote))
    assert found.certainty == "extracted"


# --- identity and facts ------------------------------------------------------------------------

IDENTITY_CASES = [
    # (text, rule, attribute, value, polarity, memory text, quote)
    ("Hi, my name is Caroline.", "identity.name", "name", "caroline", 1, "{speaker}'s name is Caroline", "my name is Caroline"),
    ("Please call me Mel.", "identity.preferred_name", "preferred_name", "mel", 1, "{speaker} goes by Mel", "call me Mel"),
    ("I work at Acme Corp. It's big.", "identity.employer", "employer", "acme corp", 1, "{speaker} works at Acme Corp", "I work at Acme Corp"),
    ("I live in Berlin now.", "identity.location", "location", "berlin", 1, "{speaker} lives in Berlin", "I live in Berlin now"),
    ("I'm a teacher, so summers are quiet.", "identity.role", "role", "teacher", 1, "{speaker} is a teacher", "I'm a teacher"),
    # LoCoMo
    ("It has paid off now that I'm an assistant manager- it's a stepping stone", "identity.role", "role", "assistant manager", 1, "{speaker} is an assistant manager", "I'm an assistant manager"),
    ("I'm from Sweden originally.", "identity.hometown", "hometown", "sweden", 1, "{speaker} is from Sweden", "I'm from Sweden"),
    ("I grew up in Ohio", "identity.hometown", "hometown", "ohio", 1, "{speaker} grew up in Ohio", "I grew up in Ohio"),
    ("I'm 34 years old.", "identity.age", "age", "34", 1, "{speaker} is 34 years old (said on 8 May 2023)", "I'm 34 years old"),
    ("I turned 40 last week", "identity.age", "age", "40", 1, "{speaker} turned 40 in the week of 1 May 2023", "I turned 40 last week"),
    ("My birthday is on June 5th.", "identity.birthday", "birthday", "06-05", 1, "{speaker}'s birthday is on 5 June", "My birthday is on June 5th"),
    ("my birthday is in June", "identity.birthday", "birthday", "june", 1, "{speaker}'s birthday is in June", "my birthday is in June"),
    ("I was born in 1990.", "identity.birthday", "birth_year", "1990", 1, "{speaker} was born in 1990", "I was born in 1990"),
    ("I'm married to Sam.", "identity.relationship", "relationship_status", "married", 1, "{speaker} is married to Sam", "I'm married to Sam"),
    ("I'm not married", "identity.relationship", "relationship_status", "married", -1, "{speaker} is not married", "I'm not married"),
    ("We got engaged last week!", "identity.relationship", "relationship_status", "engaged", 1, "{speaker} got engaged in the week of 1 May 2023", "We got engaged"),
    ("I'm a mom of two.", "identity.children", "children", "2", 1, "{speaker} has two children", "I'm a mom of two"),
    ("I don't have kids", "identity.children", "children", "0", 1, "{speaker} has no children", "I don't have kids"),
    ("I'm allergic to peanuts.", "fact.allergy", "allergy", "peanuts", 1, "{speaker} is allergic to peanuts", "I'm allergic to peanuts"),
    # LoCoMo
    ("I found out recently I'm allergic to cockroaches as well, so who knows.", "fact.allergy", "allergy", "cockroaches", 1, "{speaker} is allergic to cockroaches", "I'm allergic to cockroaches"),
    ("I'm not allergic to cats", "fact.allergy", "allergy", "cats", -1, "{speaker} is not allergic to cats", "I'm not allergic to cats"),
    ("I have a severe shellfish allergy", "fact.allergy", "allergy", "shellfish", 1, "{speaker} has a shellfish allergy", "I have a severe shellfish allergy"),
    ("I'm vegetarian.", "fact.diet", "diet", "vegetarian", 1, "{speaker} is vegetarian", "I'm vegetarian"),
    ("I'm a vegan", "fact.diet", "diet", "vegan", 1, "{speaker} is vegan", "I'm a vegan"),
    ("I went vegan last year", "fact.diet", "diet", "vegan", 1, "{speaker} went vegan in 2022", "I went vegan"),
    ("I have a dog named Luna.", "fact.pet", "pet", "luna", 1, "{speaker} has a dog named Luna", "I have a dog named Luna"),
    ("my cat Oliver hid his bone in my slipper", "fact.pet", "pet", "oliver", 1, "{speaker} has a cat named Oliver", "my cat Oliver"),
]


@pytest.mark.parametrize(("text", "rule", "attribute", "value", "polarity", "memory", "quote"), IDENTITY_CASES)
def test_an_identity_or_fact_is_found_with_its_key_and_quote(text, rule, attribute, value, polarity, memory, quote):
    (found,) = [c for c in extract(text, anchor=MONDAY) if c.rule == rule]
    _check(text, found, rule, quote)
    assert (found.attribute, found.value, found.polarity, found.text) == (attribute, value, polarity, memory)
    assert found.type == ("fact" if rule.startswith("fact.") else "identity")


def test_an_allergy_matters_more_than_a_name_and_a_stated_name_more_than_a_hometown():
    (allergy,) = extract("I'm allergic to peanuts", anchor=MONDAY)
    (name,) = extract("my name is Ada", anchor=MONDAY)
    (hometown,) = extract("I'm from Sweden", anchor=MONDAY)
    assert allergy.importance > name.importance
    assert name.confidence > hometown.confidence


def test_a_dated_change_carries_its_event_dates():
    (engaged,) = _by_rule("We got engaged last week!", "identity.relationship")
    assert (engaged.event_first, engaged.event_last) == (date(2023, 5, 1), date(2023, 5, 7))


NOT_IDENTITY = [
    "Do you know my name is Ada?",
    "What's your name?",
    "I work at home",
    "i work at google",
    "If I lived in Paris I'd be happy",
    "She's allergic to peanuts",
    "Are you allergic to peanuts?",
    "My mom thinks I'm allergic to cats",
    "I'm engaged in a project",
    "I'm single-handedly running this",
    "I'm married to my job",
    "I'm a vegetarian chef",
    "I'm 5 minutes away",
    "my dog is so cute",
    "I'm from a small town",
    "my birthday is next week",
    "I wish I wasn't allergic!",  # LoCoMo
]


@pytest.mark.parametrize("text", NOT_IDENTITY)
def test_a_near_miss_states_no_identity_or_fact(text):
    assert [c for c in extract(text, anchor=MONDAY) if c.type in ("identity", "fact") and c.route == "memory"] == []


# --- preferences -------------------------------------------------------------------------------

PREFERENCE_CASES = [
    # (text, rule, attribute, value, polarity, memory text, quote)
    ("I love hiking!", "preference.love", "likes:hiking", "hiking", 1, "{speaker} loves hiking", "I love hiking"),
    ("I love hiking, do you?", "preference.love", "likes:hiking", "hiking", 1, "{speaker} loves hiking", "I love hiking"),
    # LoCoMo
    ("That kind of determination and heart is why I love basketball.", "preference.love", "likes:basketball", "basketball", 1, "{speaker} loves basketball", "I love basketball"),
    ("I love spending time with my family", "preference.love", "likes:spending time with my family", "spending time with my family", 1, "{speaker} loves spending time with {speaker}'s family", "I love spending time with my family"),
    # LoCoMo
    ("It's a great way to switch off. I also enjoy aerial yoga, it's fun.", "preference.enjoy", "likes:aerial yoga", "aerial yoga", 1, "{speaker} enjoys aerial yoga", "I also enjoy aerial yoga"),
    # LoCoMo
    ("Books and movies make us escape. I like to collect jerseys.", "preference.like", "likes:collect jerseys", "collect jerseys", 1, "{speaker} likes to collect jerseys", "I like to collect jerseys"),
    ("I hate waiting in line.", "preference.hate", "likes:waiting in line", "waiting in line", -1, "{speaker} hates waiting in line", "I hate waiting in line"),
    ("I can't stand loud music", "preference.hate", "likes:loud music", "loud music", -1, "{speaker} can't stand loud music", "I can't stand loud music"),
    ("I don't like jazz.", "preference.dislike", "likes:jazz", "jazz", -1, "{speaker} doesn't like jazz", "I don't like jazz"),
    ("I'm not a big fan of horror movies", "preference.dislike", "likes:horror movies", "horror movies", -1, "{speaker} is not a fan of horror movies", "I'm not a big fan of horror movies"),
    # LoCoMo
    ("I'm a huge fan of Lord of the Rings!", "preference.fan", "likes:lord of the rings", "lord of the rings", 1, "{speaker} is a big fan of Lord of the Rings", "I'm a huge fan of Lord of the Rings"),
    ("I'm really into bouldering", "preference.into", "likes:bouldering", "bouldering", 1, "{speaker} is really into bouldering", "I'm really into bouldering"),
    ("I prefer tea over coffee.", "preference.prefer", "prefers:coffee or tea", "tea", 1, "{speaker} prefers tea over coffee", "I prefer tea over coffee"),
    ("I prefer working from home", "preference.prefer", "likes:working from home", "working from home", 1, "{speaker} prefers working from home", "I prefer working from home"),
    # LoCoMo
    ("My favorite character is Aragorn, he grows so much.", "preference.favorite", "favorite:character", "aragorn", 1, "{speaker}'s favorite character is Aragorn", "My favorite character is Aragorn"),
    ('My favourite band is "The National".', "preference.favorite", "favorite:band", "national", 1, "{speaker}'s favorite band is The National", 'My favourite band is "The National"'),
    ("One of my favorite movies is Inception.", "preference.favorite", "likes:inception", "inception", 1, "Inception is one of {speaker}'s favorite movies", "One of my favorite movies is Inception"),
]


@pytest.mark.parametrize(("text", "rule", "attribute", "value", "polarity", "memory", "quote"), PREFERENCE_CASES)
def test_a_preference_is_found_with_its_polarity_and_quote(text, rule, attribute, value, polarity, memory, quote):
    (found,) = _by_rule(text, "preference.")
    _check(text, found, rule, quote)
    assert found.type == "preference"
    assert (found.attribute, found.value, found.polarity, found.text) == (attribute, value, polarity, memory)


def test_loving_and_hating_the_same_thing_share_a_key_with_opposite_polarity():
    (love,) = extract("I love hiking", anchor=MONDAY)
    (dislike,) = extract("I don't like hiking", anchor=MONDAY)
    assert love.attribute == dislike.attribute == "likes:hiking"
    assert (love.polarity, dislike.polarity) == (1, -1)


def test_two_clauses_give_two_preferences():
    found = extract("I like the ocean but I hate sand.", anchor=MONDAY)
    assert [(c.value, c.polarity) for c in found] == [("ocean", 1), ("sand", -1)]


NOT_PREFERENCE = [
    "Do you like hiking?",
    "Do I love it? Yes",
    "I love it!",
    "I love that!",
    "I love your painting",
    "I love how you did that",
    "I'd love to go hiking",
    "I would love a coffee",
    "If I liked jazz I'd go",
    "She loves hiking",
    "What I love is the ocean",
    "I like to think so",
    "I love to!",
    "I love you guys",
    "I don't hate it",
    "I love the colors in this one",
    "Caroline said I love hiking",
    'She told me "I love hiking"',
    "I love spending time hiking with my friends and family in the mountains every summer",
]


@pytest.mark.parametrize("text", NOT_PREFERENCE)
def test_a_near_miss_states_no_preference(text):
    assert _by_rule(text, "preference.") == []


# --- plans and events ------------------------------------------------------------------------

EPISODIC_CASES = [
    # (text, rule, memory text, quote, event_first, event_last)
    # LoCoMo
    ("I went to a LGBTQ support group yesterday and it was so powerful.", "episodic.event",
     "{speaker} went to a LGBTQ support group on 7 May 2023 (said on 8 May 2023)",
     "I went to a LGBTQ support group yesterday", date(2023, 5, 7), date(2023, 5, 7)),
    ("I'm going to Paris next month.", "episodic.plan", "{speaker} is going to Paris in June 2023 (said on 8 May 2023)",
     "I'm going to Paris next month", date(2023, 6, 1), date(2023, 6, 30)),
    ("We're going to Paris in June.", "episodic.plan",
     "{speaker} and others are going to Paris in June 2023 (said on 8 May 2023)", "We're going to Paris in June",
     date(2023, 6, 1), date(2023, 6, 30)),
    ("I'll visit my mom on Friday.", "episodic.plan", "{speaker} will visit {speaker}'s mom on 12 May 2023 (said on 8 May 2023)",
     "I'll visit my mom on Friday", date(2023, 5, 12), date(2023, 5, 12)),
    # LoCoMo
    ("Next month I'm having an LGBTQ art show with my paintings - can't wait!", "episodic.plan",
     "In June 2023, {speaker} is having an LGBTQ art show with {speaker}'s paintings (said on 8 May 2023)",
     "Next month I'm having an LGBTQ art show with my paintings", date(2023, 6, 1), date(2023, 6, 30)),
    ("I'm planning to paint a mural for the community center.", "episodic.plan",
     "{speaker} is planning to paint a mural for the community center (said on 8 May 2023)",
     "I'm planning to paint a mural for the community center", None, None),
    # LoCoMo
    ("Gaming has been my focus. Last week I won my second tournament!", "episodic.event",
     "In the week of 1 May 2023, {speaker} won {speaker}'s second tournament (said on 8 May 2023)",
     "Last week I won my second tournament", date(2023, 5, 1), date(2023, 5, 7)),
    ("My kids and I went camping last weekend.", "episodic.event",
     "{speaker} and {speaker}'s kids went camping on the weekend of 6 May 2023 (said on 8 May 2023)",
     "My kids and I went camping last weekend", date(2023, 5, 6), date(2023, 5, 7)),
    ("I finished my first marathon two weeks ago", "episodic.event",
     "{speaker} finished {speaker}'s first marathon in the week of 24 April 2023 (said on 8 May 2023)",
     "I finished my first marathon two weeks ago", date(2023, 4, 24), date(2023, 4, 30)),
    # LoCoMo
    ("A lot's happened - I just joined a new LGBTQ activist group last Tues.", "episodic.event",
     "{speaker} just joined a new LGBTQ activist group on 2 May 2023 (said on 8 May 2023)",
     "I just joined a new LGBTQ activist group last Tues", date(2023, 5, 2), date(2023, 5, 2)),
    # LoCoMo
    ("Hey Jon! I just got accepted for a fashion internship!", "episodic.recent",
     "{speaker} just got accepted for a fashion internship (said on 8 May 2023)",
     "I just got accepted for a fashion internship", date(2023, 5, 8), date(2023, 5, 8)),
    ("I've finally finished my novel.", "episodic.recent", "{speaker} has finally finished {speaker}'s novel (said on 8 May 2023)",
     "I've finally finished my novel", None, None),
]


@pytest.mark.parametrize(("text", "rule", "memory", "quote", "first", "last"), EPISODIC_CASES)
def test_a_plan_or_event_is_found_with_its_dates_resolved(text, rule, memory, quote, first, last):
    (found,) = _by_rule(text, "episodic.")
    _check(text, found, rule, quote)
    assert found.type == "episodic"
    assert found.text == memory
    assert (found.event_first, found.event_last) == (first, last)


def test_a_dated_plan_is_more_confident_than_an_undated_one_and_a_milestone_more_important():
    (dated,) = extract("I'm planning to move to Lisbon next year", anchor=MONDAY)
    (undated,) = extract("I'm planning to move to Lisbon", anchor=MONDAY)
    (milestone,) = extract("I just started a new job", anchor=MONDAY)
    (outing,) = extract("I just watched a movie", anchor=MONDAY)
    assert dated.confidence > undated.confidence
    assert milestone.importance > outing.importance


NOT_EPISODIC = [
    "I'm going to keep going!",
    "I will!",
    "I'll see you tomorrow",
    "Did you go there yesterday?",
    "Did I tell you I went to Paris yesterday?",
    "She went to Paris yesterday",
    "If I went yesterday, I'd have seen it",
    "I went to the gym",
    "I didn't go yesterday",
    "I had to work yesterday",
    "I used to paint last year",
    "I never went there last year",
    "I'm going to Paris in 2 weeks?",
    "These figurines I bought yesterday remind me of family love.",  # LoCoMo
    "Yeah, I made it in pottery class yesterday.",  # LoCoMo
    "I'm thinking of you tonight",
    "When I went there last year it rained",
]


@pytest.mark.parametrize("text", NOT_EPISODIC)
def test_a_near_miss_records_no_episode(text):
    assert _by_rule(text, "episodic.") == []


# --- decisions, constraints, requirements ----------------------------------------------------------

ENTITY_CASES = [
    # (text, rule, kind, name, quote)
    ("Decision: use Postgres for the job queue.", "decision.heading", "decision", "Use Postgres for the job queue",
     "Decision: use Postgres for the job queue."),
    ("- **Constraint:** uploads stay under 25 MB", "constraint.heading", "constraint", "Uploads stay under 25 MB",
     "- **Constraint:** uploads stay under 25 MB"),
    ("Requirement: every endpoint needs an API key", "requirement.heading", "requirement", "Every endpoint needs an API key",
     "Requirement: every endpoint needs an API key"),
    ("After a long call, we decided to drop support for Python 3.8.", "decision.agreed", "decision",
     "Drop support for Python 3.8", "we decided to drop support for Python 3.8"),
    ("We're going with Redis for the cache.", "decision.going_with", "decision", "Go with Redis for the cache",
     "We're going with Redis for the cache"),
    ("Uploads must not exceed 25 MB.", "constraint.must_not", "constraint", "Uploads must not exceed 25 MB",
     "Uploads must not exceed 25 MB"),
    ("Please never exceed the rate limit.", "constraint.never_exceed", "constraint", "Please never exceed the rate limit",
     "Please never exceed the rate limit"),
    ("All passwords must be hashed with bcrypt.", "requirement.must", "requirement", "All passwords must be hashed with bcrypt",
     "All passwords must be hashed with bcrypt"),
    ("The service shall log every request.", "requirement.must", "requirement", "The service shall log every request",
     "The service shall log every request"),
]


@pytest.mark.parametrize(("text", "rule", "kind", "name", "quote"), ENTITY_CASES)
def test_a_decision_constraint_or_requirement_becomes_an_entity_candidate(text, rule, kind, name, quote):
    (found,) = extract(text, anchor=MONDAY)
    _check(text, found, rule, quote)
    assert (found.route, found.entity_kind, found.name, found.type) == ("entity", kind, name, "fact")
    assert found.text.startswith(f"{kind.capitalize()} (from {{speaker}}): ")


NOT_ENTITY = [
    "You must be so proud!",
    "It must have been hard.",
    "That must be fun",
    "We must not give up!",
    "Taking initiative is a must if you wanna achieve your goals.",  # LoCoMo
    "The energy from the crowd must have unreal!",  # LoCoMo, sic
    "We're going with my parents to the beach",
    "Did we decide to use Postgres?",
    "If we decided to move, we'd tell you.",
    "We haven't decided yet.",
    "Your family must be so proud of you.",
    "Decision: should we use Postgres?",
]


@pytest.mark.parametrize("text", NOT_ENTITY)
def test_a_near_miss_proposes_no_entity(text):
    assert [c for c in extract(text, anchor=MONDAY) if c.route == "entity"] == []


# --- procedures ---------------------------------------------------------------------------

PROCEDURE_CASES = [
    # (text, rule, name, steps, memory text)
    ("To deploy:\n1. run the tests\n2. build the image\n3. push to the registry", "procedure.steps", "how to deploy",
     ("run the tests", "build the image", "push to the registry"),
     "To deploy: 1) run the tests 2) build the image 3) push to the registry (as {speaker} explained)"),
    ("Steps to rotate the keys:\n\n- revoke the old key\n- create a new one\n\nThanks!", "procedure.steps",
     "how to rotate the keys", ("revoke the old key", "create a new one"),
     "To rotate the keys: 1) revoke the old key 2) create a new one (as {speaker} explained)"),
    ("Release checklist:\n* bump the version\n* tag the commit", "procedure.steps", "release checklist",
     ("bump the version", "tag the commit"), "Release checklist: 1) bump the version 2) tag the commit (as {speaker} explained)"),
    ("To deploy: 1. run the tests 2. build the image 3. push", "procedure.inline", "how to deploy",
     ("run the tests", "build the image", "push"), "To deploy: 1) run the tests 2) build the image 3) push (as {speaker} explained)"),
    ("To reset the router: unplug it, wait 30 seconds, plug it back in.", "procedure.inline", "how to reset the router",
     ("unplug it", "wait 30 seconds", "plug it back in"),
     "To reset the router: 1) unplug it 2) wait 30 seconds 3) plug it back in (as {speaker} explained)"),
    ("To make cold brew, first grind the beans, then steep them overnight, finally strain.", "procedure.sequence",
     "how to make cold brew", ("grind the beans", "steep them overnight", "strain"),
     "To make cold brew: 1) grind the beans 2) steep them overnight 3) strain (as {speaker} explained)"),
]


@pytest.mark.parametrize(("text", "rule", "name", "steps", "memory"), PROCEDURE_CASES)
def test_a_procedure_is_found_with_its_goal_and_ordered_steps(text, rule, name, steps, memory):
    (found,) = extract(text, anchor=MONDAY)
    assert (found.rule, found.type, found.name, found.steps, found.text) == (rule, "procedure", name, steps, memory)
    assert text[found.start : found.end] == found.quote
    assert found.quote.endswith(steps[-1]) or found.quote.rstrip(".").endswith(steps[-1])


NOT_PROCEDURE = [
    "To be honest: I went, I saw, I left.",
    "First I went to the store, then we had lunch, finally we went home.",
    "To deploy:\n1. run the tests",
    "Here's my list:\n- eggs\n- milk",
    "To my surprise, first he laughed, then he cried.",
    "To deploy: build it and push it.",
    "How to deploy?\n1. build\n2. push",
]


@pytest.mark.parametrize("text", NOT_PROCEDURE)
def test_a_near_miss_describes_no_procedure(text):
    assert [c for c in extract(text, anchor=MONDAY) if c.type == "procedure"] == []


# --- censors -------------------------------------------------------------------------------

CENSOR_CASES = [
    # (text, rule, trigger, memory text, quote)
    ("Never deploy on a Friday again.", "censor.never", "deploy on a Friday", "{speaker} warns: never deploy on a Friday",
     "Never deploy on a Friday again"),
    ("Ugh. I'll never use regex to parse HTML again.", "censor.never", "use regex to parse HTML",
     "{speaker} warns: never use regex to parse HTML", "I'll never use regex to parse HTML again"),
    ("Don't ever force-push to the shared branch.", "censor.dont_ever", "force-push to the shared branch",
     "{speaker} warns: never force-push to the shared branch", "Don't ever force-push to the shared branch"),
    ("Do not run migrations in production.", "censor.in_production", "run migrations in production",
     "{speaker} warns: never run migrations in production", "Do not run migrations in production"),
    ("Lesson learned: don't trust the cache.", "censor.lesson", "trust the cache", "{speaker} warns: never trust the cache",
     "Lesson learned: don't trust the cache"),
    ("Avoid the staging DB because it's shared with QA.", "censor.avoid", "the staging DB",
     "{speaker} warns: avoid the staging DB because it's shared with QA",
     "Avoid the staging DB because it's shared with QA"),
]


@pytest.mark.parametrize(("text", "rule", "trigger", "memory", "quote"), CENSOR_CASES)
def test_a_warning_becomes_a_censor_with_its_trigger(text, rule, trigger, memory, quote):
    (found,) = extract(text, anchor=MONDAY)
    _check(text, found, rule, quote)
    assert (found.type, found.trigger, found.text) == ("censor", trigger, memory)


NOT_CENSOR = [
    "Don't ever give up on your dreams!",  # LoCoMo-style encouragement
    "Never stop dreaming!",
    "I never saw him again.",
    "Never doubt yourself again",
    "Should we never deploy on Friday again?",
    "Don't ever change!",
    "I never deployed in production",
    "Don't ever let anyone tell you otherwise",
    "Never again!",
]


@pytest.mark.parametrize("text", NOT_CENSOR)
def test_a_near_miss_sets_no_censor(text):
    assert [c for c in extract(text, anchor=MONDAY) if c.type == "censor"] == []


# --- extract as a whole ------------------------------------------------------------------------

def test_the_same_fact_said_twice_is_proposed_once_from_its_most_confident_wording():
    text = "I work for Acme. Again: I work at Acme."
    (found,) = [c for c in extract(text, anchor=MONDAY) if c.attribute == "employer"]
    assert found.quote == "I work at Acme"


def test_candidates_come_in_text_order_across_families():
    text = "My name is Ada. I love hiking. I went to Paris yesterday. Never deploy on a Friday again."
    assert [c.rule for c in extract(text, anchor=MONDAY)] == [
        "identity.name", "preference.love", "episodic.event", "censor.never",
    ]


def test_every_rule_is_documented_under_a_family_name():
    families = {"identity", "fact", "preference", "episodic", "decision", "constraint", "requirement", "procedure", "censor"}
    assert RULES and all(name.split(".")[0] in families and description for name, description in RULES.items())


# --- properties ------------------------------------------------------------------------------

FRAGMENTS = [
    "my name is ", "Ada", "I work at ", "Acme Corp", "I live in ", "Berlin", "I'm ", "I am ", "allergic to ",
    "peanuts", "vegetarian", "married", " years old", "34", "my birthday is ", "I love ", "I like ", "I don't like ",
    "I hate ", "hiking", "I prefer ", " over ", "my favorite book is ", "I'm going to ", "I went to ", "I just ",
    "started ", "yesterday", "next month", "last week", "we decided to ", "Decision: ", "must not ", " must ",
    "The API", "To deploy:", "\n1. ", "\n- ", "first ", ", then ", "finally ", "Never ", " again", "Don't ever ",
    "in production", "Avoid ", " because ", "you", "my ", "it", "?", ". ", ", ", "\n", " ", "if ", "İ", "ß", "’", '"',
]
TEXTS = st.one_of(
    st.text(),
    st.lists(st.one_of(st.sampled_from(FRAGMENTS), st.text(max_size=4)), max_size=18).map("".join),
)
OFFSETS = st.timedeltas(min_value=timedelta(hours=-12), max_value=timedelta(hours=14))
ANCHORS = st.datetimes(timezones=st.builds(timezone, OFFSETS))


@settings(max_examples=400)
@given(TEXTS, ANCHORS)
def test_candidates_are_well_formed_and_quote_the_text(text, anchor):
    found = extract(text, anchor=anchor)
    for c in found:
        assert 0 <= c.start < c.end <= len(text)
        assert text[c.start : c.end] == c.quote
        assert 0.0 <= c.confidence <= 1.0 and 0.0 <= c.importance <= 1.0
        assert c.type in TYPES and c.route in ROUTES and c.rule in RULES
        assert c.certainty == "extracted" and c.polarity in (1, -1)
        assert "{speaker}" in c.text
        assert (c.route == "entity") == (c.entity_kind in ENTITY_KINDS)
        assert (c.route == "memory") == (c.entity_kind is None)
        assert bool(c.steps) == (c.type == "procedure")
        assert bool(c.trigger) == (c.type == "censor")
        assert (c.event_first is None) == (c.event_last is None)
        assert c.event_first is None or c.event_first <= c.event_last
    assert len({(c.type, c.attribute, c.value) for c in found}) == len(found)
    assert [c.start for c in found] == sorted(c.start for c in found)
    assert extract(text, anchor=anchor) == found


@given(
    st.sampled_from([(text, rule, quote) for text, rule, *_, quote in IDENTITY_CASES + PREFERENCE_CASES]),
    st.text(),
    st.text(),
)
def test_a_statement_is_found_the_same_way_on_its_own_line_in_any_message(case, before, after):
    text, rule, quote = case
    prefix = before + "\n"
    found = [c for c in extract(prefix + text + "\n" + after, anchor=MONDAY) if c.rule == rule and c.quote == quote]
    assert [c.start - len(prefix) for c in found] == [text.index(quote)]


# --- episodes ------------------------------------------------------------------------------

def _turns(*lines: tuple[str, str], start: datetime = MONDAY, gap: timedelta = timedelta(seconds=30)) -> list[Turn]:
    return [Turn(i + 1, speaker, "inbound", content, start + gap * i) for i, (speaker, content) in enumerate(lines)]


SESSION = _turns(  # LoCoMo, conv-26 session 1 (shortened)
    ("Caroline", "Hey Mel! Good to see you! How have you been?"),
    ("Melanie", "Hey Caroline! Good to see you! I'm swamped with the kids & work. What's up with you? Anything new?"),
    ("Caroline", "I went to a LGBTQ support group yesterday and it was so powerful."),
    ("Melanie", "Wow, that's cool, Caroline! What happened that was so awesome? Did you hear any inspiring stories?"),
    ("Caroline", "The transgender stories were so inspiring! I was so happy and thankful for all the support."),
    ("Melanie", "Thanks!"),
)


def test_an_episode_names_the_day_and_the_people_then_one_sentence_per_turn():
    drafted = episode(SESSION)
    lines = drafted.text.split("\n")
    assert lines[0] == "On 8 May 2023, Caroline and Melanie talked."
    assert "Caroline: I went to a LGBTQ support group yesterday (7 May 2023) and it was so powerful." in lines
    assert not any("Good to see you" in line or line == "Melanie: Thanks!" for line in lines)
    assert (drafted.first, drafted.last) == (date(2023, 5, 8), date(2023, 5, 8))
    assert drafted.participants == ("Caroline", "Melanie")
    assert drafted.turn_ids == (1, 2, 3, 4, 5, 6)


def test_an_episode_quotes_the_sentence_it_used_from_each_turn_verbatim():
    drafted = episode(SESSION)
    contents = {t.id: t.content for t in SESSION}
    assert drafted.quotes and set(drafted.quotes) <= set(contents)
    for turn_id, quote in drafted.quotes.items():
        assert quote in contents[turn_id]
    assert 1 not in drafted.quotes and 6 not in drafted.quotes  # greetings and thanks


def test_an_episode_over_two_days_says_so():
    turns = _turns(("Jon", "I lost my job at the bank last week."), ("Gina", "I opened my own clothing store online."),
                   gap=timedelta(days=1))
    assert episode(turns).text.startswith("On 8\u20139 May 2023, Jon and Gina talked.")


def test_an_episodes_text_splits_into_its_days_and_its_lines():
    from memory.extraction.episodes import dated_lines

    drafted = episode(SESSION)
    when, lines = dated_lines(drafted.text)
    assert when == "8 May 2023" and lines == drafted.text.split("\n", 1)[1]
    many = _turns(*((name, f"I went hiking with the {name} family on Sunday.") for name in ("Ada", "Bo", "Cy", "Di", "Ed")),
                  gap=timedelta(days=1))
    assert dated_lines(episode(many).text)[0] == "8\u201312 May 2023"  # "Ada, Bo, Cy and 2 others talked."
    assert dated_lines("On 8 May 2023, Jon and Gina talked.") is None  # a header and no line
    assert dated_lines("Jon lost his job at the bank.") is None


def test_a_long_episode_stays_within_budget_dropping_the_least_informative_turns_in_order():
    filler = "I went to the market and bought some bread and cheese for the picnic with the neighbours."
    rich = "I finished my first marathon in Boston yesterday with a time of 3 hours and 41 minutes, a personal best!"
    lines = [("Ada", filler), ("Bo", rich)] * 12
    drafted = episode(_turns(*lines))
    assert len(drafted.text) <= MAX_EPISODE_CHARS
    body = drafted.text.split("\n")[1:]
    assert body and sum("marathon" in line for line in body) >= sum("market" in line for line in body)
    kept = [turn_id for turn_id in drafted.turn_ids if turn_id in drafted.quotes]
    assert kept == sorted(kept) and len(kept) == len(body)


def test_a_long_sentence_is_clipped_in_the_text_but_quoted_whole():
    sentence = " ".join(f"word{i}" for i in range(50)) + " yesterday."
    drafted = episode(_turns(("Ada", sentence)))
    assert drafted.text.split("\n")[1].endswith("\u2026")
    assert drafted.quotes == {1: sentence}


def test_system_turns_are_not_participants():
    turns = [*_turns(("Ada", "I moved to Lisbon last month for a new job.")),
             Turn(9, "mnemo", "system", "Conversation imported.", MONDAY)]
    assert episode(turns).participants == ("Ada",)


def test_an_episode_needs_turns_with_timezone_aware_times():
    with pytest.raises(ValueError):
        episode([])
    with pytest.raises(ValueError):
        episode([Turn(1, "Ada", "inbound", "hi", datetime(2023, 5, 8))])
