"""A question asking for several things of one kind scores the concept dimension again with
the concepts its best results share (context.multihop.SHARED_BY, issue 22 part 1) — against
the real database and the bundled model."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st
from django.db import connection
from django.utils import timezone

from context import multihop, scoring, services
from context.models import ConceptLink
from core.concepts import concepts as text_concepts
from tests.context.test_api import log_chat
from tests.context.test_consensus import assert_ranked_as_before, statements

# Melanie's family activities share "kid" with each other, a word the question does not say;
# Caroline talks about other things.
CHAT = [
    ("Melanie", "We went camping at the lake with the kids last weekend, the kids loved the tent."),
    ("Caroline", "That sounds lovely, I spent the weekend painting a sunrise."),
    ("Melanie", "The kids and I baked cookies together on Sunday, a family tradition."),
    ("Caroline", "I went to a support group meeting on Tuesday."),
    ("Melanie", "Took the kids to the museum, they adored the dinosaur bones."),
    ("Caroline", "My friends took me hiking in the mountains."),
    ("Melanie", "The kids built sandcastles with me at the beach, such a fun day."),
    ("Caroline", "Work has been busy, lots of meetings."),
    ("Melanie", "We roasted marshmallows by the fire with the kids, best evening."),
]
QUESTION = "What activities has Melanie done with her family?"
ONE_THING = "What did Melanie bake on Sunday?"


def _ranking(workspace, settings, *, on: bool, query: str = QUESTION):
    settings.MNEMO_RECALL_SHARED_CONCEPTS = on
    settings.MNEMO_RECALL_CONSENSUS = True  # both on and off: the shared concepts are what changes
    return services.ranked(services.RecallRequest(query=query, workspace_id=workspace.pk, limit=10)).scored


def _links(workspace, concepts) -> dict[tuple[str, str], float]:
    """The workspace's links of `concepts`, read here independently (every one at or over
    the service's 0.2; a query's few concepts have far fewer than its 200)."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT a, b, weight FROM context_conceptlink WHERE workspace_id = %s AND weight >= 0.2 "
                       "AND (a = ANY(%s) OR b = ANY(%s))", [workspace.pk, sorted(concepts), sorted(concepts)])
        return {(a, b): w for a, b, w in cursor.fetchall()}


def test_the_concepts_several_of_the_best_results_share():
    heads = [frozenset({"kid", "camping"}), frozenset({"kid", "cooky"}), frozenset({"kid", "camping", "melanie"}),
             frozenset({"museum"})]
    assert multihop.shared_concepts(heads, frozenset(), at_least=3) == {"kid"}
    assert multihop.shared_concepts(heads, frozenset(), at_least=2) == {"kid", "camping"}
    assert multihop.shared_concepts(heads, frozenset({"kid"}), at_least=2) == {"camping"}  # the question's own aside
    assert multihop.shared_concepts([], frozenset()) == frozenset()


def test_a_rescored_breakdown_keeps_a_lifted_neighbours_floor():
    plain = {"similarity": 0.3, "concept": 0.02, "recency": 0.05}
    assert multihop.concept_rescored(plain, 0.05) == {"similarity": 0.3, "concept": 0.05, "recency": 0.05}
    lifted = {"similarity": 0.3, "concept": 0.02, multihop.LIFT: 0.04}  # floor at 0.36
    up = multihop.concept_rescored(lifted, 0.03)  # own 0.33: still below the floor
    assert sum(up.values()) == pytest.approx(0.36) and up[multihop.LIFT] == pytest.approx(0.03)
    past = multihop.concept_rescored(lifted, 0.08)  # own 0.38: above it, no lift left
    assert sum(past.values()) == pytest.approx(0.38) and past[multihop.LIFT] == 0.0
    down = multihop.concept_rescored(lifted, 0.0)
    assert sum(down.values()) == pytest.approx(0.36) and down[multihop.LIFT] == pytest.approx(0.06)


@given(base=st.floats(0, 0.8), concept=st.floats(0, 0.1), new=st.floats(0, 0.1), lift=st.floats(0, 0.2))
def test_a_rescored_score_is_the_new_own_score_or_the_floor(base, concept, new, lift):
    before = {"similarity": base, "concept": concept, multihop.LIFT: lift}
    after = multihop.concept_rescored(before, new)
    assert sum(after.values()) == pytest.approx(max(base + new, base + concept + lift), abs=1e-12)
    assert after[multihop.LIFT] >= 0.0


@given(heads=st.lists(st.frozensets(st.sampled_from("abcdefg"), max_size=5), max_size=12),
       own=st.frozensets(st.sampled_from("abcdefg"), max_size=3), at_least=st.integers(1, 6))
def test_a_shared_concept_is_held_by_enough_heads_and_is_not_the_questions(heads, own, at_least):
    shared = multihop.shared_concepts(heads, own, at_least=at_least)
    assert not shared & own
    for concept in shared:
        assert sum(concept in head for head in heads) >= at_least
    for concept in set().union(*heads) - own - shared:
        assert sum(concept in head for head in heads) < at_least


