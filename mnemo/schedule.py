"""The reason of each scheduled job, as written where it is scheduled (HOUSE_STYLE.md: "all
periodic jobs are declared in one place with a comment saying why that schedule"): the
comment lines right above each entry of `app.conf.beat_schedule` in mnemo/celery.py. Read
from the source so the one place stays the one place; pure."""

from __future__ import annotations

import re

_ENTRY = re.compile(r'^    "([^"]+)"\s*:')  # an entry's key, at the dict's own indentation


def schedule_reasons(source: str) -> dict[str, str]:
    """{entry name: its comment as one paragraph}; "" for an entry without one."""
    reasons: dict[str, str] = {}
    comment: list[str] = []
    inside = False
    for line in source.splitlines():
        stripped = line.strip()
        if not inside:
            inside = stripped.startswith("app.conf.beat_schedule")
            continue
        if line.startswith("}"):
            break
        if stripped.startswith("#"):
            comment.append(stripped.lstrip("#").strip())
        elif match := _ENTRY.match(line):
            reasons[match.group(1)] = " ".join(comment)
            comment = []
        elif not stripped:
            comment = []
    return reasons
