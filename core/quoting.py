"""A message's text split around a quoted span, so a page can mark the span (pure)."""

from __future__ import annotations


def around_quote(content: str, start: int | None, end: int | None, quote: str, *, context: int = 400) -> dict:
    """{"before", "quote", "after"}: up to `context` characters each side of the span when
    the stored offsets still point at the quote, else the whole text (clipped) unmarked."""
    if start is not None and end is not None and content[start:end] == quote:
        before, marked, after = content[:start], content[start:end], content[end:]
    else:
        before, marked, after = content, "", ""
    return {"before": before[-context:], "quote": marked, "after": after[:context]}


def shorten(text: str, limit: int) -> str:
    """`text` in at most `limit` characters, cut at a word with an ellipsis when too long
    (a message that ends mid-word reads as a bug)."""
    text = " ".join(text.split())
    if len(text) <= limit:
        return text
    cut = text[:limit - 1]
    if " " in cut and text[limit - 1] != " ":
        cut = cut.rsplit(" ", 1)[0]
    return cut.rstrip(" ,;:.-–—") + "\u2026"
