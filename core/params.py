"""Dashboard query parameters read leniently: a value that does not parse is treated as
absent (and the page says so), never a 500. The API validates strictly through its
schemas instead; a page's links and forms are typed by people."""

from __future__ import annotations

from collections.abc import Collection
from datetime import date, datetime, time, timedelta, timezone


def choice(value: str | None, allowed: Collection[str]) -> str | None:
    """`value` when it is one of `allowed`, else None."""
    return value if value and value in allowed else None


def day(value: str | None) -> date | None:
    """A YYYY-MM-DD date, or None when absent or malformed."""
    if not value:
        return None
    try:
        return date.fromisoformat(value.strip())
    except ValueError:
        return None


def day_start(value: date) -> datetime:
    return datetime.combine(value, time.min, tzinfo=timezone.utc)


def day_end(value: date) -> datetime | None:
    """The instant a day ends (the next midnight, UTC): an inclusive "until this day" as an
    exclusive bound; None for the last day datetime can represent (no bound needed)."""
    try:
        return day_start(value + timedelta(days=1))
    except OverflowError:
        return None



def choices(query, allowed: dict[str, Collection[str]]) -> tuple[dict[str, str | None], list[str]]:
    """Each named parameter of `query` (a QueryDict) read with `choice`, and the names given
    a value that is not one of theirs: the page names what it ignored."""
    values = {name: choice(query.get(name), options) for name, options in allowed.items()}
    return values, [name for name in allowed if query.get(name) and values[name] is None]


def row_id(value: str | None) -> int | None:
    """A positive row id from a query string or a form, or None: not ASCII digits ("²"
    is a digit to str.isdigit but not to int), or too long for a bigint."""
    value = (value or "").strip()
    return int(value) if value.isascii() and value.isdigit() and len(value) < 19 and int(value) > 0 else None
