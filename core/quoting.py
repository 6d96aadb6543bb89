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
