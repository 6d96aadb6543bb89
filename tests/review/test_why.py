"""review.why, pure: a rule is explained by its own sentence or its family's, a model by
its reason, an agent's API call by its name; a confidence by its band."""

from __future__ import annotations

import pytest

from review.why import confidence_words, explain, rule_sentence

SENTENCES = {
    "relationship.lives_in": "says where they live now",
    "preference.like": "“I like X” (not “I'd like”)",
    "graduation": "notices a memory that deserves an entity",
    "gap.refusal": "The agent said it cannot do what was asked.",
}


@pytest.mark.parametrize(("rule", "expected"), [
    ("rule:relationship.lives_in.moved_to", "says where they live now"),
    ("relationship.lives_in", "says where they live now"),
    ("graduation:template", "notices a memory that deserves an entity"),
    ("relationship.works_at.work_at", None),
    ("", None),
    ("rule:", None),
])
def test_a_rule_is_explained_by_its_own_line_or_its_familys(rule, expected):
    assert rule_sentence(rule, SENTENCES) == expected


def test_each_shape_of_sentence_reads_as_one_sentence():
    assert explain(rule="rule:relationship.lives_in.moved_to", sentences=SENTENCES).text == (
        "rule relationship.lives_in.moved_to: the message says where they live now")
    assert explain(rule="preference.like", sentences=SENTENCES).text == (
        "rule preference.like looks for “I like X” (not “I'd like”)")
    assert explain(rule="graduation:reinforced", sentences=SENTENCES).text == (
        "rule graduation:reinforced notices a memory that deserves an entity")
    assert explain(rule="gap.refusal", sentences=SENTENCES).text == (
        "rule gap.refusal: The agent said it cannot do what was asked")


def test_a_model_an_agent_a_person_and_the_unknown():
    model = explain(rule="model:qwen2.5", sentences=SENTENCES, reason=" says so twice ")
    assert (model.source, model.text) == ("model", "proposed by the language model qwen2.5: “says so twice”")
    assert explain(rule="llm:v3", sentences={}).text == "proposed by the language model v3 (it gave no reason)"
    agent = explain(rule="api", sentences=SENTENCES, proposer="triage-bot")
    assert (agent.source, agent.text) == ("agent", "remembered by triage-bot through the API")
    assert explain(rule="api", sentences={}).text == "remembered by an agent through the API"
    assert explain(rule="user:dana", sentences={}).text == "entered by dana"
    assert explain(rule="odd.rule", sentences={}).source == "unknown"
    assert explain(rule="gap.judge", sentences={}, reason="the agent declined").text == "the agent declined"
    assert explain(rule="", sentences={}).text == "no rule or model recorded"


@pytest.mark.parametrize(("confidence", "band"), [(1.0, "high"), (0.9, "high"), (0.89, "good"), (0.75, "good"),
                                                  (0.62, "fair"), (0.55, "fair"), (0.54, "low"), (0.0, "low")])
def test_confidence_bands(confidence, band):
    found, meaning = confidence_words(confidence)
    assert found == band and meaning
