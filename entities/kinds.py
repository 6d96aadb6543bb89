"""The entity kind registry (DESIGN.md): who-kinds can send messages and hold identities;
what-kinds are the things the team's memory is about. Apps may register more."""

from __future__ import annotations

WHO_KINDS: dict[str, str] = {
    "person": "A human.",
    "agent": "An AI agent or bot.",
    "service": "A system that sends or receives messages (CI, a monitor, a webhook).",
    "organisation": "A company, team or group.",
}

WHAT_KINDS: dict[str, str] = {
    "project": "A body of work.",
    "subsystem": "A major part of a project.",
    "component": "A piece of a subsystem.",
    "requirement": "Something that must hold.",
    "constraint": "A limit the work must respect.",
    "decision": "A choice that was made, with its reasons.",
    "fact": "A structured fact worth its own page.",
    "parameter": "A named value with a unit.",
    "place": "A city, country or other location.",
}


def register_kind(name: str, description: str, *, who: bool = False) -> None:
    (WHO_KINDS if who else WHAT_KINDS)[name] = description


def all_kinds() -> list[str]:
    return [*WHO_KINDS, *WHAT_KINDS]


def is_who_kind(name: str) -> bool:
    return name in WHO_KINDS


# Relationship predicates: name -> (description, functional). A functional predicate holds
# one object at a time for a subject, so a new object supersedes the old (seed 000).
PREDICATES: dict[str, tuple[str, bool]] = {
    "works_at": ("employed by an organisation", True),
    "lives_in": ("lives in a place", True),
    "reports_to": ("reports to a manager", True),
    "part_of": ("is a part of a larger whole", True),
    "member_of": ("belongs to a group or team", False),
    "knows": ("knows a person", False),
    "family_of": ("is family of a person", False),
    "manages": ("manages a person or team", False),
    "depends_on": ("needs another thing to work", False),
    "satisfies": ("meets a requirement", False),
    "constrains": ("limits another thing", False),
    "decided_in": ("was decided in a meeting or conversation", True),
}


def register_predicate(name: str, description: str, *, functional: bool = False) -> None:
    PREDICATES[name] = (description, functional)


def is_functional(predicate: str) -> bool:
    return PREDICATES[predicate][1]
