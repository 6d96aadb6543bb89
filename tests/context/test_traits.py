"""Questions about what a person is like (issue 22 part 2, context.traits): recognised by
their form, and answered from what the person said about themselves by meaning, with
their name left out of the full-text ranking. The pure rules alone, then recall against
the real database and the bundled model."""

from __future__ import annotations

import pytest

from context.traits import trait_question, without_names
from entities.models import Entity
from entities.services import entity_create
from tests.context.test_api import log_chat


@pytest.mark.parametrize("question", [
    "Would Melanie be more interested in going to a national park or a theme park?",
    "What might John's financial status be?",
    "Would Caroline be considered religious?",
    "What personality traits might Melanie say Caroline has?",
    "What are Joanna's hobbies?",
    "What kind of books does Nate enjoy?",
    "Is Tim likely to move abroad?",
    "What pets wouldn't bother Joanna?",
])
def test_it_recognises_questions_about_what_someone_is_like(question):
    assert trait_question(question)


@pytest.mark.parametrize("question", [
    "When did Caroline go to the LGBTQ support group?",
    "What did Melanie paint last week?",
    "How many hikes has Joanna been on?",
    "Where did John move in 2022?",
])
def test_it_leaves_questions_about_records_alone(question):
    assert not trait_question(question)


def test_the_names_words_leave_and_the_rest_stay():
    assert without_names(["anoth", "melani", "roadtrip", "soon"], ["melani"]) == ["anoth", "roadtrip", "soon"]
    assert without_names(["melani"], ["melani"]) == ["melani"]  # a query of nothing but the name keeps it
    assert without_names(["camp", "melani"], []) == ["camp", "melani"]


# A two-person chat: the other speaker says Melanie's name in most turns, Melanie never does.
CHAT = [
    ("Caroline", "Hey Melanie! How was your week, Melanie?"),
    ("Melanie", "We always look forward to our family camping trip, roasting marshmallows by the fire."),
    ("Caroline", "Melanie, that is so sweet. Thanks Melanie!"),
    ("Melanie", "Last month I sorted out the paperwork for the car insurance."),
    ("Caroline", "Good for you, Melanie. Talk soon, Melanie!"),
]


def _recall(api, query, **body):
    response = api.post("/recall", {"query": query, "limit": 5, **body})
    assert response.status_code == 200, response.json()
    return response.json()["results"]


def _turn(results, external_id):
    return next(r for r in results if [s["external_id"] for s in r["sources"]] == [external_id])


def test_a_trait_question_finds_what_the_person_said_not_who_said_their_name(api, workspace):
    log_chat(workspace, CHAT, thread="camp")
    results = _recall(api, "Would Melanie enjoy a trip to a national park?", types=["interaction"])
    assert [s["external_id"] for s in results[0]["sources"]] == ["camp:1"]
    # The turns that only say her name get no full-text credit for it.
    assert _turn(results, "camp:2")["score_breakdown"]["lexical"] == 0
    assert _turn(results, "camp:0")["score_breakdown"]["lexical"] == 0


def test_a_question_about_a_record_still_matches_the_name(api, workspace):
    log_chat(workspace, CHAT, thread="camp")
    results = _recall(api, "When did Melanie talk to Caroline?", types=["interaction"])
    assert _turn(results, "camp:2")["score_breakdown"]["lexical"] > 0


def test_only_people_lose_their_names_words(api, workspace):
    log_chat(workspace, [("Tim", "I'm off to Ireland for a semester!"), ("John", "Ireland is lovely, enjoy it.")],
             thread="trip")
    entity_create(workspace=workspace, kind="place", name="Ireland", description="a country in Europe")
    assert Entity.objects.get(workspace=workspace, name="Tim").kind == "person"
    results = _recall(api, "Which places would Tim enjoy in Ireland?", types=["interaction"])
    assert _turn(results, "trip:1")["score_breakdown"]["lexical"] > 0  # "Ireland" still counts
