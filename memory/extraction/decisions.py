"""Decisions, constraints and requirements stated in a message. Seed 000 gives them their
canonical home among the entities, so these rules produce entity candidates (route
"entity", type "fact"), never memories: "Decision: use Postgres for the queue", "we agreed
to ship on Tuesdays", "Uploads must not exceed 25 MB", "The API must support SSO".

A "must" is a requirement only when its subject is a thing: "you must be so proud",
"it must have been hard" and "we must not give up" are encouragement or guesses, which
is most of what "must" means in chat. So the subject may not be a pronoun, "must be" needs
a participle ("must be hashed", "must be able to"), and "must have been" never counts."""

from __future__ import annotations

import re
from collections.abc import Iterator

from memory.extraction._common import _I, _SP, SPEAKER, Source, candidate, normal_value, stated, third_person
from memory.extraction._types import MemoryCandidate

RULES = {
    "decision.heading": "A line starting “Decision:” or “Decided:”.",
    "decision.agreed": "“we decided / agreed to X”, “the team decided to X”.",
    "decision.going_with": "“we're going with X” (a choice, not company: “going with my parents” is not one).",
    "constraint.heading": "A line starting “Constraint:”.",
    "constraint.must_not": "“X must not Y”, “X should never Y”, “X cannot exceed Y” with a named subject.",
    "constraint.never_exceed": "“… never exceed Y”.",
    "requirement.heading": "A line starting “Requirement:”.",
    "requirement.must": "“X must Y”, “X shall Y” with a named subject.",
}

_TITLE_WORDS = 8


def _title(clause: str) -> str:
    """A short name for the entity: the clause's first words, capitalised."""
    words = clause.strip(" \t.,;:!").split()
    title = " ".join(words[:_TITLE_WORDS]) + ("…" if len(words) > _TITLE_WORDS else "")
    return title[:1].upper() + title[1:]


def _entity(source: Source, rule: str, kind: str, clause: str, span: tuple[int, int], confidence: float) -> MemoryCandidate:
    body = " ".join(clause.strip(" \t.,;:!").split())
    described = third_person(body) or body
    return candidate(source, rule, "fact", f"{kind.capitalize()} (from {SPEAKER}): {described}", span,
                     value=normal_value(body), confidence=confidence, importance=0.8, route="entity",
                     entity_kind=kind, name=_title(body))


# --- headings ---------------------------------------------------------------------------

_HEADING = re.compile(
    r"^[ \t]*(?:[-*•][ \t]*)?(?:\*\*|__)?(?P<kind>decision|decided|constraint|requirement|req)s?(?:\*\*|__)?[ \t]*:"
    r"(?:\*\*|__)?[ \t]*(?P<body>\S[^\n]*)", _I | re.MULTILINE)
_HEADING_KINDS = {"decision": "decision", "decided": "decision", "constraint": "constraint", "requirement": "requirement",
                  "req": "requirement"}


def _headings(source: Source) -> Iterator[MemoryCandidate]:
    for m in _HEADING.finditer(source.text):
        kind = _HEADING_KINDS[m.group("kind").lower()]
        body = m.group("body").rstrip()
        if len(body.strip(" \t.,;:!?")) < 2 or body.endswith("?"):
            continue
        yield _entity(source, f"{kind}.heading", kind, body, (m.start(), m.start("body") + len(body)), 0.9)


# --- decisions in a sentence ---------------------------------------------------------------

# The rest of the sentence; a dot inside "Python 3.8" or "v2.1" does not end it.
_UNTIL_SENTENCE_END = r"(?:[^\n.;!?]|\.(?=\S))+"

_AGREED = re.compile(
    rf"\b(?:we|the{_SP}team|our{_SP}team|everyone|everybody)(?:['’]ve|{_SP}have|{_SP}(?:finally|just|all|both|jointly))*"
    rf"{_SP}(?:decided|agreed|settled){_SP}(?:to|on|that){_SP}(?P<body>{_UNTIL_SENTENCE_END})", _I)
_GOING_WITH = re.compile(
    rf"\bwe(?:['’]re|{_SP}are|['’]ll|{_SP}will){_SP}(?:(?:going|gonna){_SP}(?:to{_SP}go{_SP})?with|sticking{_SP}with|opting{_SP}for)"
    rf"{_SP}(?P<body>(?:[^\n.,;!?]|\.(?=\S))+)", _I)
# "we're going with my parents", "going with the flow", "going with them to the park"
_COMPANY = re.compile(r"(?:my|our|your|his|her|their|the[ \t]+(?:kids|family|flow|girls|boys|guys)|them|him|you|friends|"
                      r"family|mom|dad|\w+[ \t]+and[ \t]+\w+)\b|.*\bto[ \t]+(?:the|a|an)\b", _I)
