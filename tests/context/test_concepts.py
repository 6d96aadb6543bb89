"""Concepts and Hebbian links: a question and a memory about the same thing yield the same
concept strings, co-occurrence strengthens a link towards 1 and disuse decays it, and
expansion finds a query's strongest neighbours, all reproducibly across processes."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given, strategies as st

from context.concepts import cooccurrence_pairs, decay, expand, link_weight, strengthen
from core.concepts import STOPWORDS, concepts, singular

ROOT = Path(__file__).resolve().parents[2]


# --- extraction ---------------------------------------------------------------------------


def test_a_question_and_the_memory_answering_it_share_their_concepts():
    asked = concepts("What did Caroline say about support groups?")
    remembered = concepts("Caroline joined an LGBTQ support group in May.")
    assert {"caroline", "support", "group", "support group"} <= asked & remembered
    assert "lgbtq" in remembered


def test_function_words_numbers_and_short_tokens_are_not_concepts():
    found = concepts("I went to it on 2023-05-08 at 10:30 and we did it 3 times, ok? Go AI")
    assert found == {"time"}


def test_plurals_are_reduced_but_names_and_words_like_status_are_not():
    assert concepts("the stories about classes and puppies") == {"story", "class", "puppy"}
    assert concepts("kids like their bikes") == {"kid", "bike"}
    assert "status" in concepts("the project status is unclear")
    assert concepts("James plays guitar") >= {"james", "guitar"}
    assert "jame" not in concepts("James plays guitar. Then James left.")


def test_names_mid_sentence_and_acronyms_are_names_even_when_plural_looking():
    found = concepts("Yesterday I met Charles and the NASA team in New York")
    assert {"charles", "nasa", "new york", "new", "york", "team"} <= found
    assert "charle" not in found


def test_a_name_at_the_start_of_a_sentence_is_recognised_when_it_appears_elsewhere():
    assert concepts("Melanie paints. I asked Melanie why.") == {"melanie", "paint"}


def test_possessives_and_negations_are_handled():
    found = concepts("Caroline's kids don't like painting")
    assert {"caroline", "kid", "painting"} <= found
    assert not any("don" in concept for concept in found)


def test_adjacent_content_words_make_a_phrase_but_not_across_punctuation_or_lines():
    assert "adoption agency" in concepts("she called two adoption agencies")
    assert "adoption agency" not in concepts("adoption, agencies")
    assert "adoption agency" not in concepts("adoption\nagencies")


def test_the_most_frequent_concepts_are_kept_first_names_then_words_then_phrases():
    text = "guitar guitar guitar lessons with Caroline, who plays violin at the community centre"
    assert concepts(text, max_concepts=1) == {"guitar"}
    assert concepts(text, max_concepts=2) == {"guitar", "caroline"}
    assert concepts(text, max_concepts=3) == {"guitar", "caroline", "lesson"}
    assert concepts(text) >= {"play", "violin", "community", "centre", "guitar lesson", "community centre"}
    assert concepts(text, max_concepts=0) == frozenset()
    assert concepts("") == frozenset()
    with pytest.raises(ValueError):
        concepts(text, max_concepts=-1)


@given(st.text(max_size=300), st.integers(0, 20))
def test_concepts_are_lowercase_content_words_without_digits(text, limit):
    found = concepts(text, max_concepts=limit)
    assert len(found) <= limit
    for concept in found:
        assert concept == concept.lower()
        assert not any(ch.isdigit() for ch in concept)
        assert concept not in STOPWORDS
        assert all(len(word) >= 3 for word in concept.split())


@pytest.mark.parametrize("word, expected", [
    ("groups", "group"), ("stories", "story"), ("classes", "class"), ("glass", "glass"),
    ("status", "status"), ("analysis", "analysis"), ("bus", "bus"), ("ties", "tie"),
])
def test_singular(word, expected):
    assert singular(word) == expected


# --- Hebbian links ------------------------------------------------------------------------


def test_cooccurrence_pairs_are_every_sorted_pair_once():
    assert cooccurrence_pairs(["hike", "camp", "lake", "camp"]) == [
        ("camp", "hike"), ("camp", "lake"), ("hike", "lake")]
    assert cooccurrence_pairs(["solo"]) == []


@given(st.frozensets(st.text(min_size=1, max_size=5), max_size=12))
def test_every_pair_is_ordered_and_none_repeats(found):
    pairs = cooccurrence_pairs(found)
    assert len(pairs) == len(set(pairs)) == len(found) * (len(found) - 1) // 2
    assert all(a < b for a, b in pairs)
    assert pairs == sorted(pairs)


def test_strengthening_approaches_1_and_saturates():
    weights = [0.0]
    for _ in range(44):
        weights.append(strengthen(weights[-1]))
    assert weights[1] == pytest.approx(0.1)
    assert weights[10] == pytest.approx(1 - 0.9 ** 10)
    assert 0.99 < weights[44] < 1
    gains = [b - a for a, b in zip(weights, weights[1:])]
    assert gains == sorted(gains, reverse=True)


@given(st.floats(min_value=0, max_value=1), st.floats(min_value=0, max_value=1))
def test_strengthening_never_weakens_or_passes_1(weight, rate):
    assert weight <= strengthen(weight, rate=rate) <= 1


def test_decay_halves_a_link_per_half_life_and_ignores_clock_skew():
    assert decay(0.8, days=90) == pytest.approx(0.4)
    assert decay(0.8, days=180, half_life_days=180) == pytest.approx(0.4)
    assert decay(0.8, days=-5) == 0.8
    with pytest.raises(ValueError):
        decay(0.8, days=1, half_life_days=0)
    with pytest.raises(ValueError):
        strengthen(0.5, rate=1.5)


@given(st.floats(min_value=0, max_value=1), st.floats(min_value=0, max_value=1e4), st.floats(min_value=0, max_value=1e4))
def test_an_older_link_is_never_stronger(weight, a, b):
    sooner, later = sorted((a, b))
    assert weight >= decay(weight, days=sooner) >= decay(weight, days=later) >= 0


def test_expansion_returns_the_strongest_neighbours_without_the_query_itself():
    links = {
        ("camping", "hike"): 0.6, ("hike", "lake"): 0.3, ("boots", "hike"): 0.6,
        ("camping", "lake"): 0.9, ("guitar", "hike"): 0.1, ("hike", "mountain"): 0.25,
        ("lake", "tent"): 0.8,  # two steps away: not a neighbour
    }
    assert expand({"hike", "camping"}, links) == {"lake": 0.9, "boots": 0.6, "mountain": 0.25}
    assert list(expand({"hike"}, links, top=2)) == ["boots", "camping"]
    assert expand({"hike"}, links, min_weight=0.7) == {}
    assert expand(set(), links) == {}


def test_a_link_is_found_whichever_way_round_it_is_asked_for():
    links = {("camping", "hike"): 0.6}
    assert link_weight(links, "hike", "camping") == link_weight(links, "camping", "hike") == 0.6
    assert link_weight(links, "hike", "lake") == 0


DETERMINISM_SCRIPT = """
import json
from context.concepts import cooccurrence_pairs, expand
from core.concepts import concepts
text = ("Caroline and Melanie talked about painting, pottery, camping trips, adoption agencies, "
        "LGBTQ support groups, guitar lessons, violin concerts, hiking boots and lake views.")
found = concepts(text, max_concepts=7)
links = {pair: 0.5 for pair in cooccurrence_pairs(concepts(text, max_concepts=30))}
print(json.dumps([sorted(found), list(expand(found, links, top=5))]))
"""


def test_concepts_do_not_depend_on_the_hash_seed():
    # Ties among equally frequent concepts and among equal link weights must be broken by
    # something other than set order, or two workers would extract different concepts.
    outputs = set()
    for seed in ("0", "1", "2"):
        env = {**os.environ, "PYTHONHASHSEED": seed, "PYTHONPATH": str(ROOT)}
        run = subprocess.run([sys.executable, "-c", DETERMINISM_SCRIPT], env=env, cwd=ROOT,
                             capture_output=True, text=True, check=True)
        outputs.add(run.stdout)
    assert len(outputs) == 1
    found, expanded = json.loads(outputs.pop())
    assert len(found) == 7 and len(expanded) == 5
