"""Which sentences make the summary: each is scored for salience (TF-IDF similarity to what
the conversation is about, plus specifics such as numbers, dates, names and first-person
facts), then picked greedily without repeats and within the budget."""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

from conversations.summarise.text import (
    _APOSTROPHES,
    MONTHS,
    _display,
    _stem,
    _strip_trailing,
    _tokens,
)

# --- selection ---------------------------------------------------------------------------

# Below this a sentence adds nothing a reader would miss ("Wow, that's cool!").
MIN_SALIENCE = 0.3
# Two sentences this similar say the same thing; keep the better one only.
MAX_REDUNDANCY = 0.6

_STOPWORDS = frozenset("""
a about above after again against all am an and any are aren't as at be because been before being
below between both but by can can't cannot could couldn't did didn't do does doesn't doing don't
down during each few for from further had hadn't has hasn't have haven't having he he'd he'll he's
her here here's hers herself him himself his how how's i i'd i'll i'm i've if in into is isn't it
it's its itself just let's me more most mustn't my myself nor not of off on once only or other
ought our ours ourselves out over own same shan't she she'd she'll she's should shouldn't so some
such than that that's the their theirs them themselves then there there's these they they'd
they'll they're they've this those through to too under until up very was wasn't we we'd we'll
we're we've were weren't what what's when when's where where's which while who who's whom why
why's will with won't would wouldn't you you'd you'll you're you've your yours yourself
yourselves also got get gets getting go going gonna really much many thing things lot lots
something anything everything one ones still even well way like would've could've
""".split())

# Words that carry no information on their own: greetings, thanks, backchannel, praise.
_FILLER = frozenset("""
hey hi hello hiya yo heya thanks thank thx ty lol lmao rofl haha hahaha hehe wow cool ok okay k
yeah yep yes yup no nope nah nice great awesome sure good bye goodbye totally agree love omg right
sweet amazing glad hope welcome congrats congratulations oh ah um uh hmm wonderful fantastic
perfect exactly true definitely absolutely indeed fine alright cheers sounds see soon talk later
anyway guess mean kinda sorta stuff guy guys dude man girl
""".split())

_NUMBER_WORDS = frozenset("two three four five six seven eight nine ten eleven twelve twenty thirty "
                          "fifty hundred thousand million billion dozen half".split())
_DATE_WORDS = frozenset("yesterday today tonight tomorrow monday tuesday wednesday thursday friday "
                        "saturday sunday weekend".split()) | frozenset(m.lower() for m in MONTHS if m != "May")
_RELATIVE_DATE = re.compile(
    r"\b(?:last|next|this|every)\s+(?:week|month|year|night|weekend|summer|winter|spring|autumn|fall|"
    r"morning|evening|time)\b|\b\d+\s+(?:days?|weeks?|months?|years?)\s+ago\b|\bMay\s+\d|\d\s+May\b|"
    r"\b(?:19|20)\d\d\b", re.IGNORECASE)
_FIRST_PERSON_FACT = re.compile(
    r"\b(?:i|we)(?:'ve|'d| have| had| just| finally| recently| also)?\s+(?:\w+ed|went|got|bought|made|"
    r"began|met|saw|won|lost|took|found|ran|wrote|built|did|had|have|was|were|am|are|do|love|like|"
    r"hate|work|live|study|teach|play|need|want|keep|feel|felt|left|kept|grew|sold|paid|spent|gave|"
    r"became|chose|drove|flew|broke|told|said|read|began|begun|think|know)\b"
    r"|\b(?:i'm|i am|we're|we are)\s+(?:going|gonna|keen|planning|starting|moving|working|learning|"
    r"taking|trying|thinking|a|an|from|in|at|now|still|currently)\b"
    r"|^(?:gonna|going to)\b"
    r"|\bmy\s+\w+(?:\s+\w+)?\s+(?:is|are|was|were|has|have)\b",
    re.IGNORECASE)

# --- candidates and scores ---------------------------------------------------------------