_CLAUSE_BREAK = re.compile(r",|[ \t](?:but|because|so|and[ \t]+(?:I|we|it|then))\b|[ \t][-–—][ \t]", _I)


def _body(m: re.Match[str]) -> tuple[int, int]:
    """The decided clause, up to where another clause starts."""
    body = m.group("body")
    cut = _CLAUSE_BREAK.search(body)
    return m.start("body"), m.start("body") + (cut.start() if cut else len(body.rstrip()))


def _decisions(source: Source) -> Iterator[MemoryCandidate]:
    text = source.text
    for m in _AGREED.finditer(text):
        start, end = _body(m)
        if stated(source, m.start(), end) and len(text[start:end].split()) >= 2:
            yield _entity(source, "decision.agreed", "decision", text[start:end], (m.start(), end), 0.75)
    for m in _GOING_WITH.finditer(text):
        start, end = _body(m)
        choice = text[start:end]
        if _COMPANY.match(choice) or len(choice.split()) > 6 or not stated(source, m.start(), end):
            continue
        yield _entity(source, "decision.going_with", "decision", f"go with {choice}", (m.start(), end), 0.7)


# --- constraints and requirements -------------------------------------------------------------

# A thing, not a person or the conversation: "The API", "Uploads", "All passwords".
_PRONOUNS = frozenset("""i you we he she it they this that these those there here your my our his her their its
    everyone everybody someone somebody nobody life one who what which""".split())
# "Taking initiative is a must": "must" as a noun.
_NOT_SUBJECT_ENDS = frozenset("a an the is are was were be".split())
_SUBJECT = r"(?P<subject>(?:[\w\-/.'’]+[ \t]+){0,5}?[\w\-/.'’]+)"
_MUST_NOT = re.compile(
    rf"{_SUBJECT}{_SP}(?:must{_SP}not|mustn['’]t|must{_SP}never|shall{_SP}not|shan['’]t|should{_SP}never|"
    rf"may{_SP}not{_SP}exceed|can(?:not|['’]t|{_SP}not){_SP}exceed){_SP}(?P<rest>{_UNTIL_SENTENCE_END})", _I)
_NEVER_EXCEED = re.compile(rf"\bnever{_SP}(?:to{_SP})?exceed{_SP}(?P<rest>{_UNTIL_SENTENCE_END})", _I)
_MUST = re.compile(
    rf"{_SUBJECT}{_SP}(?P<modal>must|shall){_SP}(?!not\b|never\b|have{_SP}(?!(?:a|an|the|at{_SP}least|no{_SP}more|\d+)\b)|['’]ve\b|be{_SP}(?!able\b|\w+ed\b|\w+en\b)|"
    rf"(?:feel|love|know|think|miss|say|admit)\b)(?P<rest>{_UNTIL_SENTENCE_END})", _I)


def _subject_ok(source: Source, m: re.Match[str]) -> bool:
    """The subject opens its sentence (after a bullet) and names a thing."""
    sentence_start, _ = source.sentence(m.start())
    lead = source.text[sentence_start : m.start("subject")]
    words = m.group("subject").lower().replace("’", "'").split()
    return (not lead.strip(" \t-*•0123456789.)") and not (_PRONOUNS & set(words))
            and words[0] not in ("and", "but", "so") and words[-1] not in _NOT_SUBJECT_ENDS)


def _musts(source: Source) -> Iterator[MemoryCandidate]:
    text = source.text
    for m in _MUST_NOT.finditer(text):
        end = m.start("rest") + len(m.group("rest").rstrip())
        if _subject_ok(source, m) and stated(source, m.start(), end):
            yield _entity(source, "constraint.must_not", "constraint", text[m.start() : end], (m.start(), end), 0.8)
    for m in _NEVER_EXCEED.finditer(text):
        sentence_start, _ = source.sentence(m.start())
        end = m.start("rest") + len(m.group("rest").rstrip())
        if stated(source, sentence_start, end):
            yield _entity(source, "constraint.never_exceed", "constraint", text[sentence_start:end], (sentence_start, end), 0.8)
    for m in _MUST.finditer(text):
        end = m.start("rest") + len(m.group("rest").rstrip())
        if _subject_ok(source, m) and stated(source, m.start(), end):
            confidence = 0.85 if m.group("modal").lower() == "shall" else 0.75
            yield _entity(source, "requirement.must", "requirement", text[m.start() : end], (m.start(), end), confidence)


DECISION_RULES = (_headings, _decisions, _musts)
