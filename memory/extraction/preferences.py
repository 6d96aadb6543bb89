"""What the speaker likes and dislikes (type preference): "I love hiking", "I can't stand
jazz", "my favourite book is Dune", "I prefer tea over coffee".

A liking and its opposite share one attribute, "likes:<object>", with polarity +1 or -1,
so "I love hiking" and, later, "I don't like hiking" contradict each other and a reviewer
sees both. A favourite holds one value at a time ("favorite:book"); "I prefer X over Y"
is keyed by the pair, so preferring Y later is a change of mind.

The object is the phrase after the cue up to the end of its clause, at most eight words.
When the object points at the conversation rather than at the world ("I love that", "I
like your painting", "I love how you did it") there is nothing to remember without the
context, and the rule stays quiet. So does "I'd love to", a wish rather than a taste.

Confidence follows how often a wording misfired on hand-written near misses and the LoCoMo
conversations: "I love", "I hate", "I'm a big fan of" and "my favourite X is" never did
and sit at 0.9, the trust policy's line for a rule memory to go active without review
(DESIGN.md); "I like" (often about the moment: "I like this!") and "I'm into" sit lower."""

from __future__ import annotations

import re
from collections.abc import Iterator

from memory.extraction._common import (
    _I,
    _IM,
    _SP,
    SPEAKER,
    Source,
    candidate,
    normal_value,
    opens_clause,
    phrase_at,
    refers_to_context,
    stated,
    third_person,
)
from memory.extraction._types import MemoryCandidate

RULES = {
    "preference.love": "“I love X”, “I adore X”.",
    "preference.like": "“I like X” (not “I'd like”).",
    "preference.enjoy": "“I enjoy X”.",
    "preference.fan": "“I'm a big fan of X”, “I'm not a fan of X”.",
    "preference.into": "“I'm really into X”.",
    "preference.hate": "“I hate X”, “I can't stand X”.",
    "preference.dislike": "“I don't like X”, “I don't enjoy X”, “I dislike X”.",
    "preference.prefer": "“I prefer X (over/to Y)”.",
    "preference.favorite": "“my favourite X is Y”, “one of my favorite X is Y”.",
}

_ADVERBS = (rf"(?:(?:really|absolutely|also|just|totally|truly|still|genuinely|especially|definitely|actually|do|so|simply"
            rf"|honestly|seriously|personally|kinda|always){_SP}){{0,2}}")
_NEGATION = rf"(?:don['’]?t|do{_SP}not|never)"

# (rule, pattern, polarity, verb for the third person, confidence)
_LIKING_CUES = (
    ("preference.love", re.compile(rf"\bI{_SP}{_ADVERBS}(?:love|adore){_SP}", _I), 1, "loves", 0.9),
    ("preference.like", re.compile(rf"\bI{_SP}{_ADVERBS}like{_SP}", _I), 1, "likes", 0.8),
    ("preference.enjoy", re.compile(rf"\bI{_SP}{_ADVERBS}enjoy{_SP}", _I), 1, "enjoys", 0.85),
    ("preference.fan", re.compile(rf"{_IM}{_SP}(?:also{_SP}|such{_SP})?an?{_SP}(?:(?:big|huge|great|massive|real|major|die-hard)"
                                  rf"{_SP})?fan{_SP}of{_SP}", _I), 1, "is a big fan of", 0.9),
    ("preference.into", re.compile(rf"{_IM}{_SP}(?:really|so|totally|super|very|big|huge){_SP}into{_SP}", _I), 1, "is really into", 0.7),
    ("preference.hate", re.compile(rf"\bI{_SP}{_ADVERBS}(?:hate|despise|detest|loathe){_SP}", _I), -1, "hates", 0.9),
    ("preference.hate", re.compile(rf"\bI{_SP}{_ADVERBS}(?:can['’]?t|cannot|can{_SP}not){_SP}stand{_SP}", _I), -1, "can't stand", 0.85),
    ("preference.dislike", re.compile(rf"\bI{_SP}{_ADVERBS}{_NEGATION}{_SP}(?:really{_SP})?(?:like|love|enjoy){_SP}", _I), -1, "doesn't like", 0.85),
    ("preference.dislike", re.compile(rf"{_IM}{_SP}not{_SP}(?:really{_SP})?(?:an?{_SP})?(?:(?:big|huge|great){_SP})?fan{_SP}of{_SP}", _I), -1, "is not a fan of", 0.85),
    ("preference.dislike", re.compile(rf"\bI{_SP}{_ADVERBS}dislike{_SP}", _I), -1, "dislikes", 0.85),
)

# Objects that are a clause about the moment, not a thing one can like: "I love how it
# turned out", "I like to think so", "I love the way you paint".
_CLAUSE_OBJECT = re.compile(
    r"(?:how|what|when|where|why|who|whatever|if|everything|anything|something|nothing|all|both|so|too|very|more|most|"
    r"such|being|is|are|was|were|makes?|made|has|have|does|gets?|"
    r"the[ \t]+(?:way|idea|fact|thought|sound|look|feeling|vibes?|energy|support|pic|photo|picture|painting|shot|colou?rs?|"
    r"texture|details?|design|style|message|name|story|part|feel|one)|"
    r"to[ \t]+(?:think|say|believe|imagine|hear|see|know|help|read[ \t]+that)|hearing|seeing|reading[ \t]+about|"
    r"having[ \t]+you|seeing[ \t]+you|a[ \t]+lot|lots|each|every|doing[ \t]+that)\b", _I)


