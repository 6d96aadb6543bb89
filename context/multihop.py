"""The pure part of recall's re-rankings (issue 22): which of the first round's results a
second round starts from and how what it finds joins the ranking (part 1), what a
relationship among them reaches (part 1), the bridge, a
list question's consensus and shared concepts (part 1) and a named person's dispositions
(part 2), each below.

A question that needs two facts often finds one of them and not the other: the other is
said a few turns away ("Did the kids like it?" … "They loved the clay!"), in words the
question does not share. So the second round follows what the best first-round results
point at — the turns next to the ones they cite, in the same conversation — scores those
with the same scorer, and lets each rank at most a share of the result that led to it
(`HOP`): a neighbour is evidence by association, never more than what it was reached from.
Nothing here reads or writes storage."""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

from memory.extraction import episodes

# The first-round results whose neighbourhoods are searched: the top few, where the first
# hop is most likely right (a wrong seed spends slots on its neighbours).
SEEDS = 5
# A result citing more turns than this is a summary of a range, not a pointer to a place.
MAX_SEED_SOURCES = 5
# Turns either side of each cited turn.
WINDOW = 2
# A neighbour ranks at most this share of its seed's score.
HOP = 0.8
# What the lift is called in a result's score breakdown.
LIFT = "hop"


# The kinds whose sources are where something was said: a message, the turns a memory or a
# summary states. An entity card or a relationship cites the messages that support it ("my
# daughter Sara turned six" for John family of Sara), and the turns around those are about
# whatever was said next, not about the question: a relationship ranked first for "What does
# John's daughter love to do?" lifted the small talk around that line above the answer
# (bench/relationship_hop.py). Such results are no seeds and are not counted.
PLACES = frozenset({"interaction", "memory", "summary"})


def seed_turns(ranked: Iterable[tuple[str, Sequence[int], float]], *, seeds: int = SEEDS,
               max_sources: int = MAX_SEED_SOURCES) -> dict[int, float]:
    """The turns the best `seeds` results cite (each result: its kind, its cited turn ids
    and its score, best first; results of kinds other than PLACES, and results citing more
    than `max_sources`, are skipped and not counted), with the best score of a result citing
    each."""
    found: dict[int, float] = {}
    taken = 0
    for kind, sources, score in ranked:
        if taken == seeds:
            break
        if kind not in PLACES or not sources or len(sources) > max_sources:
            continue
        taken += 1
        for turn in sources:
            found[turn] = max(found.get(turn, 0.0), score)
    return found


def hop_score(own: float, seed: float, *, hop: float = HOP) -> float:
    """A neighbour's score: its own, or `hop` of its seed's when that is higher."""
    return max(own, hop * seed)


# What a question reaches through a relationship (issue 22 part 1's "relationships"): "What
# does John's daughter love?" names John, and its answer is about Sara, whom it never names
# ("Sara can't stop drawing horses"). A relationship among the best SEEDS results ("John family
# of Sara", found by its quote "my daughter Sara" and John's name) names who that is: its end
# the question does not name. Recall searches again among that entity's messages and those
# that say its name (the most recent ABOUT_RECENT of each, whatever its history),
# takes the ABOUT closest to the question, and lets each rank at most HOP of the
# relationship's score, as a neighbouring turn ranks at most HOP of its seed's.
ABOUT = 5
ABOUT_RECENT = 500


def far_ends(ranked: Iterable[tuple[str, int, frozenset[int], float]], named: frozenset[int], *,
             seeds: int = SEEDS) -> dict[int, tuple[float, int]]:
    """The entities the best `seeds` results (each: its kind, its id, the entities it is
    about, its score; best first) reach through a relationship — the ends of each
    relationship among them that the question does not name (`named`) — each with the score
    and id of the best relationship reaching it. A relationship between two people the
    question both names reaches nobody new."""
    found: dict[int, tuple[float, int]] = {}
    for taken, (kind, pk, ends, score) in enumerate(ranked):
        if taken == seeds:
            break
        if kind != "relationship":
            continue
        for end in ends - named:
            if end not in found or score > found[end][0]:
                found[end] = (score, pk)
    return found


# A question asking for several things of one kind ("Which cities has Jon visited?", "What
# books has John read?", core.kinds.asks_for_several) is answered by several results alike
# each other — other cities, other books — most of them in other sessions, in words the
# question does not share. The best results' mean embedding says what those are like
# (pseudo-relevance feedback, Rocchio's): every candidate among the best RERANK_DEPTH
# gains CONSENSUS times its cosine similarity to the mean of the best CONSENSUS_OF results
# that have embeddings (interactions, memories), shown as `consensus` in the breakdown. A
# tie-breaker (a fifth of recency's weight) among results about equally relevant; a
# question asking for one thing is ranked as before.
CONSENSUS_OF = 10  # recall's first page (its default limit)
CONSENSUS = 0.02
CONSENSUS_KEY = "consensus"
# The candidates a re-ranking here may move (the consensus, the dispositions below): a gain
# of a few hundredths cannot lift one from further down into a page or a pack.
RERANK_DEPTH = 150


