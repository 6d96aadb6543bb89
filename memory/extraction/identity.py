"""Who the speaker is (type identity: name, employer, home, hometown, age, birthday,
relationship status, children) and the lasting facts an agent must respect about them
(type fact: allergies, diet, pets).

Allergies and diet are facts rather than identity: they do not say who someone is, they
say what to be careful about, and they are the memories whose loss does harm, hence their
high importance. Several allergies or pets can hold at once, so their attribute is shared
("allergy", "pet") and only the opposite polarity on the same value contradicts; one diet
or one relationship status holds at a time.

Name, preferred name, employer, home and role come from the profile rules of
`entities.extraction`, a sibling pure library with the same precision rules (capitalised
names, first person, present tense), so the two never disagree on what "I work at Acme"
says. Here they only become memories, with the guards every memory rule applies."""

from __future__ import annotations

import re
from collections.abc import Iterator

from entities.extraction import extract_profile
from memory.extraction._common import (
    _I,
    _IM,
    _SP,
    SPEAKER,
    Source,
    article,
    candidate,
    normal_value,
    phrase_at,
    refers_to_context,
    stated,
)
from memory.extraction._types import MemoryCandidate
from memory.timeexpr import MONTHS, dated

RULES = {
    "identity.name": "“my name is X”: the speaker's name.",
    "identity.preferred_name": "“call me X”, “I go by X”: what the speaker likes to be called.",
    "identity.employer": "“I work at Acme”, “I'm a nurse at St. Mary's”: a capitalised employer.",
    "identity.location": "“I live in Berlin”, “I'm based in London”: where the speaker lives now.",
    "identity.role": "“I'm a teacher”, “I work as a designer”: a job from a fixed list of titles.",
    "identity.hometown": "“I'm from Sweden”, “I grew up in Ohio”, “I was born in Lagos”.",
    "identity.age": "“I'm 34 years old”, “I just turned 30”.",
    "identity.birthday": "“my birthday is on June 5th”, “I was born in 1990”.",
    "identity.relationship": "“I'm married”, “I'm single”, “we got engaged last week”.",
    "identity.children": "“I'm a mom of two”, “I have three kids”, “I don't have kids”.",
    "fact.allergy": "“I'm allergic to peanuts”, “I have a shellfish allergy”.",
    "fact.diet": "“I'm vegetarian”, “I went vegan last year”.",
    "fact.pet": "“I have a dog named Luna”, “my cat Oliver”.",
}


# --- from the profile rules -------------------------------------------------------------------

def _role_text(role: str) -> str:
    return f"{SPEAKER} is {article(role)} {role}"


_PROFILE = {
    # key: (importance, text)
    "name": (0.9, lambda v: f"{SPEAKER}'s name is {v}"),
    "preferred_name": (0.85, lambda v: f"{SPEAKER} goes by {v}"),
    "employer": (0.8, lambda v: f"{SPEAKER} works at {v}"),
    "location": (0.8, lambda v: f"{SPEAKER} lives in {v}"),
    "role": (0.7, _role_text),
}


def _profile(source: Source) -> Iterator[MemoryCandidate]:
    for found in extract_profile(source.text):
        if found.key not in _PROFILE or not stated(source, found.start, found.end):
            continue
        importance, text = _PROFILE[found.key]
        yield candidate(source, f"identity.{found.key}", "identity", text(found.value), (found.start, found.end),
                        attribute=found.key, value=normal_value(found.value), confidence=found.confidence,
                        importance=importance)


# --- names of places and pets ------------------------------------------------------------------

