"""An episode: what a run of consecutive turns of one conversation was about, as one
episodic memory that a later question ("when did Caroline go to the support group?") can
find, with each turn's sentence quoted as evidence.

The text opens with the day and who talked ("On 8 May 2023, Caroline and Melanie
talked."), then gives each turn's most informative sentence, attributed and in order, with
its relative times dated against when that turn was said. Greetings, thanks and laughter
are skipped; when the text would pass its budget, the least informative turns go first."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from conversations.summarise import date_range
from conversations.summarise._types import Turn
from memory.extraction._common import sentence_spans
from memory.extraction._types import EpisodeDraft
from memory.timeexpr import annotate, resolve

MAX_EPISODE_CHARS = 900
MAX_SENTENCE_WORDS = 30
# Below this many content words a sentence is small talk ("Thanks, Mel!", "How are you?").
MIN_CONTENT_WORDS = 3

_WORD = re.compile(r"[a-z0-9][a-z0-9'’]*")
_FILLER = frozenset("""a about after again all also am an and any are as at be been but by can could did do does
    doing for from get got had has have having he her here him his how i i'd i'll i'm i've if in into is it it's its
    just me more my no not now of oh on or our out really she so some such than that that's the their them then there
    these they this to too up very was we we're were what when where which who will with would yeah yes you you're your
    hey hi hello hiya thanks thank thx lol haha hahaha wow cool ok okay sure nice great awesome amazing good glad
    hope bye see soon talk later totally agree love omg right sounds definitely absolutely wonderful fantastic
    congrats congratulations take care catch ya yo well let's gonna much lot things thing something""".split())


@dataclass(frozen=True)
class _Line:
    order: int
    turn_id: int
    speaker: str
    sentence: str  # verbatim, from the turn's content
    rendered: str  # "Caroline: ..." with dates
    score: float


def _names(speakers: Sequence[str]) -> str:
    if len(speakers) > 4:
        return f"{', '.join(speakers[:3])} and {len(speakers) - 3} others"
    if len(speakers) == 1:
        return speakers[0]
    return f"{', '.join(speakers[:-1])} and {speakers[-1]}"


def _score(sentence: str, names: frozenset[str], turn: Turn) -> float | None:
    """How much a sentence says: its content words, plus dates and numbers, less for a
    question. None for small talk."""
    words = [w for w in _WORD.findall(sentence.lower().replace("’", "'")) if w not in _FILLER and w not in names]
    if len(words) < MIN_CONTENT_WORDS:
        return None
    dated = bool(resolve(sentence, turn.occurred_at))
    return (min(len(words), 12) + 3 * dated + bool(re.search(r"\d", sentence))
            - 3 * sentence.rstrip(" \"')").endswith("?"))


def _clipped(sentence: str) -> str:
    words = sentence.split()
    return " ".join(words[:MAX_SENTENCE_WORDS]) + ("…" if len(words) > MAX_SENTENCE_WORDS else "")


def _line(order: int, turn: Turn, speaker: str, names: frozenset[str]) -> _Line | None:
    best: tuple[float, str] | None = None
    for start, end in sentence_spans(turn.content):
        sentence = turn.content[start:end]
        score = _score(sentence, names, turn)
        if score is not None and (best is None or score > best[0]):
            best = (score, sentence)
    if best is None:
        return None
    score, sentence = best
    return _Line(order, turn.id, speaker, sentence, f"{speaker}: {annotate(_clipped(sentence), turn.occurred_at)}", score)


# The first line of an episode's text: its days and who talked (names may hold commas,
# the days never do).
_HEADER = re.compile(r"On (?P<when>[^,\n]+), [^\n]+ talked\.")


def dated_lines(text: str) -> tuple[str, str] | None:
    """(its days, its quoted lines) when `text` is an episode's as `episode` writes it, else
    None: a pack says the days and lets each line name its speaker, without the header."""
    header, _, lines = text.partition("\n")
    found = _HEADER.fullmatch(header)
    return (found["when"], lines) if found and lines.strip() else None


def quoted_lines(text: str) -> list[tuple[str, str]]:
    """(speaker, line) for each line an episode quotes, when `text` is an episode's as
    `episode` writes it ("Caroline: …" after its header), else []."""
    parts = dated_lines(text)
    if parts is None:
        return []
    return [(speaker, line) for speaker, sep, line in (row.partition(": ") for row in parts[1].split("\n")) if sep]


def _render(header: str, lines: Sequence[_Line]) -> str:
    return "\n".join([header, *(line.rendered for line in lines)])


def episode(turns: Sequence[Turn]) -> EpisodeDraft:
    """The episodic memory of a run of consecutive turns of one conversation, at most
    MAX_EPISODE_CHARS long."""
    if not turns:
        raise ValueError("an episode needs at least one turn")
    if any(t.occurred_at.tzinfo is None for t in turns):
        raise ValueError("turn times must be timezone-aware")
    ordered = sorted(turns, key=lambda t: (t.occurred_at, t.id))
    spoken = [t for t in ordered if t.direction != "system"] or ordered
    participants: list[str] = []
    for turn in spoken:
        name = " ".join(turn.speaker.split()) or "unknown"
        if name not in participants:
            participants.append(name)
    first, last = ordered[0].occurred_at, ordered[-1].occurred_at
    header = f"On {date_range(first, last)}, {_names(participants)} talked."[:MAX_EPISODE_CHARS]

    names = frozenset(part.lower() for name in participants for part in name.split())
    lines = [line for order, turn in enumerate(spoken)
             if (line := _line(order, turn, " ".join(turn.speaker.split()) or "unknown", names))]
    # The least informative turns go first; on a tie, the later one.
    for dropped in sorted(lines, key=lambda line: (line.score, -line.order)):
        if len(_render(header, lines)) <= MAX_EPISODE_CHARS:
            break
        lines.remove(dropped)
    return EpisodeDraft(
        text=_render(header, lines),
        first=first.date(),
        last=last.astimezone(first.tzinfo).date(),
        participants=tuple(participants),
        turn_ids=tuple(t.id for t in ordered),
        quotes={line.turn_id: line.sentence for line in lines},
    )
