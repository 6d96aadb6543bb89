"""The values the privacy filter hands back. None of them ever holds a secret's text."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class SecretMatch:
    rule: str
    description: str
    start: int
    end: int


@dataclass(frozen=True)
class FilteredText:
    text: str
    private_removed: bool


class SecretFound(ValueError):
    """Raised instead of storing a text that holds a secret.

    The message names the rule and where it matched, never the matched value: it ends up
    in API error bodies, logs and audit rows."""

    def __init__(self, match: SecretMatch):
        self.match = match
        super().__init__(
            f"The text contains {match.description} (rule {match.rule}, "
            f"characters {match.start}-{match.end}); remove it or wrap it in <private>…</private>."
        )
