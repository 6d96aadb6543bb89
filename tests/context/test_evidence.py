"""Issue 22: recall and packs that spend their room on evidence. A condensed item (a
summary, a pattern citing many turns) stands for none of its turns, so the precise turn is
still recalled and packed beside it; the names of the people a query is about do not rank
full text (the entity dimension counts them); the pack judges what an item adds against
what it holds, not against what ranked above it."""

from __future__ import annotations

from datetime import datetime, timezone

import pytest
from django.test import override_settings

from context import services
from context.retrieval import words_ranked
from tests.context.test_api import log_chat


def _item(kind: str, sources: int, *, first: int = 1, type_: str = "") -> services.Item:
    return services.Item(kind=kind, id=first, text="x", score=0.5, score_breakdown={}, certainty="", confidence=1.0,
                         status="active", type=type_, occurred_at=datetime(2023, 5, 8, tzinfo=timezone.utc),
                         speaker="", sources=[{"interaction_id": first + n, "external_id": None}
                                              for n in range(sources)])


@override_settings(MNEMO_EPISODE_TURNS=5)
def test_an_item_stands_for_the_turns_it_cites_only_when_it_cites_no_more_than_an_episode():
    assert services._stands_for(_item("interaction", 1, first=7)) == {7}
    assert services._stands_for(_item("memory", 5, type_="episodic")) == {1, 2, 3, 4, 5}
    assert services._stands_for(_item("summary", 30)) == frozenset()  # a session condensed
    assert services._stands_for(_item("memory", 12, type_="fact")) == frozenset()  # a pattern of many
    assert services._stands_for(_item("relationship", 1)) == frozenset()  # points at, does not say


@override_settings(MNEMO_EPISODE_TURNS=5)
def test_a_summary_ranked_first_does_not_hide_the_turns_of_its_range():
    summary, turn = _item("summary", 30), _item("interaction", 1, first=4)
    assert services._diverse([summary, turn], 10) == [summary, turn]
    episode = _item("memory", 5, type_="episodic")
    assert services._diverse([episode, turn], 10) == [episode]  # the episode quotes it already


def test_the_names_a_query_is_about_do_not_rank_full_text_unless_nothing_else_does():
    assert words_ranked(["destress", "melani"], ["melani"]) == ["destress"]
    assert words_ranked(["melani"], ["melani"]) == ["melani"]  # "Who is Melanie?"
    assert words_ranked(["camp", "melani"], []) == ["camp", "melani"]


@pytest.mark.django_db
def test_a_turn_that_matches_only_the_named_person_gets_no_full_text_credit(api, workspace):
    ids = log_chat(workspace, [
        ("Melanie", "Melanie here! Melanie says hi to everyone, Melanie again."),
        ("Melanie", "Running farther every week helps me unwind after work."),
    ], thread="talk")
    response = api.post("/recall", {"query": "How does Melanie unwind?", "limit": 10})
    assert response.status_code == 200, response.json()
    results = {r["sources"][0]["interaction_id"]: r for r in response.json()["results"]
               if r["kind"] == "interaction"}
    assert results[ids[0]]["score_breakdown"].get("lexical", 0) == 0  # its words: the name, three times
    assert results[ids[1]]["score_breakdown"]["lexical"] > 0  # "unwind"
    assert results[ids[1]]["score"] > results[ids[0]]["score"]
