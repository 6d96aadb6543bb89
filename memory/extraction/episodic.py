"""What happened to the speaker or what they plan (type episodic): "we went camping last
weekend", "I'm going to a conference next month", "I just finished my first marathon".

An episode is worth keeping when it is dated, so a rule fires only with a time phrase in
the same sentence (resolved to the calendar: "next month" becomes "in June 2023") or with
a cue that dates it by itself: "I'm planning to", "I just", "recently", "finally". "I'm
going to keep going" and "I will!" carry no date and no plan, and stay quiet.

The memory's text is the clause itself, from its subject to the end of the clause, with
the speaker named ("I" -> "{speaker}", "my mom" -> "{speaker}'s mom", "we" -> "{speaker}
and others") and the date it was said appended, so "next month" can be checked later. A
clause that speaks to the listener ("I'll see you tomorrow") or says nothing without its
context ("I did it yesterday") is left alone."""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass

from memory.extraction._common import (
    _I,
    _SP,
    SPEAKER,
    Source,
    candidate,
    normal_value,
    opens_clause,
    sentence_case,
    stated,
    third_person,
)
from memory.extraction._types import MemoryCandidate
from memory.timeexpr import TimeMention, dated

RULES = {
    "episodic.plan": "“I'm going to / planning to / will X” or “I'm visiting X” with a future time phrase.",
    "episodic.event": "“I/we <past verb> X” with a past time phrase: “we went camping last weekend”.",
    "episodic.recent": "“I just / recently / finally <past verb> X”: “I just started a new job”.",
}

# "my family and I", "Anthony and I", "we", "I"
_SUBJECT = (rf"(?P<subject>\bI\b|\bwe\b|\b(?:my|our){_SP}[a-z]+(?:{_SP}[a-z]+)?{_SP}and{_SP}I\b"
            rf"|\b(?-i:[A-Z][a-z]+){_SP}and{_SP}I\b)")
_BE = rf"(?:['’]m|['’]re|{_SP}am|{_SP}are)"
_PLAN_ADVERBS = rf"(?:(?:also|still|finally|actually|definitely|probably|really|just){_SP})?"
_NOT_A_PLAN = rf"(?!be{_SP}(?:honest|fine|ok|okay|alright|there|good|great)\b|try\b|keep\b|let\b|miss\b|see{_SP}(?:you|ya)\b|have{_SP}to\b)"
# Progressive verbs that report a state of mind, not a plan: "I'm thinking of you".
_NOT_PROGRESSIVE = rf"(?!going\b|feeling\b|thinking\b|hoping\b|wondering\b|loving\b|kidding\b|saying\b|missing\b|trying\b|looking\b|doing\b|getting{_SP}(?:better|there)\b)"
_PLAN_CUES = (
    # (pattern, verb for the third person singular, for a plural subject, time phrase needed)
    (re.compile(rf"{_SUBJECT}{_BE}{_SP}{_PLAN_ADVERBS}(?:going{_SP}to|gonna){_SP}{_NOT_A_PLAN}", _I), "is going to", "are going to", True),
    (re.compile(rf"{_SUBJECT}{_BE}{_SP}{_PLAN_ADVERBS}planning{_SP}(?:to|on){_SP}", _I), "is planning to", "are planning to", False),
    (re.compile(rf"{_SUBJECT}{_SP}(?:also{_SP})?plan{_SP}(?:to|on){_SP}", _I), "plans to", "plan to", False),
    (re.compile(rf"{_SUBJECT}(?:['’]ll|{_SP}will){_SP}{_PLAN_ADVERBS}(?!not\b|never\b){_NOT_A_PLAN}", _I), "will", "will", True),
    (re.compile(rf"{_SUBJECT}{_BE}{_SP}{_PLAN_ADVERBS}{_NOT_PROGRESSIVE}(?P<verb>[a-z]{{2,}}ing)\b{_SP}", _I), "is", "are", True),
)

_IRREGULAR_PAST = """went got saw made took had found met ran won lost bought began wrote gave came left kept sold paid
    spent built drove flew swam sang threw caught taught brought became chose ate drank slept wore broke held led fell
    sent stood grew shot fought hid rode drew spoke woke heard read""".split()