_NAME_WORD = re.compile(r"[A-Z][\w'’\-]*(?:\.[A-Z][\w'’\-]*)*")
_CONNECTOR = re.compile(r"[ \t]+(?:(?:of|de|del|da|la|le|upon|on|am|an|der)[ \t]+)?")
_NOT_NAMES = frozenset(
    """I I'm I've I'll I'd A An And But Or So Then My Your His Her Our Their We You He She It It's They This That
    These Those There Here Is Was Are Were Be Oh Hey Hi Hello Yes Yeah No Not Thanks Thank Please OK Okay Lol LOL
    Haha Wow Now Today Tonight Tomorrow Yesterday Last Next Soon Also Just Maybe Sure Well Anyway Btw BTW Again
    If Because When Where What Who Why How The Monday Tuesday Wednesday Thursday Friday Saturday Sunday""".split()
) | frozenset(MONTHS)


def _name_at(text: str, pos: int, *, max_words: int = 4) -> tuple[int, int] | None:
    """A capitalised name at `pos`: "Sweden", "New York", "Isle of Man" (not "Hey", not a
    month); a possessive ends it ("Luna's bowl" -> "Luna")."""
    spans: list[tuple[int, int]] = []
    at = pos
    while len(spans) < max_words:
        match = _NAME_WORD.match(text, at)
        if not match or match.group().rstrip("'’") in _NOT_NAMES:
            break
        word = match.group()
        if word.endswith(("'s", "’s")):
            spans.append((match.start(), match.end() - 2))
            break
        spans.append(match.span())
        gap = _CONNECTOR.match(text, match.end())
        if not gap:
            break
        at = gap.end()
    if not spans:
        return None
    return spans[0][0], spans[-1][1]


_THE = re.compile(r"the[ \t]+")  # lowercase: "The Hague" keeps its article


def _skip_the(text: str, pos: int) -> int:
    match = _THE.match(text, pos)
    return match.end() if match else pos


# --- hometown ---------------------------------------------------------------------------------

_HOMETOWN_CUES = (
    (re.compile(rf"{_IM}{_SP}from{_SP}", _I), "is from", 0.7),  # may be a team or a company: lower
    (re.compile(rf"\bI{_SP}(?:originally{_SP})?come{_SP}from{_SP}", _I), "is from", 0.75),
    (re.compile(rf"{_IM}{_SP}originally{_SP}from{_SP}", _I), "is from", 0.85),
    (re.compile(rf"\bI{_SP}grew{_SP}up{_SP}in{_SP}", _I), "grew up in", 0.85),
    (re.compile(rf"\bI{_SP}was{_SP}born{_SP}(?:and{_SP}raised{_SP})?in{_SP}", _I), "was born in", 0.85),
)


def _hometown(source: Source) -> Iterator[MemoryCandidate]:
    text = source.text
    for pattern, verb, confidence in _HOMETOWN_CUES:
        for m in pattern.finditer(text):
            place = _name_at(text, _skip_the(text, m.end()))
            if place is None or not stated(source, m.start(), place[1]):
                continue
            name = text[place[0] : place[1]]
            yield candidate(source, "identity.hometown", "identity", f"{SPEAKER} {verb} {name}", (m.start(), place[1]),
                            attribute="hometown", value=normal_value(name), confidence=confidence, importance=0.6)


# --- age and birthday ------------------------------------------------------------------------

_AGE = re.compile(rf"{_IM}{_SP}(?P<age>\d{{1,3}})(?:{_SP}years?{_SP}old|{_SP}?y/?o)\b", _I)
_TURNED = re.compile(rf"\bI{_SP}(?:just{_SP}|recently{_SP})?turned{_SP}(?P<age>\d{{1,3}})\b(?![.,]?\d|{_SP}(?:percent|%))", _I)


def _age(source: Source) -> Iterator[MemoryCandidate]:
    for m in _AGE.finditer(source.text):
        age = int(m.group("age"))
        if 0 < age <= 120 and stated(source, m.start(), m.end()):
            yield candidate(source, "identity.age", "identity", f"{SPEAKER} is {age} years old {source.said}", m.span(),
                            attribute="age", value=str(age), confidence=0.9, importance=0.6)
    for m in _TURNED.finditer(source.text):
        age = int(m.group("age"))
        if not (0 < age <= 120 and stated(source, m.start(), m.end())):
            continue
        when = source.time_at(m.end())
        end = when.end if when else m.end()
        told = dated(when, source.text) if when else source.said
        yield candidate(source, "identity.age", "identity", f"{SPEAKER} turned {age} {told}", (m.start(), end),
                        attribute="age", value=str(age), confidence=0.8, importance=0.6, event=when)


