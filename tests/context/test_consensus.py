"""A question asking for several things of one kind ranks the candidates like its best
results a little higher (context.multihop.CONSENSUS, issue 22 part 1) — against the real
database and the bundled model."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from django.db import connection
from django.test.utils import CaptureQueriesContext

from context import multihop, retrieval, services
from core import kinds
from core.search import Embeddings, consensus_similarity
from tests.context.test_api import log_chat

# Tim names his books in words "books" and "read" do not share, across the conversation;
# John talks about other things, some of them with the question's words.
CHAT = [
    ("Tim", "I just finished The Hobbit again, Bilbo's riddles in the dark still get me."),
    ("John", "Tim, I read the scouting report on our next opponent, they press a lot."),
    ("Tim", "Started Mistborn last night, the magic system with metals is so clever."),
    ("John", "Practice ran long today, coach had us doing sprints until dark."),
    ("Tim", "A Wizard of Earthsea is short but beautiful, Ged's journey stayed with me."),
    ("John", "My sister books all the family trips, she is great at planning."),
    ("Tim", "Name of the Wind was a gift from my aunt, Kvothe is a great storyteller."),
    ("John", "We won the game on Saturday, I scored twenty points."),
]
QUESTION = "What books has Tim read?"


@pytest.mark.parametrize(("question", "several"), [
    ("What books has Tim read?", True),
    ("Which cities has Jon visited?", True),
    ("How many hikes has Joanna been on?", True),
    ("What kind of activities did Maria do at the picnic?", True),
    ("What people has Maria met while volunteering?", True),  # an irregular plural
    ("What book did Melanie read?", False),  # one thing
    ("What is Caroline's identity?", False),  # asks for no kind
    ("What fitness class does Gina take?", False),  # "class": a singular in "s"
    ("What TV series is Tim watching?", False),
    ("What exciting news did Maria share?", False),
    ("What status does the campus have?", False),
    ("Did Tim read any books?", False),  # a yes/no question
    ("What s", False),
    ("", False),
])
def test_a_question_asking_for_several_things(question, several):
    assert kinds.asks_for_several(question) is several


def test_a_gain_only_raises_and_never_above_one():
    assert multihop.raised(0.5, multihop.CONSENSUS * 0.8) == pytest.approx(0.5 + multihop.CONSENSUS * 0.8)
    assert multihop.raised(0.5, multihop.CONSENSUS * -0.3) == 0.5  # an unlike candidate keeps its score
    assert multihop.raised(0.995, multihop.CONSENSUS) == 1.0


def assert_ranked_as_before(before, after, key: str) -> None:
    """The same candidates in the same order with the same scores, none carrying `key` in its
    breakdown (recency moves with the clock between two rankings: scores equal to 1e-6)."""
    assert [s.candidate.key for _, s in after] == [s.candidate.key for _, s in before]
    assert [s.score for _, s in after] == pytest.approx([s.score for _, s in before], abs=1e-6)
    assert not any(key in s.breakdown for _, s in after)


def statements(workspace, settings, query: str, **switches) -> int:
    """The statements one recall of `query` makes with these settings (a recall before it
    warms the caches; memories searched on this connection so that every statement counts)."""
    for name, value in {"MNEMO_RECALL_PARALLEL": False, **switches}.items():
        setattr(settings, name, value)
    services.recall(services.RecallRequest(query=query, workspace_id=workspace.pk, limit=10))
    with CaptureQueriesContext(connection) as queries:
        services.recall(services.RecallRequest(query=query, workspace_id=workspace.pk, limit=10))
    return len(queries)


def _ranking(workspace, settings, *, on: bool, query: str = QUESTION):
    settings.MNEMO_RECALL_CONSENSUS = on
    settings.MNEMO_RECALL_SHARED_CONCEPTS = False  # the consensus alone (test_shared_concepts.py: the two together)
    return services.ranked(services.RecallRequest(query=query, workspace_id=workspace.pk, limit=10)).scored


def _embeddings(hits) -> dict[tuple[str, int], np.ndarray]:
    """The hits' stored embeddings, read here independently of the code under test."""
    found = {}
    with connection.cursor() as cursor:
        for kind, table, key in (("interaction", "conversations_interactionindex", "interaction_id"),
                                 ("memory", "memory_memory", "id")):
            ids = [h.id for h in hits if h.kind == kind]
            cursor.execute(f"SELECT {key}, embedding::text FROM {table} WHERE {key} = ANY(%s) "
                           f"AND embedding IS NOT NULL", [ids])
            for pk, text in cursor.fetchall():
                found[(kind, pk)] = np.array([float(x) for x in text.strip("[]").split(",")])
    return found


