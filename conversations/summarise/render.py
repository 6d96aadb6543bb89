"""The summary's text: a header naming who talked, when and how much, then the chosen
sentences attributed to their speakers, and reading a superseded summary back into points."""

from __future__ import annotations

import re
from datetime import datetime

from conversations.summarise._types import Turn
from conversations.summarise.selection import _candidate, _Candidate
from conversations.summarise.text import MONTHS, split_sentences

EARLIER_PREFIX = "Earlier: "
_HEADER = re.compile(r"^Conversation (?:between|with) .*\(\d+ messages?\)\.$")
_SPEAKER_PREFIX = re.compile(r"^([^\s:.!?][^:.!?\n]{0,39}):\s+(\S.*)$")


# --- rendering -----------------------------------------------------------------------------

def _format_day(d) -> str:
    return f"{d.day} {MONTHS[d.month - 1]} {d.year}"


def date_range(first: datetime, last: datetime) -> str:
    """"8 May 2023", "8–9 May 2023", "30 April – 2 May 2023", "31 December 2023 – 1 January 2024"."""
    a, b = first.date(), last.astimezone(first.tzinfo).date()
    if a == b:
        return _format_day(a)
    if (a.year, a.month) == (b.year, b.month):
        return f"{a.day}\u2013{b.day} {MONTHS[a.month - 1]} {a.year}"
    if a.year == b.year:
        return f"{a.day} {MONTHS[a.month - 1]} \u2013 {_format_day(b)}"
    return f"{_format_day(a)} \u2013 {_format_day(b)}"


def _names(speakers: list[str]) -> str:
    if len(speakers) > 4:
        return f"{', '.join(speakers[:3])} and {len(speakers) - 3} others"
    if len(speakers) == 1:
        return speakers[0]
    return f"{', '.join(speakers[:-1])} and {speakers[-1]}"


def _header(turns: list[Turn], speakers: list[str]) -> str:
    who = ("between " if len(speakers) > 1 else "with ") + _names(speakers)
    count = f"{len(turns)} message{'s' if len(turns) != 1 else ''}"
    return f"Conversation {who} on {date_range(turns[0].occurred_at, turns[-1].occurred_at)} ({count})."


def _attributed(points: list[_Candidate], *, by_turn: bool) -> list[str]:
    """Consecutive sentences of one message (or of one speaker, for carried-forward points)
    share a single "Speaker:" label."""
    parts: list[list] = []
    for p in points:
        key = p.turn_id if by_turn else p.speaker
        if parts and parts[-1][0] == key and parts[-1][1] == p.speaker:
            parts[-1][2].append(p.text)
        else:
            parts.append([key, p.speaker, [p.text]])
    return [(f"{speaker}: " if speaker else "") + " ".join(texts) for _, speaker, texts in parts]


def _render(header: str, earlier: list[_Candidate], body: list[_Candidate]) -> str:
    lines = [header]
    if earlier:
        lines.append(EARLIER_PREFIX + " ".join(_attributed(earlier, by_turn=False)))
    lines.extend(_attributed(body, by_turn=True))
    return "\n".join(lines)


def _earlier_candidates(previous_summary: str) -> list[_Candidate]:
    """The points of a superseded summary (ours or anyone's prose), attributed when the text
    says who spoke; its header is dropped, as the new one replaces it."""
    points: list[_Candidate] = []
    for line in previous_summary.splitlines():
        line = line.strip()
        if line.startswith(EARLIER_PREFIX.strip()):
            line = line[len(EARLIER_PREFIX.strip()):].strip()
        speaker = None
        for sentence in split_sentences(line):
            if _HEADER.match(sentence):
                continue
            prefix = _SPEAKER_PREFIX.match(sentence)
            if prefix:
                speaker, sentence = prefix.group(1).strip(), prefix.group(2).strip()
            points.append((speaker, sentence))
    names = frozenset(s.lower() for s, _ in points if s)
    return [_candidate(i, None, speaker, sentence, names) for i, (speaker, sentence) in enumerate(points)]
