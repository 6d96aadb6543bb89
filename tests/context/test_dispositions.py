"""A question about what someone would or might do ranks the candidates in which that person
speaks of their own wants, likes and habits a little higher (context.multihop.DISPOSED,
issue 22 part 2) — against the real database and the bundled model."""

from __future__ import annotations

import pytest

from context import multihop, services
from tests.context.test_api import log_chat
from tests.context.test_consensus import assert_ranked_as_before, statements

CHAT = [
    ("Melanie", "We always look forward to our family camping trip, marshmallows by the fire."),  # hers, disposed
    ("Caroline", "I love theme parks, I always go on the biggest rides first."),  # disposed, but Caroline's
    ("Melanie", "The kids painted the fence on Saturday while it rained."),  # hers, of no disposition
    ("Caroline", "Melanie, the park near the station reopened last week."),
    ("Melanie", "My son fell asleep in the car on the way back."),  # first person, no disposition
    ("Caroline", "Did you see the meteor shower forecast for the weekend?"),
]
QUESTION = "Would Melanie be more interested in going to a national park or a theme park?"


@pytest.mark.parametrize(("question", "asks"), [
    (QUESTION, True),
    ("What job might Maria pursue in the future?", True),
    ("Would Caroline be considered religious?", True),
    ("Is Nate likely to own a console?", True),
    ("What did Melanie paint last week?", False),
    ("When did Caroline go to the park?", False),
    ("", False),
])
def test_a_question_about_what_someone_is_like(question, asks):
    assert multihop.asks_what_someone_is_like(question) is asks


@pytest.mark.parametrize(("line", "disposed"), [
    ("We always look forward to our family camping trip.", True),
    ("I'm keen on counseling or working in mental health.", True),
    ("I'm a fan of both classical like Bach and Mozart.", True),
    ("My son fell asleep in the car on the way back.", False),  # first person, no disposition
    ("She loves camping.", False),  # a disposition, not the speaker's own
    ("", False),
])
def test_a_line_speaking_of_the_speakers_own_wants_likes_or_habits(line, disposed):
    assert multihop.speaks_of_a_disposition(line) is disposed


def test_an_episodes_lines_of_a_person_by_name_or_first_name():
    text = ("On 20 July 2023, Caroline and Melanie talked.\n"
            "Caroline: Sounds special, those beach trips!\n"
            "Melanie Smith: We always look forward to our family camping trip.\n"
            "Melanie: I said: come along!")
    assert multihop.quoted_lines(text, ["Melanie Smith"]) == [
        "We always look forward to our family camping trip.", "I said: come along!"]
    assert multihop.quoted_lines(text, ["caroline"]) == ["Sounds special, those beach trips!"]
    assert multihop.quoted_lines(text, ["Gina"]) == []
    assert multihop.quoted_lines("", ["Melanie"]) == []
    assert multihop.quoted_lines("Melanie: I love camping.", ["Melanie"]) == []  # no episode's header: not an episode


def _scored(workspace, settings, *, on: bool, query: str = QUESTION):
    settings.MNEMO_RECALL_DISPOSITIONS = on
    return services.ranked(services.RecallRequest(query=query, workspace_id=workspace.pk, limit=10)).scored


@pytest.mark.django_db
def test_the_named_persons_own_disposition_gains_and_nothing_else_does(workspace, settings):
    ids = log_chat(workspace, CHAT, thread="park")
    before = {s.candidate.key: s.score for _, s in _scored(workspace, settings, on=False)}
    after = _scored(workspace, settings, on=True)
    gained = {s.candidate.key for _, s in after if multihop.DISPOSED_KEY in s.breakdown}
    assert ("interaction", ids[0]) in gained  # Melanie's camping
    for pk in ids[1:]:  # Caroline's liking, Melanie's other lines
        assert ("interaction", pk) not in gained
    for hit, s in after:
        if s.candidate.key in gained:
            assert s.score == pytest.approx(min(1.0, before[s.candidate.key] + multihop.DISPOSED))
            if hit.kind == "memory":  # an episode quoting her disposition
                assert any(multihop.speaks_of_a_disposition(line)
                           for line in multihop.quoted_lines(hit.text, ["Melanie"]))
        else:
            assert s.score == pytest.approx(before[s.candidate.key])
        assert sum(s.breakdown.values()) == pytest.approx(s.score, abs=1e-6)
    assert [s.score for _, s in after] == sorted((s.score for _, s in after), reverse=True)


@pytest.mark.django_db
@pytest.mark.parametrize("query", [
    "What did Melanie do on the camping trip?",  # not about what she is like
    "Would anyone be more interested in a national park or a theme park?",  # names nobody
])
def test_other_questions_are_ranked_as_before(workspace, settings, query):
    log_chat(workspace, CHAT, thread="park")
    assert_ranked_as_before(_scored(workspace, settings, on=False, query=query),
                            _scored(workspace, settings, on=True, query=query), multihop.DISPOSED_KEY)


@pytest.mark.django_db
def test_dispositions_cost_no_statement(workspace, settings):
    log_chat(workspace, CHAT, thread="park")
    assert (statements(workspace, settings, QUESTION, MNEMO_RECALL_DISPOSITIONS=True)
            == statements(workspace, settings, QUESTION, MNEMO_RECALL_DISPOSITIONS=False))


@pytest.mark.django_db
def test_another_workspaces_disposition_is_never_found(workspace, other_workspace, settings):
    theirs = log_chat(other_workspace, [("Melanie", "I love national parks, we always hike in Yosemite.")],
                      thread="other")
    log_chat(workspace, CHAT, thread="park")
    assert all(hit.id not in theirs for hit, _ in _scored(workspace, settings, on=True) if hit.kind == "interaction")


@pytest.mark.django_db
def test_recall_through_the_api_shows_the_disposition_in_the_breakdown(api, workspace):
    ids = log_chat(workspace, CHAT, thread="park")
    results = api.post("/recall", {"query": QUESTION, "limit": 10}).json()["results"]
    disposed = [r for r in results if multihop.DISPOSED_KEY in r["score_breakdown"]]
    # Melanie's camping turn, itself or in the episode quoting it
    assert disposed and all(ids[0] in {s["interaction_id"] for s in r["sources"]} for r in disposed)
    for r in results:
        assert abs(sum(r["score_breakdown"].values()) - r["score"]) < 1e-3


def test_the_pack_page_draws_a_bar_for_each_lift():
    from context.views import _bars

    bars = _bars({"score_breakdown": {"similarity": 0.2, multihop.LIFT: 0.05, multihop.CONSENSUS_KEY: 0.01,
                                      multihop.DISPOSED_KEY: 0.02}})
    assert [name for name, _, _ in bars] == ["similarity", multihop.LIFT, multihop.CONSENSUS_KEY,
                                             multihop.DISPOSED_KEY]
    assert bars[0][2] == 100 and bars[-1][2] == 10