# "I love to!", "I like going with": the object was cut short or left to the context.
_DANGLING = re.compile(r"\b(?:to|of|for|with|and|or|the|a|an|about|at|in|on|by|from|into|than)$", _I)


def _object(source: Source, pos: int) -> tuple[int, int] | None:
    """The liked thing at `pos`, or None when it is missing, too long, a clause, or points
    at the conversation."""
    span = phrase_at(source, pos)
    if span is None:
        return None
    phrase = source.text[span[0] : span[1]]
    if _CLAUSE_OBJECT.match(phrase) or refers_to_context(phrase) or _DANGLING.search(phrase):
        return None
    return span


def _liked_value(phrase: str) -> str:
    """ "I love to paint" is keyed as "paint"."""
    return normal_value(re.sub(r"^to[ \t]+", "", phrase.strip(), flags=_I))


def _likings(source: Source) -> Iterator[MemoryCandidate]:
    for rule, pattern, polarity, verb, confidence in _LIKING_CUES:
        for m in pattern.finditer(source.text):
            span = _object(source, m.end())
            if span is None or not opens_clause(source, m.start()) or not stated(source, m.start(), span[1]):
                continue
            phrase = source.text[span[0] : span[1]]
            reworded = third_person(phrase)
            value = _liked_value(phrase)
            if not reworded or not value:
                continue
            yield candidate(source, rule, "preference", f"{SPEAKER} {verb} {reworded}", (m.start(), span[1]),
                            attribute=f"likes:{value}", value=value, polarity=polarity, confidence=confidence,
                            importance=0.5)


_PREFER = re.compile(rf"\bI{_SP}{_ADVERBS}prefer{_SP}", _I)
_OVER = re.compile(rf"{_SP}(?:over|to|rather{_SP}than|instead{_SP}of){_SP}", _I)
# "I prefer going to the beach" compares nothing: "to" compares only after a noun.
_VERBAL = re.compile(r"(?:to|\w+ing)\b", _I)


def _preferences(source: Source) -> Iterator[MemoryCandidate]:
    text = source.text
    for m in _PREFER.finditer(text):
        whole = _object(source, m.end())
        if whole is None:
            continue
        preferred = _before_comparison(source, whole)
        over = _OVER.match(text, preferred[1]) if preferred != whole else None
        other = _object(source, over.end()) if over else None
        end = other[1] if other else preferred[1]
        x = third_person(text[preferred[0] : preferred[1]])
        value = _liked_value(text[preferred[0] : preferred[1]])
        if not x or not value or not opens_clause(source, m.start()) or not stated(source, m.start(), end):
            continue
        if over is None or other is None:
            yield candidate(source, "preference.prefer", "preference", f"{SPEAKER} prefers {x}", (m.start(), end),
                            attribute=f"likes:{value}", value=value, confidence=0.7, importance=0.5)
            continue
        y = third_person(text[other[0] : other[1]])
        other_value = _liked_value(text[other[0] : other[1]])
        if not y or not other_value or other_value == value:
            continue
        pair = " or ".join(sorted((value, other_value)))
        yield candidate(source, "preference.prefer", "preference", f"{SPEAKER} prefers {x}{over.group()}{y}",
                        (m.start(), end), attribute=f"prefers:{pair}", value=value, confidence=0.85, importance=0.55)


def _before_comparison(source: Source, span: tuple[int, int]) -> tuple[int, int]:
    """ "tea" in "I prefer tea over coffee": the object ends where the comparison starts."""
    over = _OVER.search(source.text, span[0], span[1])
    if over is None or (over.group().strip().lower() == "to" and _VERBAL.match(source.text, span[0])):
        return span
    return span[0], over.start()


_FAVORITE = re.compile(
    rf"\b(?P<one>one{_SP}of{_SP})?my{_SP}(?:(?:all-time|absolute|very|current|new){_SP})?(?:favou?rite|fave|fav)"
    rf"{_SP}(?P<what>[a-z][a-z\-]*(?:{_SP}[a-z][a-z\-]*){{0,2}}?){_SP}(?:is|are|['’]s|has{_SP}(?:always{_SP})?been){_SP}", _I)
_TITLE = re.compile(r"[\"“](?P<title>[^\"“”\n]{1,80})[\"”]")


def _favorites(source: Source) -> Iterator[MemoryCandidate]:
    text = source.text
    for m in _FAVORITE.finditer(text):
        what = " ".join(m.group("what").lower().split())
        title = _TITLE.match(text, m.end())
        span = title.span() if title else _object(source, m.end())
        if span is None or refers_to_context(what) or not stated(source, m.start(), span[1]):
            continue
        favorite = title.group("title").strip() if title else text[span[0] : span[1]]
        reworded = third_person(favorite)
        value = normal_value(favorite)
        if not reworded or not value:
            continue
        if m.group("one"):  # one of several favourites: a liking, not the favourite
            yield candidate(source, "preference.favorite", "preference",
                            f"{reworded} is one of {SPEAKER}'s favorite {what}", (m.start(), span[1]),
                            attribute=f"likes:{value}", value=value, confidence=0.8, importance=0.5)
            continue
        yield candidate(source, "preference.favorite", "preference", f"{SPEAKER}'s favorite {what} is {reworded}",
                        (m.start(), span[1]), attribute=f"favorite:{what}", value=value, confidence=0.9,
                        importance=0.6)


PREFERENCE_RULES = (_likings, _preferences, _favorites)
