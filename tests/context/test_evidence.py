"""Issue 22: recall and packs that spend their room on evidence. A condensed item (a
summary, a pattern citing many turns) stands for none of its turns, so the precise turn is
still recalled and packed beside it; the pack judges what an item adds against what it
holds, not against what ranked above it."""

from __future__ import annotations

from datetime import datetime, timezone

from django.test import override_settings

from context import services


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
