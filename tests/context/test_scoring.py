"""The linking core: fused ranks, relevance scores whose breakdown adds up to the score, and
the orderings a recall must respect (more similar, inside the asked-for time, better
attested, more recent ranks higher), deterministically and without Django."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import replace
from datetime import date, datetime, timedelta, timezone
from pathlib import Path

import pytest
from hypothesis import given, strategies as st

from context.fusion import ranks, reciprocal_rank, rrf
from context.scoring import (
    DIMENSIONS, Candidate, Query, Weights, concept_terms, dimension_values, explain, half_life_days, recency, score,
)

ROOT = Path(__file__).resolve().parents[2]
NOW = datetime(2024, 6, 1, 12, tzinfo=timezone.utc)


def memory(key: int = 1, **fields) -> Candidate:
    return Candidate(key=("memory", key), kind="memory", type=fields.pop("type", "fact"),
                     text=fields.pop("text", f"memory {key}"), **fields)


def query(**fields) -> Query:
    return Query(text=fields.pop("text", "what happened?"), now=fields.pop("now", NOW), **fields)


def only(q: Query, candidate: Candidate) -> float:
    return score(q, [candidate])[0].score


# --- fusion -------------------------------------------------------------------------------


def test_ranks_start_at_one_and_a_repeated_item_keeps_its_best_rank():
    assert ranks(["a", "b", "a", "c"]) == {"a": 1, "b": 2, "c": 4}


def test_agreement_between_lists_beats_one_lists_first_place():
    fused = rrf([["solo", "x", "both"], ["y", "z", "both"]])
    assert list(fused)[0] == "both"
    assert fused["both"] == pytest.approx(2 / 63)
    assert fused["solo"] == pytest.approx(1 / 61)


def test_weights_scale_each_lists_contribution():
    fused = rrf([["a"], ["b"]], weights=[2.0, 1.0])
    assert fused == {"a": pytest.approx(2 / 61), "b": pytest.approx(1 / 61)}


def test_equal_fused_scores_keep_the_order_items_were_first_seen():
    assert list(rrf([["b", "a"], ["a", "b"]])) == ["b", "a"]
    assert rrf([]) == {}
    assert rrf([[], []]) == {}


@pytest.mark.parametrize("call", [
    lambda: rrf([["a"]], weights=[1.0, 1.0]),
    lambda: rrf([["a"]], weights=[-1.0]),
    lambda: rrf([["a"]], k=-1),
    lambda: reciprocal_rank(0),
])
def test_fusion_rejects_impossible_arguments(call):
    with pytest.raises(ValueError):
        call()


# --- the score and its breakdown ----------------------------------------------------------

unit = st.floats(min_value=0, max_value=1)
maybe_rank = st.none() | st.integers(min_value=1, max_value=10_000)
moment = st.datetimes(min_value=datetime(2000, 1, 1), max_value=datetime(2030, 1, 1),
                      timezones=st.just(timezone.utc))
concept_names = st.sampled_from(["hike", "paint", "adoption", "guitar", "camping", "book"])


@st.composite
def candidates(draw, key=None):
    return Candidate(
        key=("memory", draw(st.integers(0, 50))) if key is None else key,
        kind=draw(st.sampled_from(["memory", "interaction", "entity", "summary"])),
        type=draw(st.sampled_from(["", "episodic", "fact", "preference", "procedure", "identity"])),
        text="text",
        similarity=draw(st.none() | st.floats(min_value=-1, max_value=1)),
        lexical_rank=draw(maybe_rank),
        dense_rank=draw(maybe_rank),
        occurred_at=draw(st.none() | moment),
        learned_at=draw(st.none() | moment),
        importance=draw(unit),
        confidence=draw(unit),
        certainty=draw(st.sampled_from(["verbatim", "extracted", "inferred", "consolidated", ""])),
        reinforcement=draw(st.integers(0, 100)),
        concepts=draw(st.frozensets(concept_names, max_size=4)),
        entity_ids=draw(st.frozensets(st.integers(1, 5), max_size=3)),
    )


@st.composite
def queries(draw):
    start = draw(st.none() | st.dates(min_value=date(2000, 1, 1), max_value=date(2030, 1, 1)))
    length = draw(st.integers(0, 400))
    return Query(
        text="q",
        now=draw(moment),
        concepts=draw(st.frozensets(concept_names, max_size=3)),
        entity_ids=draw(st.frozensets(st.integers(1, 5), max_size=2)),
        time_range=None if start is None else (start, start + timedelta(days=length)),
        recency_weight=draw(st.none() | st.floats(min_value=0, max_value=5)),
    )


links = st.dictionaries(st.tuples(concept_names, concept_names).map(lambda p: tuple(sorted(p))), unit, max_size=6)


@given(queries(), st.lists(candidates(), max_size=8), links)
def test_the_breakdown_adds_up_to_a_score_between_0_and_1(q, cands, concept_links):
    for scored in score(q, cands, concept_links=concept_links):
        assert set(scored.breakdown) == set(DIMENSIONS)
        assert all(value >= 0 for value in scored.breakdown.values())
        assert sum(scored.breakdown.values()) == pytest.approx(scored.score, abs=1e-12)
        assert 0 <= scored.score <= 1 + 1e-12


@given(queries(), candidates(), links)
def test_the_concept_value_is_the_mean_cover_of_the_querys_concepts(q, candidate, concept_links):
    # The definition, spelled out (score() finds each query concept's links once per query).
    covers = []
    for concept in sorted(q.concepts):
        if concept in candidate.concepts:
            covers.append(1.0)
        else:
            weights = [concept_links.get(tuple(sorted((concept, other))), 0.0) for other in candidate.concepts]
            covers.append(0.5 * max([min(max(w, 0.0), 1.0) for w in weights], default=0.0))
    expected = sum(covers) / len(covers) if covers else 0.0
    assert dimension_values(q, candidate, concept_links)["concept"] == expected


@given(queries(), st.lists(candidates(), max_size=8), links)
def test_the_concept_terms_alone_are_the_breakdowns_concept_entries(q, cands, concept_links):
    expected = {id(s.candidate): s.breakdown["concept"] for s in score(q, cands, concept_links=concept_links)}
    terms = concept_terms(q, [c.concepts for c in cands], concept_links=concept_links)
    assert terms == pytest.approx([expected[id(c)] for c in cands], abs=1e-15)


@given(queries(), st.lists(candidates(), max_size=8, unique_by=lambda c: c.key), st.randoms())
def test_the_order_depends_on_the_candidates_not_on_the_order_they_came_in(q, cands, random):
    shuffled = list(cands)
    random.shuffle(shuffled)
    first = [(s.candidate, s.score) for s in score(q, cands)]
    assert first == [(s.candidate, s.score) for s in score(q, shuffled)]
    assert [s for _, s in first] == sorted((s for _, s in first), reverse=True)


def test_it_scores_nothing_without_raising():
    assert score(query(), []) == []


@given(queries(), candidates(), unit, unit)
def test_more_similar_scores_higher_all_else_equal(q, candidate, a, b):
    low, high = sorted((a, b))
    low_score = only(q, replace(candidate, similarity=low))
    high_score = only(q, replace(candidate, similarity=high))
    assert high_score >= low_score
    if high - low > 1e-9:  # a difference the float arithmetic can still see
        assert high_score > low_score


@given(queries(), candidates(), st.integers(1, 1000), st.integers(1, 1000))
def test_a_better_full_text_rank_scores_higher(q, candidate, a, b):
    better, worse = sorted((a, b))
    assert only(q, replace(candidate, lexical_rank=better)) >= only(q, replace(candidate, lexical_rank=worse))


def test_an_event_inside_the_asked_for_time_beats_one_just_outside_which_beats_one_far_away():
    may = query(time_range=(date(2023, 5, 1), date(2023, 5, 31)))
    inside = memory(1, occurred_at=datetime(2023, 5, 8, tzinfo=timezone.utc))
    near = memory(2, occurred_at=datetime(2023, 6, 5, tzinfo=timezone.utc))
    far = memory(3, occurred_at=datetime(2023, 9, 1, tzinfo=timezone.utc))
    ranked = score(may, [far, near, inside])
    assert [s.candidate for s in ranked] == [inside, near, far]
    assert ranked[0].breakdown["time"] > ranked[1].breakdown["time"] > 0 == ranked[2].breakdown["time"]


def test_a_single_day_query_gives_half_credit_to_the_next_day():
    day = query(time_range=(date(2023, 5, 8), date(2023, 5, 8)), recency_weight=0)
    on_the_day = memory(1, occurred_at=datetime(2023, 5, 8, 23, tzinfo=timezone.utc))
    next_day = memory(2, occurred_at=datetime(2023, 5, 9, 1, tzinfo=timezone.utc))
    scores = {s.candidate.key: s.breakdown["time"] for s in score(day, [on_the_day, next_day])}
    assert scores[("memory", 2)] == pytest.approx(scores[("memory", 1)] / 2)


@given(candidates(), st.dates(min_value=date(2000, 1, 1), max_value=date(2030, 1, 1)), st.integers(0, 60))
def test_a_time_match_never_loses_to_a_miss(candidate, start, length):
    q = query(time_range=(start, start + timedelta(days=length)), recency_weight=0)
    hit = replace(candidate, occurred_at=datetime(start.year, start.month, start.day, tzinfo=timezone.utc))
    miss = replace(candidate, occurred_at=hit.occurred_at + timedelta(days=10 * (length + 3)))
    assert only(q, hit) > only(q, miss)


def test_without_a_time_range_the_time_weight_changes_nothing():
    candidate = memory(1, similarity=0.6, occurred_at=NOW - timedelta(days=3))
    plain = score(query(), [candidate])[0]
    heavy = score(query(), [candidate], weights=Weights(time=10.0))[0]
    assert plain.score == heavy.score
    assert plain.breakdown["time"] == 0


@given(queries(), candidates())
def test_verbatim_is_trusted_at_least_as_much_as_extracted_consolidated_and_inferred(q, candidate):
    by_certainty = [only(q, replace(candidate, certainty=c)) for c in ("verbatim", "extracted", "consolidated", "inferred")]
    assert by_certainty == sorted(by_certainty, reverse=True)


@given(candidates(), st.floats(min_value=0, max_value=5000), st.floats(min_value=0, max_value=5000))
def test_recency_decreases_with_age(candidate, a, b):
    younger, older = sorted((a, b))
    young = replace(candidate, occurred_at=NOW - timedelta(days=younger))
    old = replace(candidate, occurred_at=NOW - timedelta(days=older))
    assert 1 >= recency(young, NOW) >= recency(old, NOW) >= 0


def test_episodes_fade_in_weeks_facts_in_a_year_procedures_over_years():
    month_ago = NOW - timedelta(days=30)
    episode = memory(1, type="episodic", occurred_at=month_ago)
    fact = memory(2, type="fact", occurred_at=month_ago)
    procedure = memory(3, type="procedure", occurred_at=month_ago)
    assert recency(episode, NOW) == pytest.approx(0.5)
    assert recency(episode, NOW) < recency(fact, NOW) < recency(procedure, NOW)
    turn = Candidate(key=("interaction", 9), kind="interaction", text="hi", occurred_at=month_ago)
    assert half_life_days(turn) == 30


def test_recency_uses_the_learned_time_when_the_event_time_is_unknown_and_never_exceeds_1():
    assert recency(memory(learned_at=NOW - timedelta(days=365)), NOW) == pytest.approx(0.5)
    assert recency(memory(), NOW) == 0
    assert recency(memory(occurred_at=NOW + timedelta(days=3)), NOW) == 1


def test_a_naive_time_is_read_as_utc():
    naive = memory(occurred_at=datetime(2024, 5, 31, 12))
    assert recency(naive, NOW) == recency(memory(occurred_at=datetime(2024, 5, 31, 12, tzinfo=timezone.utc)), NOW)


def test_the_recency_weight_trades_relevance_for_freshness():
    fresh = memory(1, type="episodic", similarity=0.50, occurred_at=NOW - timedelta(days=1))
    stale = memory(2, type="episodic", similarity=0.60, occurred_at=NOW - timedelta(days=400))
    assert score(query(recency_weight=0), [fresh, stale])[0].candidate == stale
    assert score(query(recency_weight=3), [fresh, stale])[0].candidate == fresh
    assert score(query(recency_weight=0), [fresh])[0].breakdown["recency"] == 0


def test_a_shared_concept_beats_a_linked_one_which_beats_none():
    q = query(concepts=frozenset({"hike"}))
    direct = memory(1, concepts=frozenset({"hike"}))
    linked = memory(2, concepts=frozenset({"camping"}))
    unrelated = memory(3, concepts=frozenset({"guitar"}))
    ranked = score(q, [unrelated, linked, direct], concept_links={("camping", "hike"): 0.8})
    assert [s.candidate for s in ranked] == [direct, linked, unrelated]
    assert ranked[1].breakdown["concept"] == pytest.approx(ranked[0].breakdown["concept"] * 0.5 * 0.8)


def test_naming_an_entity_of_the_query_raises_the_score():
    q = query(entity_ids=frozenset({7}))
    assert only(q, memory(entity_ids=frozenset({7, 8}))) > only(q, memory(entity_ids=frozenset({8})))


def test_a_candidate_neither_retriever_found_still_scores_on_everything_else():
    found_by_neither = memory(similarity=None, lexical_rank=None, importance=0.9, certainty="verbatim",
                              occurred_at=NOW - timedelta(days=2), entity_ids=frozenset({3}))
    scored = score(query(entity_ids=frozenset({3})), [found_by_neither])[0]
    assert scored.breakdown["similarity"] == scored.breakdown["lexical"] == scored.breakdown["fusion"] == 0
    assert scored.breakdown["entity"] > 0 and scored.breakdown["importance"] > 0


def test_perfect_priors_without_any_match_lose_to_a_clear_match():
    # Weights: priors and recency together are at most 0.32 of a default score when every
    # dimension but time is counted, 0.39 when the query names no concepts or entities.
    flawless_but_off_topic = memory(1, importance=1, confidence=1, certainty="verbatim", reinforcement=50,
                                    occurred_at=NOW)
    on_topic = memory(2, similarity=0.55, lexical_rank=2, dense_rank=1, occurred_at=NOW - timedelta(days=500))
    specific = query(concepts=frozenset({"hike"}), entity_ids=frozenset({1}))
    assert only(specific, flawless_but_off_topic) == pytest.approx(0.32)
    assert only(query(), flawless_but_off_topic) == pytest.approx(0.32 / 0.82)
    for q in (specific, query()):
        assert only(q, on_topic) > only(q, flawless_but_off_topic)


def test_reinforcement_saturates():
    q = query()
    scores = [only(q, memory(reinforcement=n)) for n in (0, 1, 5, 10, 1000)]
    assert scores[0] < scores[1] < scores[2] < scores[3] == scores[4]


def test_equal_scores_are_ordered_by_key_and_mixed_keys_do_not_raise():
    twins = [memory(12), memory(2), Candidate(key=("memory", "x"), kind="memory", text="t"),
             Candidate(key=7, kind="entity", text="t")]
    assert [s.candidate.key for s in score(query(), twins) if s.candidate.kind == "memory"] == [
        ("memory", 2), ("memory", 12), ("memory", "x")]


def test_explain_lists_what_contributed_largest_first():
    scored = score(query(), [memory(similarity=0.9, lexical_rank=1, importance=0)])[0]
    explained = explain(scored)
    assert explained[0][0] == "similarity"
    assert [value for _, value in explained] == sorted((value for _, value in explained), reverse=True)
    assert "importance" not in dict(explained) and "time" not in dict(explained)
    assert sum(value for _, value in explained) == pytest.approx(scored.score)


@pytest.mark.parametrize("build", [
    lambda: Weights(similarity=-0.1),
    lambda: Weights(time=float("nan")),
    lambda: memory(lexical_rank=0),
    lambda: query(recency_weight=-1),
])
def test_impossible_inputs_are_refused_where_they_are_made(build):
    with pytest.raises(ValueError):
        build()


def test_all_zero_weights_score_everything_0():
    zero = Weights(**{name: 0.0 for name in DIMENSIONS})
    assert score(query(), [memory(similarity=1.0)], weights=zero)[0].score == 0


DETERMINISM_SCRIPT = """
import json
from datetime import datetime, timezone
from context.scoring import Candidate, Query, score
now = datetime(2024, 6, 1, tzinfo=timezone.utc)
words = ["hike", "paint", "adoption", "guitar", "camping", "book", "lake", "pottery"]
cands = [Candidate(key=("memory", i), kind="memory", text="t", similarity=(i % 4) / 4,
                   concepts=frozenset(words[i % 8:i % 8 + 3]), importance=0.1 * (i % 3))
         for i in range(24)]
q = Query(text="q", now=now, concepts=frozenset(words[:5]))
links = {("book", "camping"): 0.3, ("guitar", "lake"): 0.7, ("hike", "pottery"): 0.45}
print(json.dumps([[s.candidate.key, s.score, s.breakdown] for s in score(q, cands, concept_links=links)]))
"""


def test_scores_do_not_depend_on_the_hash_seed_and_need_no_django():
    # Concept sets are iterated in hash order, which changes between processes; a float sum in
    # that order could change a score in its last bit and with it the order of a recall.
    outputs = set()
    for seed in ("0", "1", "2"):
        env = {**os.environ, "PYTHONHASHSEED": seed, "PYTHONPATH": str(ROOT)}
        env.pop("DJANGO_SETTINGS_MODULE", None)
        run = subprocess.run([sys.executable, "-c", DETERMINISM_SCRIPT], env=env, cwd=ROOT,
                             capture_output=True, text=True, check=True)
        outputs.add(run.stdout)
    assert len(outputs) == 1
    assert len(json.loads(outputs.pop())) == 24
