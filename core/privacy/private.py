"""Removing `<private>…</private>` blocks before anything is stored.

Whatever is unclear resolves towards removing more: an unclosed `<private>` hides the rest
of the text, nested blocks hide everything up to the outermost close, and tags that only
appear once others are removed (`<priv<private>x</private>ate>`) are removed as well."""

from __future__ import annotations

import re

from core.privacy.results import FilteredText

_TAG = re.compile(r"<\s*(?P<close>/)?\s*private\b[^<>]{0,200}>", re.IGNORECASE)
_NO_SPACE_BEFORE = tuple(".,;:!?)]}")
_NO_SPACE_AFTER = tuple("([{")


def _kept_pieces(text: str) -> list[str]:
    """The text outside private blocks, as the pieces between removed blocks."""
    pieces: list[str] = []
    depth = 0
    kept_from = 0
    for tag in _TAG.finditer(text):
        if depth == 0:
            pieces.append(text[kept_from : tag.start()])
        if tag.group("close"):
            depth = max(depth - 1, 0)  # a stray closing tag is simply dropped
        elif not tag.group().rstrip(">").rstrip().endswith("/"):  # <private/> hides nothing
            depth += 1
        if depth == 0:
            kept_from = tag.end()
    pieces.append(text[kept_from:] if depth == 0 else "")
    return pieces


def _join(left: str, right: str) -> str:
    """Close the gap a removed block leaves: one space between words, no blank line where
    a block filled whole lines, nothing dangling at the start or end of the text."""
    if not left.strip():
        return right.lstrip()
    if not right.strip():
        return left.rstrip()
    left_trimmed, right_trimmed = left.rstrip(" \t"), right.lstrip(" \t")
    if left_trimmed.endswith("\n") and right_trimmed.startswith("\n"):
        return left_trimmed + right_trimmed.lstrip("\n")
    if left_trimmed.endswith("\n") or right_trimmed.startswith("\n"):
        return left_trimmed + right_trimmed
    had_space = left_trimmed != left or right_trimmed != right
    if not had_space or right_trimmed.startswith(_NO_SPACE_BEFORE) or left_trimmed.endswith(_NO_SPACE_AFTER):
        return left_trimmed + right_trimmed
    return f"{left_trimmed} {right_trimmed}"


def strip_private(text: str) -> FilteredText:
    removed = False
    while _TAG.search(text):
        removed = True
        pieces = _kept_pieces(text)
        text = pieces[0]
        for piece in pieces[1:]:
            text = _join(text, piece)
    return FilteredText(text=text, private_removed=removed)