@pytest.mark.django_db
def test_a_list_question_scores_its_concepts_again_with_what_the_best_results_share(workspace, settings):
    log_chat(workspace, CHAT, thread="family")
    # A strong link between a concept of the question and one the best results will share:
    # read with the question's links, it credits "kid" to what says "family" and back.
    ConceptLink.objects.update_or_create(workspace=workspace, a="family", b="kid",
                                         defaults={"weight": 0.9, "count": 20})
    before = _ranking(workspace, settings, on=False)
    after = _ranking(workspace, settings, on=True)
    assert {s.candidate.key for _, s in before} == {s.candidate.key for _, s in after}
    # What the best CONSENSUS_OF share, computed here from their texts.
    own = text_concepts(QUESTION)
    counts: dict[str, int] = {}
    for hit, _ in before[:multihop.CONSENSUS_OF]:
        for concept in text_concepts(hit.text) if hit.concepts is None else hit.concepts:
            counts[concept] = counts.get(concept, 0) + 1
    shared = {c for c, n in counts.items() if n >= multihop.SHARED_BY} - own
    assert "kid" in shared
    wider = scoring.Query(text=QUESTION, concepts=own | shared, entity_ids=frozenset({1}),
                          now=timezone.now())
    links = _links(workspace, own)  # the question's own links only: no statement is added
    assert links[("family", "kid")] == 0.9
    counted = {name: getattr(scoring.DEFAULT, name) for name in scoring.DIMENSIONS if name != "time"}
    share = counted["concept"] / sum(counted.values())  # the question names Melanie and has concepts; no time
    old = {s.candidate.key: s for _, s in before}
    moved = 0
    for hit, s in after:
        o = old[s.candidate.key]
        concepts = text_concepts(hit.text) if hit.concepts is None else hit.concepts
        held = scoring.Candidate(key=0, kind=hit.kind, text="", concepts=concepts)
        expected = share * scoring.dimension_values(wider, held, links)["concept"]
        assert s.breakdown["concept"] == pytest.approx(expected, abs=1e-9)
        # Every other dimension as before; the second round's lift keeps its floor.
        for name in set(s.breakdown) - {"concept", multihop.LIFT}:
            assert s.breakdown[name] == pytest.approx(o.breakdown[name], abs=1e-6)
        own_before = o.score - o.breakdown.get(multihop.LIFT, 0.0)
        assert s.score == pytest.approx(max(own_before - o.breakdown["concept"] + expected, o.score)
                                        if multihop.LIFT in o.breakdown else own_before - o.breakdown["concept"]
                                        + expected, abs=1e-6)
        assert sum(s.breakdown.values()) == pytest.approx(s.score, abs=1e-9)
        moved += s.score != pytest.approx(o.score, abs=1e-6)
    assert moved
    assert [s.score for _, s in after] == sorted((s.score for _, s in after), reverse=True)
    # The kids' sandcastles now hold a concept of the (wider) question; the cookies, which
    # say "family" and "kid", cover both.
    castles = next(s for hit, s in after if "sandcastles" in hit.text and hit.kind == "interaction")
    assert castles.breakdown["concept"] > old[castles.candidate.key].breakdown["concept"]
    assert castles.breakdown["concept"] >= share / len(own | shared) - 1e-9


@pytest.mark.django_db
def test_a_question_asking_for_one_thing_is_ranked_as_before(workspace, settings):
    log_chat(workspace, CHAT, thread="family")
    assert_ranked_as_before(_ranking(workspace, settings, on=False, query=ONE_THING),
                            _ranking(workspace, settings, on=True, query=ONE_THING), "nothing-new")


@pytest.mark.django_db
def test_shared_concepts_cost_no_statement(workspace, settings):
    log_chat(workspace, CHAT, thread="family")
    for query in (QUESTION, ONE_THING):
        assert (statements(workspace, settings, query, MNEMO_RECALL_SHARED_CONCEPTS=True)
                == statements(workspace, settings, query, MNEMO_RECALL_SHARED_CONCEPTS=False))


@pytest.mark.django_db
def test_nothing_shared_means_no_change(workspace, settings):
    """Best results with nothing in common beyond the question's own concepts."""
    log_chat(workspace, [("Tim", "I read Dune this winter."), ("John", "Practice ran long today.")], thread="few")
    query = "What books has Tim read?"
    assert_ranked_as_before(_ranking(workspace, settings, on=False, query=query),
                            _ranking(workspace, settings, on=True, query=query), "nothing-new")


@pytest.mark.django_db
def test_another_workspaces_links_and_rows_are_not_used(workspace, other_workspace, settings):
    """The other workspace links "family" strongly to "volcano" and says "kid" everywhere;
    this one's ranking never counts that link nor finds those rows."""
    theirs = log_chat(other_workspace, [("Melanie", "The kids loved the volcano tour, kids and volcano all day.")] * 6,
                      thread="other")
    ConceptLink.objects.update_or_create(workspace=other_workspace, a="family", b="volcano",
                                         defaults={"weight": 0.9, "count": 20})
    log_chat(workspace, CHAT + [("Melanie", "The volcano documentary was on again.")], thread="family")
    after = _ranking(workspace, settings, on=True)
    assert not any(hit.kind == "interaction" and hit.id in theirs for hit, _ in after)
    volcano = next(s for hit, s in after if "volcano" in hit.text)
    assert volcano.breakdown["concept"] == 0.0  # no concept of the question, no link of this workspace's


@pytest.mark.django_db
def test_recall_through_the_api_breakdowns_add_up(api, workspace, settings):
    log_chat(workspace, CHAT, thread="family")
    settings.MNEMO_RECALL_SHARED_CONCEPTS = True
    results = api.post("/recall", {"query": QUESTION, "limit": 10}).json()["results"]
    assert results and any(r["score_breakdown"].get("concept") for r in results)
    for r in results:
        assert abs(sum(r["score_breakdown"].values()) - r["score"]) < 1e-3