_BIRTHDAY = re.compile(rf"\bmy{_SP}birthday{_SP}(?:is|was|['’]s){_SP}", _I)
_BORN = re.compile(rf"\bI{_SP}was{_SP}born{_SP}", _I)


def _birthday(source: Source) -> Iterator[MemoryCandidate]:
    for m in (*_BIRTHDAY.finditer(source.text), *_BORN.finditer(source.text)):
        when = source.time_at(m.end())
        if when is None or not stated(source, m.start(), when.end):
            continue
        day = when.first
        if when.granularity == "day":
            value, said = f"{day.month:02d}-{day.day:02d}", f"on {day.day} {MONTHS[day.month - 1]}"
        elif when.granularity == "month":
            value, said = MONTHS[day.month - 1].lower(), f"in {MONTHS[day.month - 1]}"
        elif when.granularity == "year" and m.re is _BORN and when.first.year == when.last.year:
            yield candidate(source, "identity.birthday", "identity", f"{SPEAKER} was born in {day.year}",
                            (m.start(), when.end), attribute="birth_year", value=str(day.year), confidence=0.9,
                            importance=0.6)
            continue
        else:
            continue  # "my birthday is next week" names no day to remember
        yield candidate(source, "identity.birthday", "identity", f"{SPEAKER}'s birthday is {said}",
                        (m.start(), when.end), attribute="birthday", value=value, confidence=0.9, importance=0.7)


# --- relationship status and children ---------------------------------------------------------

_STATUSES = r"(?P<status>married|single|divorced|engaged|widowed|separated)"
# "I'm engaged in a project" and "I'm single-handedly ..." are not statuses: the word must
# end its clause, or name whom ("married to Sam").
_STATUS_END = (rf"(?=[ \t]*(?:$|[.,;:!?)\n]|{_SP}(?:and|but|so|now|too|again|myself|for|since|with)\b"
               rf"|{_SP}to{_SP}(?:my{_SP}(?:wife|husband|partner)\b|(?-i:[A-Z]))))")
_STATUS_CUES = (
    (re.compile(rf"{_IM}{_SP}(?:(?P<neg>not|no{_SP}longer){_SP})?(?:(?:happily|recently|newly|now|still|also){_SP})?"
                rf"{_STATUSES}{_STATUS_END}", _I), 0.9),
    # "we got engaged last week": a time phrase may follow the news
    (re.compile(rf"\b(?:I|we)(?:{_SP}(?:just|recently|finally))?{_SP}got{_SP}{_STATUSES}\b(?![ \t]*-|{_SP}in\b)", _I), 0.8),
)


_TO = re.compile(rf"{_SP}to{_SP}")


def _spouse(text: str, pos: int) -> tuple[int, str]:
    """ "to Sam" after "I'm married": where the statement ends, and the words to add."""
    to = _TO.match(text, pos)
    name = _name_at(text, to.end(), max_words=3) if to else None
    return (name[1], f" to {text[name[0] : name[1]]}") if name else (pos, "")


def _relationship(source: Source) -> Iterator[MemoryCandidate]:
    for pattern, confidence in _STATUS_CUES:
        for m in pattern.finditer(source.text):
            if not stated(source, m.start(), m.end()):
                continue
            status = m.group("status").lower()
            if "neg" in pattern.groupindex:
                negative = bool(m.group("neg"))
                end, whom = _spouse(source.text, m.end())
                text = f"{SPEAKER} is {'not ' if negative else ''}{status}{whom}"
                yield candidate(source, "identity.relationship", "identity", text, (m.start(), end),
                                attribute="relationship_status", value=status, polarity=-1 if negative else 1,
                                confidence=confidence, importance=0.7)
                continue
            when = next(iter(source.times_in(*source.sentence(m.start()))), None)
            told = dated(when, source.text) if when else source.said
            yield candidate(source, "identity.relationship", "identity", f"{SPEAKER} got {status} {told}", m.span(),
                            attribute="relationship_status", value=status, confidence=confidence, importance=0.7,
                            event=when)


