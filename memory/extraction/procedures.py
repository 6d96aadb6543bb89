"""How to do something (type procedure): a goal with its ordered steps.

Three shapes are recognised, each needing an explicit goal ("to deploy", "how to reset
the router", "release checklist"), since a list without one says nothing reusable:
- a heading line ending in a colon followed by two or more numbered or bulleted lines,
- one line: "To deploy: 1. build 2. push 3. restart" or "To reset it: unplug it, wait
  30 seconds, plug it back in" (three or more comma-separated steps),
- "To deploy, first run the tests, then build, finally push".
A story told in order ("first I went to the store, then we ...") is not a procedure: a
step that starts with someone doing something is narrative, and the rule stays quiet."""

from __future__ import annotations

import re
from collections.abc import Iterator

from memory.extraction._common import _I, SPEAKER, Source, candidate, normal_value, stated, third_person
from memory.extraction._types import MemoryCandidate

RULES = {
    "procedure.steps": "A “to X:” / “steps to X:” / “X checklist:” heading followed by ≥2 numbered or bulleted lines.",
    "procedure.inline": "“To X: 1. … 2. …” or “To X: step, step, step” on one line.",
    "procedure.sequence": "“To X, first A, then B, finally C”.",
}

_MAX_STEP_WORDS = 20
# "To be honest:", "To my surprise," and "To sum up:" introduce no procedure.
_NOT_GOALS = re.compile(r"(?:be[ \t]+(?:honest|fair|clear|sure)|sum[ \t]+up|summari[sz]e|clarify|put[ \t]+it|answer|"
                        r"me\b|my\b|your\b|the\b|a\b|an\b|this\b|that\b|be[ \t]+continued|whom)", _I)
_GOAL = r"(?P<goal>[a-z][\w'’\-]*(?:[ \t]+[\w'’\-/.]+){0,7}?)"
_HEADING = re.compile(
    rf"^[ \t]*(?:#+[ \t]*)?(?:(?:here(?:['’]s|[ \t]+is|[ \t]+are)[ \t]+)?(?:the[ \t]+)?(?:how|steps?|instructions|procedure|process)"
    rf"[ \t]+(?:to|for)|to)[ \t]+{_GOAL}[ \t]*:[ \t]*$"
    rf"|^[ \t]*(?:#+[ \t]*)?(?P<noun>[\w'’\-]+(?:[ \t]+[\w'’\-]+){{0,3}}[ \t]+(?:steps|procedure|checklist|runbook|instructions))[ \t]*:[ \t]*$",
    _I)
_ITEM = re.compile(r"^[ \t]*(?:\d{1,2}[.)]|[-*•]|step[ \t]+\d{1,2}[.:)]?)[ \t]+(?P<step>\S[^\n]*?)[ \t]*$", _I)
_INLINE = re.compile(
    rf"(?:^|(?<=[.!?])[ \t]+|(?<=\n))(?:(?:here(?:['’]s|[ \t]+is)[ \t]+)?(?:how|steps?)[ \t]+to|to)[ \t]+{_GOAL}[ \t]*"
    rf"(?::[ \t]*(?P<body>[^\n]+)|,[ \t]*(?P<sequence>first\b[^\n]+))", _I)
_NUMBERED = re.compile(r"(?:^|[ \t])\d{1,2}[.)][ \t]+")
_LIST_SEPARATOR = re.compile(r"[ \t]*(?:;|,(?:[ \t]*(?:and[ \t]+)?then\b)?|,?[ \t]+(?:and[ \t]+)?then\b)[ \t]*", _I)
_SEQUENCE = re.compile(r"^first\b[ \t,]*|[ \t]*,?[ \t]*(?:and[ \t]+)?(?:then|finally|lastly|after[ \t]+that)\b[ \t,]*", _I)
# "I went", "we took", "she said": a story, not an instruction.
_NARRATIVE = re.compile(r"^(?:I|we|he|she|they|my|our|it)\b", _I)


def _clean_steps(pieces: list[str]) -> list[str] | None:
    steps = [p.strip(" \t.,;") for p in pieces]
    steps = [s for s in steps if s]
    if len(steps) < 2 or any(len(s.split()) > _MAX_STEP_WORDS or _NARRATIVE.match(s) for s in steps):
        return None
    return steps


def _procedure(source: Source, rule: str, goal: str | None, noun: str | None, steps: list[str],
               span: tuple[int, int], confidence: float) -> MemoryCandidate:
    title = f"how to {goal}" if goal else (noun or "").lower()
    intro = f"To {goal}" if goal else (noun or "")[:1].upper() + (noun or "")[1:]
    listed = f"{intro}: " + " ".join(f"{i}) {step}" for i, step in enumerate(steps, 1))
    # Instructions often say "you"; that reader is whoever follows them, so keep it.
    rendered = third_person(listed) or listed
    return candidate(source, rule, "procedure", f"{rendered} (as {SPEAKER} explained)", span,
                     attribute=f"procedure:{normal_value(title)}", value=normal_value(" ; ".join(steps)),
                     confidence=confidence, importance=0.7, name=title, steps=steps)


def _goal_ok(goal: str | None) -> bool:
    return goal is None or not _NOT_GOALS.match(goal)


def _items_after(lines: list[str], index: int) -> list[tuple[int, re.Match[str]]]:
    """The numbered or bulleted lines right under line `index` (blank lines before the
    first one and between them are allowed), with their line numbers."""
    items: list[tuple[int, re.Match[str]]] = []
    for number in range(index + 1, len(lines)):
        item = _ITEM.match(lines[number])
        if item:
            items.append((number, item))
        elif lines[number].strip():
            break
    return items


def _listed(source: Source) -> Iterator[MemoryCandidate]:
    """A heading line and the numbered or bulleted lines under it."""
    lines = source.text.split("\n")
    offsets = [0]
    for line in lines:
        offsets.append(offsets[-1] + len(line) + 1)
    for index, line in enumerate(lines):
        heading = _HEADING.match(line)
        if not heading or not _goal_ok(heading.group("goal")):
            continue
        items = _items_after(lines, index)
        steps = _clean_steps([item.group("step") for _, item in items])
        if steps is None or not stated(source, offsets[index], offsets[index] + len(line)):
            continue
        last_line, last_item = items[-1]
        yield _procedure(source, "procedure.steps", heading.group("goal"), heading.group("noun"), steps,
                         (offsets[index], offsets[last_line] + last_item.end("step")), 0.85)


def _inline(source: Source) -> Iterator[MemoryCandidate]:
    for m in _INLINE.finditer(source.text):
        goal = " ".join(m.group("goal").split())
        if not _goal_ok(goal):
            continue
        if m.group("sequence"):
            rule, body, confidence = "procedure.sequence", m.group("sequence"), 0.7
            pieces = _SEQUENCE.split(body)
            if not re.search(r"\b(?:then|finally|lastly)\b", body, _I):
                continue
        else:
            rule, body = "procedure.inline", m.group("body")
            numbered = _NUMBERED.split(body)
            if len(numbered) > 2:
                pieces, confidence = numbered[1:], 0.85
            else:
                pieces, confidence = _LIST_SEPARATOR.split(body), 0.7
                if len([p for p in pieces if p.strip(" .")]) < 3:
                    continue
        steps = _clean_steps(pieces)
        end = m.end() - (len(body) - len(body.rstrip()))
        if steps is None or not stated(source, m.start("goal"), end):
            continue
        yield _procedure(source, rule, goal, None, steps, (m.start(), end), confidence)


PROCEDURE_RULES = (_listed, _inline)
