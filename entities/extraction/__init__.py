"""Deterministic, named rules that find what a speaker states about themselves: keyed
profile facts ("my email is …", "I'm on Pacific time") and relationships from the speaker
to someone or something else ("I work at Acme", "my sister Jane").

Pure Python, no Django, so the rules run in microseconds and are property-tested.

Every candidate goes to a person for review, so the rules choose precision over recall: a
cue fires only on first-person present-tense wording, names must be capitalised ("I work
at home" is not an employer), job titles come from a fixed list ("I'm a big fan" is not a
role), and a rule that is unsure stays quiet. Free-form statements ("I love hiking") are
memories, not profile values, and are left alone.

Rule names are stable, `profile.<key>.<cue>` and `relationship.<predicate>.<cue>`, so a
reviewer (and `ProfileValue.source = "rule:<name>"`) can tell which wording produced a
candidate. Relations between two named third parties are out of scope: the speaker is
always the subject.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator

from entities.extraction._common import PROFILE_KEYS, Candidate, ProfileCandidate, RelationCandidate
from entities.extraction import profile, relationships
from entities.extraction.profile import _emails, _levels, _phones, _styles, _timezones
from entities.extraction.profile import _names as _stated_names
from entities.extraction.relationships import _employers, _locations, _managing, _memberships, _people, _roles
from entities.kinds import PREDICATES  # a pure module too: no Django

# The predicate registry (name -> (description, functional)) lives in entities.kinds.

__all__ = [
    "PREDICATES",
    "PROFILE_KEYS",
    "Candidate",
    "ProfileCandidate",
    "RULES",
    "RelationCandidate",
    "extract_profile",
    "extract_relationships",
]

# Rule family -> what it looks for, in plain words (the review queue's "why").
RULES: dict[str, str] = {**profile.RULES, **relationships.RULES}

# --- entry points ---------------------------------------------------------------------------

_RULES: tuple[Callable[[str], Iterable[Candidate]], ...] = (
    _emails, _phones, _stated_names, _roles, _employers, _memberships, _managing, _people, _locations,
    _timezones, _styles, _levels,
)


def _candidates(text: str) -> Iterator[Candidate]:
    for rule in _RULES:
        yield from rule(text)


def _best(candidates: Iterable[Candidate], identity: Callable[[Candidate], tuple[str, ...]]) -> list[Candidate]:
    """One candidate per fact: the most confident wording, the earliest on a tie."""
    best: dict[tuple[str, ...], Candidate] = {}
    for candidate in candidates:
        key = identity(candidate)
        current = best.get(key)
        if current is None or (-candidate.confidence, candidate.start) < (-current.confidence, current.start):
            best[key] = candidate
    return sorted(best.values(), key=lambda c: (c.start, c.end, c.rule))


def extract_profile(text: str) -> list[ProfileCandidate]:
    """Keyed facts the speaker states about themselves, one per (key, value)."""
    found = (c for c in _candidates(text) if isinstance(c, ProfileCandidate))
    return _best(found, lambda c: (c.key, c.value.casefold()))  # type: ignore[return-value,union-attr]


def extract_relationships(text: str) -> list[RelationCandidate]:
    """Relationships from the speaker to someone or something, one per (predicate, object)."""
    found = (c for c in _candidates(text) if isinstance(c, RelationCandidate))
    return _best(found, lambda c: (c.predicate, c.object_name.casefold()))  # type: ignore[return-value,union-attr]