@dataclass
class _Candidate:
    order: int  # position in the conversation (or in the earlier summary)
    turn_id: int | None
    speaker: str | None
    text: str
    terms: dict  # stem -> count
    specifics: float
    informative: bool
    vector: dict | None = None
    score: float = 0.0


def _is_name(token: str, names: frozenset) -> bool:
    # "Mel" for Melanie: a vocative carries no information either.
    return token in names or (len(token) >= 3 and any(name.startswith(token) for name in names))


def _candidate(order: int, turn_id: int | None, speaker: str | None, sentence: str, names: frozenset) -> _Candidate:
    tokens = _tokens(sentence)
    content = [t for t in tokens if t not in _STOPWORDS and t not in _FILLER and not _is_name(t, names)]
    terms: dict = {}
    for token in content:
        stem = _stem(token)
        terms[stem] = terms.get(stem, 0) + 1
    normalised = sentence.translate(_APOSTROPHES)
    words = normalised.split()
    proper = 0
    for word in words[1:]:
        bare = word.strip(".,!?;:\"'()[]")
        if not bare or _is_name(bare.lower(), names) or bare.lower() in _FILLER or bare.lower() in _STOPWORDS:
            continue
        if (bare[0].isupper() and bare[1:].islower() and bare.lower() not in _DATE_WORDS) or \
                (len(bare) >= 2 and bare.isupper() and bare.isalpha()):
            proper += 1
    has_number = bool(re.search(r"\d", sentence)) or any(t in _NUMBER_WORDS for t in tokens)
    has_date = any(t in _DATE_WORDS for t in tokens) or bool(_RELATIVE_DATE.search(normalised))
    is_question = _strip_trailing(sentence).endswith("?")
    specifics = (0.35 * has_number + 0.35 * has_date + 0.15 * min(proper, 2)
                 + 0.45 * bool(_FIRST_PERSON_FACT.search(normalised))
                 + 0.2 * min(len(content), 8) / 8
                 - 0.3 * (len(content) < 3) - 0.25 * is_question)
    return _Candidate(order, turn_id, speaker, _display(sentence), terms, specifics, informative=bool(content))


def _score(candidates: list[_Candidate]) -> None:
    """Salience = TF-IDF cosine to the conversation's centroid (what it is about) plus the
    specifics a reader would want kept (numbers, dates, names, first-person facts)."""
    informative = [c for c in candidates if c.informative]
    document_frequency: dict = {}
    for c in informative:
        for term in c.terms:
            document_frequency[term] = document_frequency.get(term, 0) + 1
    total = len(informative)
    centroid: dict = {}
    for c in informative:
        vector = {t: n * (math.log((1 + total) / (1 + document_frequency[t])) + 1) for t, n in c.terms.items()}
        norm = math.sqrt(sum(v * v for v in vector.values())) or 1.0
        c.vector = {t: v / norm for t, v in vector.items()}
        for t, v in c.vector.items():
            centroid[t] = centroid.get(t, 0.0) + v
    norm = math.sqrt(sum(v * v for v in centroid.values())) or 1.0
    for c in candidates:
        if not c.informative:
            c.score = -1.0
            continue
        similarity = sum(v * centroid.get(t, 0.0) for t, v in c.vector.items()) / norm
        c.score = similarity + c.specifics


def _cosine(a: dict, b: dict) -> float:
    if len(a) > len(b):
        a, b = b, a
    return sum(v * b.get(t, 0.0) for t, v in a.items())


def _pick(candidates: list[_Candidate], fits, *, threshold: float) -> list[_Candidate]:
    """Greedy by salience (ties to the earlier sentence), skipping repeats and anything that
    would break the budget; returned in the order they were said."""
    chosen: list[_Candidate] = []
    for c in sorted(candidates, key=lambda candidate: (-candidate.score, candidate.order)):
        if c.score < threshold:
            break
        if any(_cosine(c.vector, other.vector) >= MAX_REDUNDANCY for other in chosen):
            continue
        trial = sorted([*chosen, c], key=lambda candidate: candidate.order)
        if fits(trial):
            chosen = trial
    return chosen
