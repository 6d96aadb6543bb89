"""Warnings the speaker gives from experience (type censor): "never deploy on a Friday
again", "don't ever force-push to main", "do not run migrations in production", "lesson
learned: don't trust the cache", "avoid the staging DB because it's shared". The censor's
trigger is what it guards against; an agent about to do that gets the warning.

Chat is full of warm imperatives that guard against nothing: "don't ever give up", "never
stop dreaming", "don't ever change". Those verbs are refused, and so is a warning that
speaks to the listener ("never doubt yourself again"). A past "I never saw him again" is
a story, so "never … again" counts only as a promise ("I'll never …", "I'm never going to
…") or a command at the start of a sentence."""

from __future__ import annotations

import re
from collections.abc import Iterator

from memory.extraction._common import _I, _SP, SPEAKER, Source, candidate, normal_value, stated, third_person
from memory.extraction._types import MemoryCandidate

RULES = {
    "censor.never": "“I'll never X again”, “Never X again”.",
    "censor.dont_ever": "“Don't ever X”, “Do not ever X”.",
    "censor.in_production": "“Don't / never X in production” (or on main).",
    "censor.lesson": "“Lesson learned: don't / never X”.",
    "censor.avoid": "“Avoid X because Y” (or “we avoid X because Y”).",
}

_SENTENCE_START = r"(?:^|(?<=[.!?:\n])[ \t]*|(?<=[.!?][\"'”’)])[ \t]*)[ \t]*(?:please[ \t,]+)?"
_TRIGGER = r"(?P<trigger>[^\n.;!?]{3,100}?)"
# Encouragement and feelings, not hazards: "don't ever give up", "never feel alone again".
_WARM = re.compile(r"(?:give[ \t]+up|stop|change|forget|doubt|lose|let|underestimate|settle|feel|be|want|wanna|see|"
                   r"look[ \t]+back|quit|regret|hesitate|apologi[sz]e|compare|worry|fear|miss|go[ \t]+back|take[ \t]+\w+[ \t]+for[ \t]+granted)\b", _I)
_PAST_VERB = re.compile(r"\w{3,}ed\b|(?:went|saw|got|had|did|made|took|came|left|heard|spoke|met|told|said|knew)\b", _I)

_CLAUSE_END = r"(?=[\n.;!?]|$)"
_PROMISE = (rf"(?:\b(?:I|we)(?:['’]ll|{_SP}will|{_SP}shall){_SP}never|\b(?:I['’]m|I{_SP}am|we['’]re|we{_SP}are){_SP}never{_SP}going{_SP}to"
            rf"|{_SENTENCE_START}never)")
_CUES = (
    ("censor.lesson", re.compile(rf"\blessons?(?:{_SP}(?:learned|learnt))?[ \t]*:[ \t]*(?:don['’]t|do{_SP}not|never){_SP}(?:ever{_SP})?{_TRIGGER}{_CLAUSE_END}", _I), 0.9),
    ("censor.in_production", re.compile(
        rf"{_SENTENCE_START}(?:(?:we|I){_SP}(?:should{_SP})?)?(?:don['’]t|do{_SP}not|never|must{_SP}not){_SP}(?:ever{_SP})?"
        rf"(?P<trigger>[^\n.;!?]{{3,80}}?{_SP}(?:in|on|against|to|into){_SP}"
        rf"(?:prod|production|the{_SP}production{_SP}\w+|main|master)\b)", _I), 0.85),
    ("censor.never", re.compile(rf"{_PROMISE}{_SP}(?:ever{_SP})?{_TRIGGER}{_SP}again\b", _I), 0.75),
    ("censor.dont_ever", re.compile(rf"{_SENTENCE_START}(?:don['’]t|do{_SP}not){_SP}ever{_SP}{_TRIGGER}{_CLAUSE_END}", _I), 0.7),
)
_AVOID = re.compile(rf"(?:{_SENTENCE_START}|\bwe{_SP}(?:always{_SP})?)avoid{_SP}(?P<trigger>[^\n.;!?,]{{3,60}}?)"
                    rf"{_SP}(?:because|since|as|—|-|:){_SP}(?P<why>[^\n.;!?]{{3,}})", _I)


def _trigger(text: str) -> str | None:
    """The hazard, in the speaker's words made standalone; None for warm words or a
    warning about the listener."""
    trigger = " ".join(text.strip(" \t,").split())
    if _WARM.match(trigger) or _PAST_VERB.match(trigger):
        return None
    return third_person(trigger)


def _censors(source: Source) -> Iterator[MemoryCandidate]:
    for rule, pattern, confidence in _CUES:
        for m in pattern.finditer(source.text):
            trigger = _trigger(m.group("trigger"))
            if not trigger or not stated(source, m.start("trigger"), m.end()):
                continue
            yield candidate(source, rule, "censor", f"{SPEAKER} warns: never {trigger}", m.span(),
                            value=normal_value(trigger), confidence=confidence, importance=0.9, trigger=trigger)
    for m in _AVOID.finditer(source.text):
        trigger, why = _trigger(m.group("trigger")), third_person(m.group("why").strip())
        if not trigger or not why or not stated(source, m.start("trigger"), m.end()):
            continue
        yield candidate(source, "censor.avoid", "censor", f"{SPEAKER} warns: avoid {trigger} because {why}", m.span(),
                        value=normal_value(trigger), confidence=0.7, importance=0.9, trigger=trigger)


CENSOR_RULES = (_censors,)
