"""The privacy filter: what may be stored, and what may be shown.

Pure Python, no Django, so it runs in microseconds and is property-tested:

- `filter_for_storage` is the write path. `<private>…</private>` content is removed first,
  then any secret left makes it raise `SecretFound`, so nothing is stored at all.
- `redact` is the read path: emails, phone numbers, IP addresses and secrets are masked.
- `find_secrets` and `strip_private` are the two halves, exposed for callers that need them.
"""

from __future__ import annotations

from core.privacy.private import strip_private
from core.privacy.redact import redact
from core.privacy.results import FilteredText, SecretFound, SecretMatch
from core.privacy.rules import RULES, find_secrets

__all__ = [
    "RULES",
    "FilteredText",
    "SecretFound",
    "SecretMatch",
    "filter_for_storage",
    "find_secrets",
    "redact",
    "strip_private",
]


def filter_for_storage(text: str) -> FilteredText:
    """The text that may be stored. A secret inside a private block is removed with it;
    any other secret refuses the whole text rather than storing part of it."""
    filtered = strip_private(text)
    secrets = find_secrets(filtered.text)
    if secrets:
        raise SecretFound(secrets[0])
    return filtered
