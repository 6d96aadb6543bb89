"""What every extraction rule shares: the candidate types, the regex fragments for "I",
"I'm" and a run of blanks, and the guards and builders a rule calls on each match."""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass

PROFILE_KEYS = (
    "email",
    "name",
    "preferred_name",
    "employer",
    "location",
    "timezone",
    "role",
    "communication_style",
    "technical_level",
    "phone",
)


@dataclass(frozen=True)
class ProfileCandidate:
    key: str
    value: str
    quote: str
    start: int
    end: int
    rule: str
    confidence: float


@dataclass(frozen=True)
class RelationCandidate:
    predicate: str
    object_name: str
    object_kind: str
    subject_is_speaker: bool
    quote: str
    start: int
    end: int
    rule: str
    confidence: float
    valid_from_hint: str | None


Candidate = ProfileCandidate | RelationCandidate

_I = re.IGNORECASE
_IM = r"\bI(?:[ \t]*['’]?[ \t]*m|[ \t]+am)"  # I'm, I’m, Im, I am
_SP = r"[ \t]+"

# --- shared helpers ---------------------------------------------------------------------

# A first-person statement inside a condition, a wish or someone else's belief does not
# state a fact: "when I'm a doctor", "if I work at Google", "Mom thinks I'm a nurse". Only
# right before it on its own line (\Z, not $: "$" also matches before a final newline, so a
# line "If" would have made the next line's statement a condition).
_HYPOTHETICAL_BEFORE = re.compile(
    r"\b(?:if|when|whenever|once|until|unless|whether|wish|hope|imagine|pretend|suppose|dream|"
    r"dreamed|dreamt|as\s+if|as\s+though|like|thinks?|thought|believes?|believed|assumes?|"
    r"assumed|says?|said)(?:[ \t]+that)?[ \t]*\Z",
    _I,
)
_NOW_AFTER = re.compile(r"[ \t]*,?[ \t]*(?<!right )now\b", _I)
_SINCE_AFTER = re.compile(r"[ \t]*,?[ \t]*(?:since|as\s+of|nowadays|these\s+days)\b", _I)
_CHANGE_WORD = re.compile(r"\b(?:now|just|recently|moved|relocated|joined|started|new)\b", _I)


def _hypothetical(text: str, start: int) -> bool:
    return bool(_HYPOTHETICAL_BEFORE.search(text[max(0, start - 40) : start]))


def _trailing_now(text: str, end: int) -> int:
    """Where a trailing "now" ends, so the quote keeps the word that marks the change."""
    now = _NOW_AFTER.match(text, end)
    return now.end() if now else end


def _change_hint(text: str, start: int, obj: tuple[int, int], end: int) -> str | None:
    """ "now" when the wording marks a change ("I just joined", "moved", "… now",
    "since May"), so the relationship starts at the message rather than sometime before.
    Only the cue and what follows the object count: "New Relic" is a name, not news."""
    if _CHANGE_WORD.search(text[start : obj[0]]) or _CHANGE_WORD.search(text[obj[1] : end]):
        return "now"
    return "now" if _SINCE_AFTER.match(text, end) else None


def _profile(text: str, key: str, value: str, start: int, end: int, rule: str, confidence: float) -> ProfileCandidate:
    return ProfileCandidate(key, value, text[start:end], start, end, f"profile.{key}.{rule}", confidence)


def _relation(
    text: str,
    predicate: str,
    object_span: tuple[int, int],
    kind: str,
    start: int,
    end: int,
    rule: str,
    confidence: float,
    hint: str | None,
) -> RelationCandidate:
    name = text[object_span[0] : object_span[1]].strip()
    return RelationCandidate(
        predicate, name, kind, True, text[start:end], start, end, f"relationship.{predicate}.{rule}", confidence, hint
    )


def _matches(pattern: re.Pattern[str], text: str) -> Iterator[re.Match[str]]:
    """The statements of a cue, without those in a condition or someone else's belief."""
    for match in pattern.finditer(text):
        if not _hypothetical(text, match.start()):
            yield match