# -ed forms that report a wish or a thought, not something that happened.
_NOT_EVENTS = r"(?!(?:used|supposed|wanted|needed|hoped|wondered|guessed|figured|meant|liked|loved|hated|seemed|pretended|imagined|wished)\b)"
# "I had to", "I got to": an obligation or a chance, not an event.
_PAST = (rf"(?!(?:had|got){_SP}to{_SP}(?!the\b|a\b|an\b|my\b|our\b))"
         rf"(?P<verb>{_NOT_EVENTS}(?:{'|'.join(_IRREGULAR_PAST)}|[a-z]{{2,}}ed)\b)")
_RECENT = r"(?P<recent>just|recently|finally)"
_PAST_CUES = (
    (re.compile(rf"{_SUBJECT}{_SP}(?:(?:also|actually|even|already|first|then|{_RECENT}){_SP}){{0,2}}{_PAST}", _I), False),
    (re.compile(rf"{_SUBJECT}(?:['’]ve|{_SP}have){_SP}(?:(?:also|actually|{_RECENT}){_SP}){{1,2}}(?P<perfect>{_NOT_EVENTS}"
                rf"(?:gone|gotten|got|seen|made|taken|found|met|won|lost|bought|begun|written|given|left|sold|built|become"
                rf"|[a-z]{{2,}}ed)\b)", _I), True),
)
_MILESTONES = frozenset("""started finished completed graduated joined adopted married moved bought won quit launched
    published retired opened signed began became built sold""".split())

# Where a clause ends: punctuation, a dash, or a conjunction that starts another clause.
_CLAUSE_END = re.compile(
    r"[;:!?\n]|\.(?=\s|$)|[ \t][-–—][ \t]|[—–]|,[ \t]+(?=(?:i|it|it's|it’s|we|she|he|they|that|this|you|so|but|and|"
    r"because|which|who|though|plus|haha|lol)\b)|[ \t]+(?=(?:but|because|cause|so|though|although|and[ \t]+(?:i|we|it|"
    r"she|he|they|you|then))\b)", _I)
_LEADING_FILLER = re.compile(r"[ \t,]*(?:(?:so|and|but|then|well|actually|oh|anyway|plus|also|btw)[ \t,]+)*", _I)
_MAX_CLAUSE_WORDS = 25
_VAGUE_WORDS = frozenset("""it this that these those them there here something anything everything stuff things thing
    one some a an the to of in on at for with my our up out back so too really just again go do be get have make try
    see come check take it's few more lot new great good blast fun time bit much""".split())


@dataclass(frozen=True)
class _Clause:
    start: int  # where the quote starts: the subject, or a time phrase leading the sentence
    rest: int  # where the words after the verb start
    end: int
    when: TimeMention | None
    leading: bool  # the time phrase comes before the subject


def _clause_end(source: Source, pos: int) -> int:
    _, sentence_end = source.sentence(pos)
    end = _CLAUSE_END.search(source.text, pos, sentence_end)
    return end.start() if end else sentence_end


def _clause(source: Source, m: re.Match[str], rest: int, direction: str) -> _Clause:
    """The clause a cue starts, with the first time phrase pointing `direction` ("future"
    or "past") inside it or leading its sentence."""
    end = _clause_end(source, rest)
    today = source.today
    fits = (lambda t: t.last >= today) if direction == "future" else (lambda t: t.first <= today)
    inside = [t for t in source.times_in(rest, end) if fits(t)]
    if inside:
        return _Clause(m.start(), rest, end, inside[0], False)
    sentence_start, _ = source.sentence(m.start())
    for t in source.times_in(sentence_start, m.start()):
        if (fits(t) and _LEADING_FILLER.fullmatch(source.text, sentence_start, t.start)
                and _LEADING_FILLER.fullmatch(source.text, t.end, m.start())):
            return _Clause(t.start, rest, end, t, True)
    return _Clause(m.start(), rest, end, None, False)


def _subject(words: str) -> tuple[str, bool] | None:
    """The subject with the speaker named, and whether it is plural."""
    if words.lower() == "i":
        return SPEAKER, False
    if words.lower() == "we":
        return f"{SPEAKER} and others", True
    others = third_person(re.sub(rf"{_SP}and{_SP}I$", "", words, flags=_I))
    return (f"{SPEAKER} and {others}", True) if others else None