def raised(score: float, gain: float) -> float:
    """A candidate's score raised by a re-ranking's gain (CONSENSUS, DISPOSED): never
    lowered, never above 1."""
    return min(1.0, score + max(0.0, gain))


# The same questions' concepts (issue 22 part 1's "concept links"): the several things asked
# for are alike in what they are about as well as in their embeddings — the best results for
# "What activities has Melanie done with her family?" share "camping", "kids", "family" with
# each other and with the answers still below them. A concept at least SHARED_BY of the best
# CONSENSUS_OF results hold, the question's own aside, joins the question's concepts, and the
# concept dimension of the best results is scored again with them and the links read for
# the question (`concept` in the breakdown changes; nothing else does). A concept several of the best
# results hold says what they have in common; one a single result holds says nothing.
SHARED_BY = 3


def shared_concepts(heads: Iterable[frozenset[str]], own: frozenset[str], *,
                    at_least: int = SHARED_BY) -> frozenset[str]:
    """The concepts at least `at_least` of `heads` (the best results' concept sets) hold,
    less the question's `own`."""
    counts: dict[str, int] = {}
    for concepts in heads:
        for concept in concepts:
            counts[concept] = counts.get(concept, 0) + 1
    return frozenset(c for c, n in counts.items() if n >= at_least) - own


def concept_rescored(breakdown: dict[str, float], concept: float) -> dict[str, float]:
    """A breakdown with its concept term replaced by `concept`, the other terms kept. The
    second round's lift is a floor, not a gain (hop_score: a neighbour ranks at least HOP of
    its seed), so a lifted neighbour's lift shrinks by what the new term adds and grows by
    what it takes away: its floor stays where it was. (A neighbour that was not lifted keeps
    no record of its floor and gets no lift.)"""
    delta = concept - breakdown.get("concept", 0.0)
    out = {**breakdown, "concept": concept}
    if LIFT in breakdown:
        out[LIFT] = max(0.0, breakdown[LIFT] - delta)
    return out


# Issue 22 part 2: a question about what someone is like, would or might do ("Would Melanie
# be more interested in a national park or a theme park?", "What job might Maria pursue?")
# is answered by what that person said of their own wants, likes and habits ("We always look
# forward to our family camping trip", "I'm keen on counseling"), in words the question
# rarely shares. So when a question asks so (HYPOTHETICAL) and names someone, each of the
# best RERANK_DEPTH candidates in which that person speaks of themselves (FIRST_PERSON) and
# of a want, liking or habit (DISPOSITION) in one line — their own message, or their line of
# an episode — gains DISPOSED, the weight of the consensus above, shown as `disposition`.
# English words, as the rule-based extraction is English.
HYPOTHETICAL = re.compile(r"\b(would|might|could|likely|probably|considered)\b", re.IGNORECASE)
FIRST_PERSON = re.compile(r"\b(I|I'm|Im|I've|I'd|I'll|we|we're|we've|my|our)\b", re.IGNORECASE)
DISPOSITION = re.compile(
    r"\b(want|wanna|hope|hoping|love|loved|loves|like|likes|enjoy|enjoyed|dream|dreams|plan|plans|planning|"
    r"thinking about|considering|keen|passionate|passion|fan|favorite|favourite|always|goal|goals|interested|"
    r"into|prefer|care about|believe|value|values)\b", re.IGNORECASE)
DISPOSED = CONSENSUS
DISPOSED_KEY = "disposition"


def asks_what_someone_is_like(question: str) -> bool:
    return HYPOTHETICAL.search(question) is not None


def speaks_of_a_disposition(line: str) -> bool:
    """The line speaks of the speaker's own wants, likes or habits."""
    return FIRST_PERSON.search(line) is not None and DISPOSITION.search(line) is not None


def quoted_lines(text: str, names: Iterable[str]) -> list[str]:
    """The lines an episode quotes from any of `names` (memory.extraction.episodes
    .quoted_lines; a name matches whole or by its first word, case-insensitively)."""
    wanted = {n.casefold() for name in names for n in (name, name.split(" ")[0]) if n}
    return [line for speaker, line in episodes.quoted_lines(text) if speaker.strip().casefold() in wanted]


# The bridge: a question that refers to a person without naming one ("what did the person who
# adopted a dog do in June?", "where does she work now?") is about whoever its best result is
# about, once that is one person. Then the candidates are scored again as if the question had
# named them: the entity dimension counts that person's messages and memories. Words that
# refer to a person, in English (the language of the rule-based extraction).
PERSON_CUES = re.compile(
    r"\b(who|whom|whose|someone|somebody|anyone|anybody|person|people|he|she|him|her|his|hers|they|them|their)\b",
    re.IGNORECASE)


# What a ranking that followed a bridge says it followed the entity for (the API's `followed`).
BRIDGE = "bridge"


def refers_to_a_person(text: str) -> bool:
    return PERSON_CUES.search(text) is not None


def bridge(entity_ids: Iterable[int]) -> int | None:
    """The one entity a result is about (an interaction's sender, a memory with one subject
    and one speaker), or None: a conversation between two people is about neither alone."""
    ids = set(entity_ids)
    return ids.pop() if len(ids) == 1 else None
