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


# Where a value sits, as a linked list (parent, segment): building each path as a string
# would copy it once per level, quadratic in the depth.
_Where = tuple[Any, str] | None
_SHOWN_SEGMENTS = 12


def _render(where: _Where) -> str:
    segments: list[str] = []
    while where is not None:
        where, segment = where
        segments.append(segment)
    segments.reverse()
    shown = segments if len(segments) <= _SHOWN_SEGMENTS else ["…", *segments[-_SHOWN_SEGMENTS:]]
    path = ""
    for segment in shown:
        path += segment if segment.startswith("[") or not path else f".{segment}"
    return path


def first_secret(value: Any, *, private_allowed: bool = False) -> tuple[str, SecretMatch] | None:
    """The first secret found and where: `""` for the value itself, `"a.b[2]"` inside it
    (only the innermost levels of a very deep path).

    A dict entry with a string value is scanned as the JSON `{"key": "value"}`, as the
    stored JSON reads, so `{"api_key": "…"}` is recognised by its name like `api_key: …`.
    A key that is itself a secret shows as `<key>` in the path, which errors repeat."""
    stack: list[tuple[_Where, Any]] = [(None, value)]
    while stack:
        where, item = stack.pop()
        if isinstance(item, str):
            match = _secret_in_text(item, private_allowed=private_allowed)
            if match:
                return _render(where), match
        elif isinstance(item, dict):
            for key, child in item.items():
                key_match = _secret_in_text(str(key), private_allowed=False)
                here = (where, "<key>" if key_match else str(key))
                if key_match:
                    return _render(here), key_match
                if isinstance(child, str):
                    match = _secret_in_text(json.dumps({str(key): child}, ensure_ascii=False),
                                            private_allowed=private_allowed)
                    if match:
                        return _render(here), match
                else:
                    stack.append((here, child))
        elif isinstance(item, (list, tuple)):
            stack.extend(((where, f"[{index}]"), child) for index, child in reversed(list(enumerate(item))))
    return None