def _vague(phrase: str) -> bool:
    """No word that means something without the conversation: "go there", "do it"."""
    return all(w in _VAGUE_WORDS for w in re.findall(r"[a-z']+", phrase.lower()))


# "I made it in pottery class", "I got this yesterday!": the object is in the picture.
_PRONOUN_OBJECT = re.compile(
    r"[ \t]*(?:it|them|one|(?:this|that|these|those)(?=[ \t]*(?:$|[^\w\s]|(?:in|at|on|for|from|with|to|as|yesterday|today|"
    r"last|this|a|an|the|and|but|so|too)\b)))\b", _I)


def _render(source: Source, clause: _Clause, subject: str, verb: str) -> str | None:
    """ "{speaker} is going to Paris in June 2023 (said on 8 May 2023)", or None when the
    clause speaks to the listener or means nothing without the conversation."""
    if _PRONOUN_OBJECT.match(source.text, clause.rest, clause.end):
        return None
    words = source.text[clause.rest : clause.end]
    if clause.when is not None and not clause.leading:
        words = words[: clause.when.start - clause.rest] + words[clause.when.end - clause.rest :]
    reworded = third_person(source.with_dates(clause.rest, clause.end).strip(" \t,"))
    if reworded is None or _vague(words):
        return None
    sentence = f"{subject} {verb} {reworded}".rstrip(" ,")
    if clause.leading and clause.when is not None:
        sentence = f"{sentence_case(dated(clause.when, source.text))}, {sentence}"
    return f"{sentence} {source.said}"


def _too_long(source: Source, clause: _Clause) -> bool:
    return len(source.text[clause.start : clause.end].split()) > _MAX_CLAUSE_WORDS


def _plans(source: Source) -> Iterator[MemoryCandidate]:
    for pattern, singular, plural, needs_time in _PLAN_CUES:
        for m in pattern.finditer(source.text):
            subject = _subject(m.group("subject"))
            if subject is None or not opens_clause(source, m.start()):
                continue
            clause = _clause(source, m, m.end(), "future")
            if (needs_time and clause.when is None) or _too_long(source, clause):
                continue
            if not stated(source, m.start(), clause.end):
                continue
            verb = plural if subject[1] else singular
            if "verb" in pattern.groupindex:
                verb = f"{verb} {m.group('verb').lower()}"
            text = _render(source, clause, subject[0], verb)
            if text is None:
                continue
            yield candidate(source, "episodic.plan", "episodic", text, (clause.start, clause.end),
                            value=normal_value(source.text[clause.start : clause.end]),
                            confidence=0.8 if clause.when else 0.7, importance=0.6, event=clause.when)


def _events(source: Source) -> Iterator[MemoryCandidate]:
    for pattern, perfect in _PAST_CUES:
        for m in pattern.finditer(source.text):
            subject = _subject(m.group("subject"))
            recent = m.group("recent")
            if subject is None or not opens_clause(source, m.start()):
                continue
            clause = _clause(source, m, m.end(), "past")
            if (clause.when is None and not recent) or _too_long(source, clause):
                continue
            if not stated(source, m.start(), clause.end):
                continue
            verb_words = " ".join(source.text[m.end("subject") : m.end()].split()).lower()
            if perfect:
                verb_words = re.sub(r"^(?:['’]ve|have)\b", "have" if subject[1] else "has", verb_words)
            text = _render(source, clause, subject[0], verb_words)
            if text is None:
                continue
            verb = (m.group("perfect") if perfect else m.group("verb")).lower()
            event = clause.when or ((source.today, source.today) if recent and recent.lower() == "just" else None)
            yield candidate(source, "episodic.event" if clause.when else "episodic.recent", "episodic", text,
                            (clause.start, clause.end), value=normal_value(source.text[clause.start : clause.end]),
                            confidence=0.75 if clause.when else 0.7, importance=0.7 if verb in _MILESTONES else 0.5,
                            event=event)


EPISODIC_RULES = (_plans, _events)
