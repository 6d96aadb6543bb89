"""An extractive, deterministic summariser for a conversation (seed 002, Layer 1).

It picks the conversation's most informative sentences, keeps them in the order they were
said and attributes each to its speaker, under a header naming who talked, when and how
much. It also reads the tone of the conversation and the actions left pending: promises
made and questions nobody answered.

No Django and no model here: the same turns always give the same summary, it runs in
microseconds, and it is the fallback whenever an LLM is not configured or misbehaves."""

from __future__ import annotations

from conversations.summarise._types import PendingAction, SummaryDraft, Turn
from conversations.summarise.actions import pending_actions
from conversations.summarise.render import EARLIER_PREFIX, _earlier_candidates, _header, _render, date_range
from conversations.summarise.selection import MAX_REDUNDANCY, MIN_SALIENCE, _candidate, _pick, _score
from conversations.summarise.text import MAX_SENTENCE_CHARS, MONTHS, split_sentences
from conversations.summarise.tone import (
    RAPID_GAP,
    SPORADIC_MIN_GAP,
    SPORADIC_RATIO,
    STEADY_GAP,
    pace,
    tone_profile,
)

__all__ = [
    "EARLIER_PREFIX",
    "EARLIER_SHARE",
    "MAX_REDUNDANCY",
    "MAX_SENTENCE_CHARS",
    "MIN_SALIENCE",
    "MONTHS",
    "RAPID_GAP",
    "SPORADIC_MIN_GAP",
    "SPORADIC_RATIO",
    "STEADY_GAP",
    "PendingAction",
    "SummaryDraft",
    "Turn",
    "date_range",
    "pace",
    "pending_actions",
    "split_sentences",
    "summarise",
    "tone_profile",
]

# Carried-forward points of the superseded summary get at most this share of the budget,
# so the chain keeps its oldest facts without crowding out what was just said.
EARLIER_SHARE = 1 / 3


# --- the summary ---------------------------------------------------------------------------

def summarise(turns: list[Turn], *, previous_summary: str | None = None, max_chars: int = 1200) -> SummaryDraft:
    """A readable summary of `turns`, never longer than `max_chars`.

    With `previous_summary` (the summary this one supersedes), its most salient points are
    carried forward on an "Earlier:" line, so a chain of summaries keeps its oldest facts."""
    if not turns:
        raise ValueError("a summary needs at least one turn")
    if max_chars < 1:
        raise ValueError("max_chars must be positive")
    if any(t.occurred_at.tzinfo is None for t in turns):
        raise ValueError("turn times must be timezone-aware")
    turns = sorted(turns, key=lambda t: (t.occurred_at, t.id))

    speakers: list[str] = []
    for turn in turns:
        name = " ".join(turn.speaker.split()) or "unknown"
        if turn.direction != "system" and name not in speakers:
            speakers.append(name)
    if not speakers:
        speakers = ["system"]
    header = _header(turns, speakers)
    if len(header) > max_chars:
        header = header[:max_chars - 1] + "\u2026"

    names = frozenset(part.lower() for s in speakers for part in s.split())
    body_candidates = []
    for turn in turns:
        if turn.direction == "system":
            continue
        speaker = " ".join(turn.speaker.split()) or "unknown"
        for sentence in split_sentences(turn.content):
            body_candidates.append(_candidate(len(body_candidates), turn.id, speaker, sentence, names))
    _score(body_candidates)

    earlier_candidates = _earlier_candidates(previous_summary) if previous_summary else []
    _score(earlier_candidates)
    earlier_length = sum(len(c.text) + 1 for c in earlier_candidates if c.informative)
    room = max(0, max_chars - len(header) - 1)
    reserve = min(earlier_length + len(EARLIER_PREFIX), int(room * EARLIER_SHARE)) if earlier_length else 0

    body = _pick(body_candidates, lambda trial: len(_render(header, [], trial)) + reserve <= max_chars,
                 threshold=MIN_SALIENCE)
    # Carried-forward points already earned their place once; only filler is refused.
    earlier = _pick(earlier_candidates, lambda trial: len(_render(header, trial, body)) <= max_chars,
                    threshold=-0.5)

    salient: list[int] = []
    for c in body:
        if c.turn_id not in salient:
            salient.append(c.turn_id)
    return SummaryDraft(
        text=_render(header, earlier, body),
        tone=tone_profile(turns),
        pending_actions=pending_actions(turns),
        salient_turn_ids=salient,
    )
