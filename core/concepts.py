"""Concepts of a text (seed 001): a concept is a normalised content word ("hike" from
"hikes"), a name ("caroline", "new york") or a short phrase of two adjacent content words
("support group"). Memories store theirs when written; recall extracts the query's; the
concept links between them (Hebbian co-occurrence) live in `context.concepts`.

Extraction is deliberately simple and deterministic (no tagger, no model): what matters is
that a query and a memory about the same thing yield the same strings, not linguistic
accuracy. Everything here is pure, and the order of every result is independent of string
hashing, so two processes derive the same concepts."""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable
from typing import NamedTuple

# Function words, pronouns, auxiliaries, light verbs and chat fillers: frequent in every
# text, so they say nothing about what a text is about. Time words go too: time cues are
# parsed separately into the query's time range.
STOPWORDS = frozenset("""
a about above after again against ago all almost along already also although always am among
an and another any anybody anyone anything anyway anywhere are around as ask asked at away
back be became because become been before being below beside besides between both but by
came can cannot come comes could did do does doing done down during each either else enough
etc even ever every everybody everyone everything few for from further get gets getting give
given go goes going gone got gotten had has have having he hello her here hers herself hey
hi him himself his how however i if in indeed instead into is it its itself just keep kind
know knew known last later least less let like likely lol lot lots made make makes making
many may maybe me mean might mine more most mostly much must my myself near nearly need
needs neither never next no nobody none nor not nothing now of off often oh ok okay on once
one only onto or other others otherwise our ours ourselves out over own per perhaps please
pretty put quite rather really right said same saw say says see seem seemed seems seen
shall she should since so some somebody someone something sometimes somewhat soon still
such sure take taken tell than thank thanks that the their theirs them themselves then there
therefore these they thing things think this those though thought through thus to today
together told tomorrow tonight too took toward towards try tried under until up upon us use
used uses using very via want wanted wants was way ways we well went were what whatever when
whenever where whereas wherever whether which while who whoever whole whom whose why will
with within without would yeah yes yesterday yet you your yours yourself yourselves
""".split())

_MIN_LETTERS = 3

# Letters only, so numbers and dates never become concepts; inner hyphens and apostrophes
# stay ("self-care", "Caroline's").
_WORD = re.compile(r"[^\W\d_]+(?:[-'’][^\W\d_]+)*")

_SENTENCE_END = ".!?:;\n"

_OPENERS = " \t\"'“‘([*-•>"

# Names first, then words, then phrases when a text holds more concepts than fit: names
# are the most specific, phrases the most speculative.
_NAME, _WORD_KIND, _PHRASE = 0, 1, 2


class _Token(NamedTuple):  # a tuple: built for every word of every recalled text
    text: str  # as written, apostrophe suffix removed
    start: int
    end: int
    capitalised: bool
    sentence_start: bool


def concepts(text: str, *, max_concepts: int = 12) -> frozenset[str]:
    """The text's concepts, lowercase: names (a capitalised word, or a run of capitalised
    words as one phrase plus its words), content words (lowercase ones in the singular) and
    two-word phrases of adjacent content words. The most frequent are kept; ties go to
    names, then words, then phrases, then to what came first."""
    if max_concepts < 0:
        raise ValueError(f"max_concepts must be at least 0, got {max_concepts}")
    text = unicodedata.normalize("NFC", text)  # "é" as one letter, not "e" and an accent
    tokens = _tokens(text)
    names_seen = {t.text.lower() for t in tokens if t.capitalised and not t.sentence_start}
    found: dict[str, tuple[int, int, int]] = {}  # concept -> (count, kind, first position)

    def add(concept: str, kind: int, position: int) -> None:
        count, best_kind, first = found.get(concept, (0, kind, position))
        found[concept] = (count + 1, min(best_kind, kind), min(first, position))

    run: list[_Token] = []  # the current run of name words
    previous: _Token | None = None  # the previous token, when it was an ordinary content word
    for index, token in enumerate(tokens):
        form = _form(token)
        content = form not in STOPWORDS and token.text.lower() not in STOPWORDS and len(form) >= _MIN_LETTERS
        following = tokens[index + 1] if index + 1 < len(tokens) else None
        is_name = content and _is_name(token, following, names_seen, text)
        if not (is_name and run and _adjacent(text, run[-1], token)):
            _flush_name(run, add)
            run = []
        if is_name:
            run.append(token)
            add(form, _NAME, token.start)
        elif content:
            add(form, _WORD_KIND, token.start)
            if previous is not None and _form(previous) != form and _adjacent(text, previous, token):
                add(f"{previous.text.lower()} {form}", _PHRASE, previous.start)
        previous = token if content and not is_name else None
    _flush_name(run, add)
    ranked = sorted(found.items(), key=lambda item: (-item[1][0], item[1][1], item[1][2], item[0]))
    return frozenset(concept for concept, _ in ranked[:max_concepts])


def singular(word: str) -> str:
    """Simple plural stripping (Porter's step 1a, with "-ies" -> "-y" so the result still
    reads as a word): "groups" -> "group", "stories" -> "story", "classes" -> "class";
    "status", "analysis", "glass" and short words are left alone."""
    if len(word) < 4 or not word.endswith("s"):
        return word
    if word.endswith("sses"):
        return word[:-2]
    if word.endswith("ies") and len(word) > 4:
        return word[:-3] + "y"
    if word.endswith(("ss", "us", "is")):
        return word
    return word[:-1]


def _tokens(text: str) -> list[_Token]:
    tokens = []
    for match in _WORD.finditer(text):
        word = match.group(0).replace("’", "'")
        if not word.replace("'", "").replace("-", "").isalpha():  # "x²": \w also holds such digits
            continue
        if "'" in word:
            base, suffix = word.rsplit("'", 1)
            if suffix.lower() == "t":  # negations: "don't", "can't" are function words
                continue
            word = base  # "Caroline's" -> "Caroline", "we've" -> "we"
        # What precedes the word, openers skipped, tells a sentence start (scanned back
        # from the word: slicing the text up to every word was quadratic in long texts).
        before = match.start() - 1
        while before >= 0 and text[before] in _OPENERS:
            before -= 1
        tokens.append(_Token(word, match.start(), match.end(), word[0].isupper(),
                             before < 0 or text[before] in _SENTENCE_END))
    return tokens


def _form(token: _Token) -> str:
    """Lowercase; a lowercase word also in the singular. A capitalised word is never cut: even
    opening a sentence it may be a name ("James plays")."""
    lower = token.text.lower()
    return lower if token.capitalised else singular(lower)


def _is_name(token: _Token, following: _Token | None, names_seen: set[str], text: str) -> bool:
    """Capitalised mid-sentence, an acronym, or capitalised at a sentence start when the
    word is capitalised elsewhere too or starts a run of capitalised words ("New York")."""
    if not token.capitalised:
        return False
    if not token.sentence_start or (len(token.text) > 1 and token.text.isupper()):
        return True
    if token.text.lower() in names_seen:
        return True
    return (following is not None and following.capitalised and _adjacent(text, token, following)
            and following.text.lower() not in STOPWORDS)


def _adjacent(text: str, left: _Token, right: _Token) -> bool:
    """Separated only by spaces on one line: no punctuation, no line break."""
    gap = text[left.end:right.start]
    return bool(gap) and gap.isspace() and "\n" not in gap


def _flush_name(run: list[_Token], add: Callable[[str, int, int], None]) -> None:
    if len(run) > 1:
        add(" ".join(token.text.lower() for token in run), _NAME, run[0].start)
