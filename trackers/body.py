"""The Markdown body of a capability-gap issue: the need, how often and since when, the
evidence as a table, a link to the dashboard.

Everything that comes from conversations (snippets, channels, external ids) goes into a
code span, where GitHub and GitLab render no HTML, link, image or @mention: a snippet that
says "@alice" must not notify alice. Free text outside the table is escaped the same way
in spirit (Markdown punctuation backslashed, mentions broken by a word joiner)."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timezone
from urllib.parse import quote

# GitHub refuses an issue body longer than this many characters (GitLab allows more).
MAX_BODY_CHARS = 65_536
SNIPPET_CHARS = 200
DESCRIPTION_CHARS = 2_000
SHORT_CELL_CHARS = 100  # category, channel, external id
URL_CHARS = 2_000

# Every character that ends a line for Markdown or for str.splitlines(): a cell must be one line.
_LINE_BREAKS = re.compile(r"\r\n|[\r\n\v\f\x1c\x1d\x1e\x85\u2028\u2029]")
_MARKDOWN_PUNCTUATION = re.compile(r"([\\`*_\[\]<>#|~!&])")
_BACKTICKS = re.compile(r"`+")
_WORD_JOINER = "\u2060"


@dataclass(frozen=True)
class EvidenceLine:
    interaction_id: int
    external_id: str | None
    occurred_at: datetime
    channel: str
    snippet: str  # already redacted by the caller


def issue_body(*, description: str, frequency: int, category: str, first_seen: datetime, last_seen: datetime,
               evidence: Sequence[EvidenceLine], dashboard_url: str | None) -> str:
    """The issue's Markdown, at most MAX_BODY_CHARS characters: when the evidence does not
    fit, the newest lines stay and a note counts the older ones left out."""
    head = [
        f"**Need:** {_plain(description, DESCRIPTION_CHARS)}",
        "",
        f"- **Asked for:** {int(frequency)} time{'s' if int(frequency) != 1 else ''}",
        f"- **Category:** {_plain(category, SHORT_CELL_CHARS)}",
        f"- **First seen:** {_when(first_seen)}",
        f"- **Last seen:** {_when(last_seen)}",
        "",
        "### Evidence",
        "",
    ]
    tail = [""]
    if dashboard_url:
        tail += [f"[Open this gap in the Mnemo dashboard](<{_url(dashboard_url)}>)", ""]
    tail += ["---", "Opened by Mnemo", ""]
    if not evidence:
        return "\n".join(head + ["No interactions were kept as evidence."] + tail)

    table = ["| Date | Channel | Interaction | Snippet |", "| --- | --- | --- | --- |"]
    newest_first = sorted(evidence, key=lambda line: _utc(line.occurred_at), reverse=True)
    rows = [_row(line) for line in newest_first]
    # The note is reserved at its longest (every line left out) so that it always fits.
    budget = MAX_BODY_CHARS - sum(len(line) + 1 for line in head + table + tail) - len(_note(len(rows))) - 2
    kept = 0
    for row in rows:
        if budget < len(row) + 1:
            break
        budget -= len(row) + 1
        kept += 1
    table += rows[:kept]
    if kept < len(rows):
        table += ["", _note(len(rows) - kept)]
    return "\n".join(head + table + tail)


def _row(line: EvidenceLine) -> str:
    interaction = str(int(line.interaction_id))
    if line.external_id:
        interaction += f" / {_code(line.external_id, SHORT_CELL_CHARS)}"
    cells = [_when(line.occurred_at), _code(line.channel, SHORT_CELL_CHARS), interaction,
             _code(line.snippet, SNIPPET_CHARS)]
    return "| " + " | ".join(cells) + " |"


def _note(left_out: int) -> str:
    return f"… and {left_out} more (older, not listed: GitHub caps an issue at {MAX_BODY_CHARS:,} characters)"


def _one_line(text: str, cap: int) -> str:
    text = _LINE_BREAKS.sub(" ", str(text)).replace("\x00", "\ufffd")
    return text if len(text) <= cap else text[:cap - 1] + "…"


def _code(text: str, cap: int) -> str:
    """A table cell as a code span: one line, pipes escaped (GFM splits cells before it
    reads code spans), fenced by one more backtick than the longest run inside."""
    text = _one_line(text, cap)
    if not text.strip():
        return "—"
    text = text.replace("|", "\\|")
    fence = "`" * (max((len(run) for run in _BACKTICKS.findall(text)), default=0) + 1)
    # One space inside each end, which CommonMark strips, lets the text start or end with a backtick.
    return f"{fence} {text} {fence}"


def _plain(text: str, cap: int) -> str:
    text = " ".join(_one_line(text, cap).split())
    return _MARKDOWN_PUNCTUATION.sub(r"\\\1", text).replace("@", "@" + _WORD_JOINER) or "—"


def _url(url: str) -> str:
    # Inside <…> a destination may hold anything but line breaks, "<" and ">": encode those
    # and spaces; everything already valid in a URL stays as written.
    quoted = quote(url.strip(), safe=":/?#[]@!$&'()*+,;=%~")
    if len(quoted) > URL_CHARS:
        raise ValueError(f"the dashboard URL is longer than {URL_CHARS} characters")
    return quoted


def _utc(moment: datetime) -> datetime:
    # A naive datetime is taken as UTC: Mnemo keeps every time in UTC.
    return moment.replace(tzinfo=timezone.utc) if moment.tzinfo is None else moment.astimezone(timezone.utc)


def _when(moment: datetime) -> str:
    return _utc(moment).strftime("%Y-%m-%d %H:%M UTC")