@pytest.mark.django_db
def test_a_list_question_raises_each_candidate_by_its_likeness_to_the_best_results(workspace, settings):
    log_chat(workspace, CHAT, thread="books")
    before = _ranking(workspace, settings, on=False)
    after = _ranking(workspace, settings, on=True)
    assert {s.candidate.key for _, s in before} == {s.candidate.key for _, s in after}
    # The mean of the best CONSENSUS_OF results that have embeddings, computed here.
    head = [hit for hit, _ in before[:multihop.CONSENSUS_OF]]
    vectors = _embeddings([hit for hit, _ in before])
    top = [vectors[(h.kind, h.id)] for h in head if (h.kind, h.id) in vectors]
    assert len(top) >= 5
    mean = np.mean(top, axis=0)
    old = {s.candidate.key: s.score for _, s in before}
    gained = 0
    for hit, s in after:
        key = (hit.kind, hit.id)
        if key not in vectors:  # summaries, entities: ranked as before
            assert s.score == pytest.approx(old[key]) and multihop.CONSENSUS_KEY not in s.breakdown
            continue
        v = vectors[key]
        expected = multihop.CONSENSUS * max(0.0, float(v @ mean / np.linalg.norm(v) / np.linalg.norm(mean)))
        assert s.score == pytest.approx(min(1.0, old[key] + expected), abs=1e-6)
        assert s.breakdown.get(multihop.CONSENSUS_KEY, 0.0) == pytest.approx(expected, abs=1e-6)
        assert sum(s.breakdown.values()) == pytest.approx(s.score, abs=1e-6)
        gained += expected > 0
    assert gained >= len(top)
    assert [s.score for _, s in after] == sorted((s.score for _, s in after), reverse=True)


@pytest.mark.django_db
def test_a_question_asking_for_one_thing_is_ranked_as_before(workspace, settings):
    log_chat(workspace, CHAT, thread="books")
    query = "What book did Tim get from his aunt?"
    assert_ranked_as_before(_ranking(workspace, settings, on=False, query=query),
                            _ranking(workspace, settings, on=True, query=query), multihop.CONSENSUS_KEY)


@pytest.mark.django_db
def test_a_list_question_costs_one_statement_more_and_another_question_none(workspace, settings):
    log_chat(workspace, CHAT, thread="books")
    counts = {(query, on): statements(workspace, settings, query, MNEMO_RECALL_CONSENSUS=on,
                                      MNEMO_RECALL_SHARED_CONCEPTS=False)
              for query in (QUESTION, "What book did Tim get from his aunt?") for on in (False, True)}
    assert counts[(QUESTION, True)] == counts[(QUESTION, False)] + 1
    assert counts[("What book did Tim get from his aunt?", True)] == counts[("What book did Tim get from his aunt?",
                                                                             False)]


@pytest.mark.django_db
def test_another_workspaces_rows_are_never_found(workspace, other_workspace, settings):
    """(Nor averaged: the mean is taken over the ranking's own best results, which the test
    of the gains above computes independently.)"""
    theirs = log_chat(other_workspace, [("Tim", "I read Dune and Foundation this winter, both brilliant books.")],
                      thread="other")
    log_chat(workspace, CHAT, thread="books")
    scored = _ranking(workspace, settings, on=True)
    assert any(multihop.CONSENSUS_KEY in s.breakdown for _, s in scored)
    assert not any(hit.kind == "interaction" and hit.id in theirs for hit, _ in scored)


@pytest.mark.django_db
def test_the_statement_leaves_out_what_has_no_embedding(workspace):
    ids = log_chat(workspace, CHAT[:3], thread="books")
    places = {"interaction": Embeddings("conversations_interactionindex", "interaction_id"),
              "memory": Embeddings("memory_memory")}
    with connection.cursor() as cursor:
        assert consensus_similarity(cursor, places, {}, {"interaction": ids}) == {}  # no top: no mean
        assert consensus_similarity(cursor, places, {"interaction": [10 ** 9]}, {"interaction": ids}) == {}
        near = consensus_similarity(cursor, places, {"interaction": ids[:1]}, {"interaction": ids, "memory": [10 ** 9]})
    assert set(near) == {("interaction", pk) for pk in ids}
    assert near[("interaction", ids[0])] == pytest.approx(1.0, abs=1e-5)  # the mean of itself
    assert retrieval.consensus([], []) == {}


@pytest.mark.django_db
def test_recall_through_the_api_shows_the_consensus_in_the_breakdown(api, workspace, settings):
    log_chat(workspace, CHAT, thread="books")
    results = api.post("/recall", {"query": QUESTION, "limit": 10}).json()["results"]
    assert any(multihop.CONSENSUS_KEY in r["score_breakdown"] for r in results)
    for r in results:
        assert abs(sum(r["score_breakdown"].values()) - r["score"]) < 1e-3


@given(score=st.floats(0, 1), similarity=st.floats(-1, 1))
def test_the_consensus_is_a_bounded_raise(score, similarity):
    raised = multihop.raised(score, multihop.CONSENSUS * similarity)
    assert score <= raised <= min(1.0, score + multihop.CONSENSUS) + 1e-12


@given(question=st.text(max_size=200))
def test_any_text_is_judged_without_error(question):
    assert kinds.asks_for_several(question) in (True, False)
    assert multihop.asks_what_someone_is_like(question) in (True, False)
    assert multihop.speaks_of_a_disposition(question) in (True, False)
    assert isinstance(multihop.quoted_lines(question, ["Melanie", ""]), list)
