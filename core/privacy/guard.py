"""Finding a secret anywhere in a value about to be stored: a string, or the keys and
strings of nested lists and dicts (JSON metadata, scratchpad state, aliases, steps).

The walk keeps its own stack instead of recursing, so no nesting depth can exhaust
Python's recursion limit; the work is linear in the size of the value."""

from __future__ import annotations

import json
from typing import Any

from core.privacy.private import strip_private
from core.privacy.results import SecretMatch
from core.privacy.rules import find_secrets


def _secret_in_text(text: str, *, private_allowed: bool) -> SecretMatch | None:
    # Where the service removes <private> blocks before storing, a secret inside one is
    # never stored; everywhere else the text is stored as given, so every secret counts.
    if private_allowed:
        text = strip_private(text).text
    found = find_secrets(text)
    return found[0] if found else None


def first_secret(value: Any, *, private_allowed: bool = False) -> tuple[str, SecretMatch] | None:
    """The first secret found and where: `""` for the value itself, `"a.b[2]"` inside it.

    A dict entry with a string value is scanned as the JSON `{"key": "value"}`, as the
    stored JSON reads, so `{"api_key": "…"}` is recognised by its name like `api_key: …`."""
    stack: list[tuple[str, Any]] = [("", value)]
    while stack:
        path, item = stack.pop()
        if isinstance(item, str):
            match = _secret_in_text(item, private_allowed=private_allowed)
            if match:
                return path, match
        elif isinstance(item, dict):
            for key, child in reversed(list(item.items())):
                where = f"{path}.{key}" if path else str(key)
                if isinstance(child, str):
                    stack.append((where, json.dumps({str(key): child}, ensure_ascii=False)))
                else:
                    stack.append((where, str(key)))
                    stack.append((where, child))
        elif isinstance(item, (list, tuple)):
            stack.extend((f"{path}[{index}]", child) for index, child in reversed(list(enumerate(item))))
    return None