_COUNTS = {"one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8, "nine": 9, "ten": 10}
_N = rf"(?P<n>[1-9]|{'|'.join(_COUNTS)})"
_CHILDREN_CUES = (
    (re.compile(rf"{_IM}{_SP}an?{_SP}(?:(?:proud|busy|single){_SP})?(?:mom|mum|mother|dad|father|parent){_SP}of{_SP}{_N}\b"
                rf"(?!{_SP}(?:dogs|cats|pets))", _I), 0.85),
    (re.compile(rf"\b(?:I|we){_SP}have{_SP}{_N}{_SP}(?:kids|children)\b", _I), 0.85),
    (re.compile(rf"\bI{_SP}(?:don['’]?t|do{_SP}not){_SP}have{_SP}(?:any{_SP})?(?P<none>kids|children)\b", _I), 0.8),
)


def _children(source: Source) -> Iterator[MemoryCandidate]:
    for pattern, confidence in _CHILDREN_CUES:
        for m in pattern.finditer(source.text):
            if not stated(source, m.start(), m.end()):
                continue
            if "none" in pattern.groupindex:
                count, text = 0, f"{SPEAKER} has no children"
            else:
                word = m.group("n").lower()
                count = int(word) if word.isdigit() else _COUNTS[word]
                text = f"{SPEAKER} has {m.group('n')} {'child' if count == 1 else 'children'}"
            yield candidate(source, "identity.children", "identity", text, m.span(), attribute="children",
                            value=str(count), confidence=confidence, importance=0.7)


# --- allergies and diet --------------------------------------------------------------------

_DEGREE = rf"(?:(?:very|really|so|super|severely|deathly|mildly|slightly|also|quite|extremely){_SP})?"
_ALLERGIC = re.compile(rf"{_IM}{_SP}(?:(?P<neg>not){_SP})?{_DEGREE}allergic{_SP}to{_SP}", _I)
_ALLERGY = re.compile(rf"\bI{_SP}have{_SP}an?{_SP}(?:(?:severe|bad|mild|serious){_SP})?(?P<what>[a-z]+(?:{_SP}[a-z]+)?)"
                      rf"{_SP}allergy\b", _I)
# "I have a really bad allergy" names no allergen.
_NOT_ALLERGENS = frozenset("really very so bad severe mild serious terrible awful slight little huge big strong weird new "
                           "minor major small".split())


def _allergies(source: Source) -> Iterator[MemoryCandidate]:
    text = source.text
    for m in _ALLERGIC.finditer(text):
        what = phrase_at(source, m.end(), max_words=4)
        if what is None or refers_to_context(text[what[0] : what[1]]) or not stated(source, m.start(), what[1]):
            continue
        negative = bool(m.group("neg"))
        allergen = " ".join(text[what[0] : what[1]].split())
        yield candidate(source, "fact.allergy", "fact", f"{SPEAKER} is {'not ' if negative else ''}allergic to {allergen}",
                        (m.start(), what[1]), attribute="allergy", value=normal_value(allergen),
                        polarity=-1 if negative else 1, confidence=0.9, importance=0.95)
    for m in _ALLERGY.finditer(text):
        what = m.group("what")
        if _NOT_ALLERGENS & set(what.lower().split()) or refers_to_context(what) or not stated(source, m.start(), m.end()):
            continue
        yield candidate(source, "fact.allergy", "fact", f"{SPEAKER} has {article(what)} {what} allergy", m.span(),
                        attribute="allergy", value=normal_value(what), confidence=0.85, importance=0.95)


_DIETS = r"(?P<diet>vegetarian|vegan|pescatarian|pescetarian|keto|paleo|kosher|halal|gluten[- ]free)"
_DIET_END = rf"(?=[ \t]*(?:$|[.,;:!?)\n]|{_SP}(?:and|but|so|now|too|myself|since|for|anymore|again)\b))"
_DIET_CUES = (
    (re.compile(rf"{_IM}{_SP}(?:(?P<neg>not|no{_SP}longer){_SP})?(?:(?:now|also|still|strictly|fully|mostly){_SP})?"
                rf"(?:an?{_SP})?{_DIETS}{_DIET_END}", _I), 0.9),
    (re.compile(rf"\b(?:I|we)(?:{_SP}(?:just|recently|finally))?{_SP}(?:went|became|turned){_SP}{_DIETS}\b(?![ \t]*-)", _I), 0.8),
)


def _diet(source: Source) -> Iterator[MemoryCandidate]:
    for pattern, confidence in _DIET_CUES:
        for m in pattern.finditer(source.text):
            if not stated(source, m.start(), m.end()):
                continue
            diet = m.group("diet").lower().replace(" ", "-")
            if "neg" in pattern.groupindex:
                negative = bool(m.group("neg"))
                yield candidate(source, "fact.diet", "fact", f"{SPEAKER} is {'not ' if negative else ''}{diet}", m.span(),
                                attribute="diet", value=diet, polarity=-1 if negative else 1, confidence=confidence,
                                importance=0.85)
                continue
            when = next(iter(source.times_in(*source.sentence(m.start()))), None)
            told = dated(when, source.text) if when else source.said
            yield candidate(source, "fact.diet", "fact", f"{SPEAKER} went {diet} {told}", m.span(), attribute="diet",
                            value=diet, confidence=confidence, importance=0.85, event=when)


# --- pets ---------------------------------------------------------------------------------

_PETS = (rf"(?P<pet>dog|puppy|pup|cat|kitten|kitty|bird|parrot|rabbit|bunny|hamster|guinea{_SP}pig|goldfish|fish|turtle"
         rf"|tortoise|horse|pony|snake|lizard|gecko|ferret|rat|mouse)")
_PET_ADJECTIVES = rf"(?:(?:new|little|sweet|rescue|baby|old|\d{{1,2}}[- ]year[- ]old){_SP})?"
_PET_CUES = (
    (re.compile(rf"\b(?:I|we){_SP}(?:(?:just|recently|also){_SP})?(?:have|got|adopted|own){_SP}an?{_SP}{_PET_ADJECTIVES}"
                rf"{_PETS}{_SP}(?:named|called){_SP}", _I), 0.85),
    (re.compile(rf"\bmy{_SP}{_PET_ADJECTIVES}{_PETS}(?:{_SP}is{_SP}(?:named|called)|['’]s{_SP}name{_SP}is){_SP}", _I), 0.85),
    (re.compile(rf"\bmy{_SP}{_PET_ADJECTIVES}{_PETS}{_SP}", _I), 0.7),  # "my dog Luna": the name must follow
)


def _pets(source: Source) -> Iterator[MemoryCandidate]:
    text = source.text
    for pattern, confidence in _PET_CUES:
        for m in pattern.finditer(text):
            name = _name_at(text, m.end(), max_words=2)
            if name is None or not stated(source, m.start(), name[1]):
                continue
            pet = " ".join(m.group("pet").lower().split())
            called = text[name[0] : name[1]]
            yield candidate(source, "fact.pet", "fact", f"{SPEAKER} has {article(pet)} {pet} named {called}",
                            (m.start(), name[1]), attribute="pet", value=normal_value(called), confidence=confidence,
                            importance=0.6)


IDENTITY_RULES = (_profile, _hometown, _age, _birthday, _relationship, _children, _allergies, _diet, _pets)
