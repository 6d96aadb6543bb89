"""Actions a conversation leaves pending: promises made and questions nobody answered."""

from __future__ import annotations

import re

from conversations.summarise._types import PendingAction, Turn
from conversations.summarise.text import _APOSTROPHES, _display, _strip_trailing, split_sentences

_COMMITMENT = re.compile(
    r"\b(?:i'll|i will|i shall|i'm going to|i am going to|i'm gonna|i am gonna|we'll|we will|"
    r"we're going to|we are going to|we're gonna|let me|i promise|i need to|i have to|i've got to|"
    r"i must|remind me to|i plan to|i intend to|i'm planning to|i am planning to)\b"
    r"|^(?:gonna|going to|will)\s+\w",
    re.IGNORECASE)
# Phrases shaped like a promise that promise nothing: a request, a figure of speech, a refusal.
_NOT_A_COMMITMENT = re.compile(
    r"\blet me (?:know|guess|see|think|tell you|say|be clear|explain why)\b|\b(?:i'll|i will) (?:never|not)\b"
    r"|\b(?:i'm sure|i am sure|i bet|i think|i hope|hopefully|maybe|probably|i guess)\b.*\b(?:i|we)(?:'ll| will)\b",
    re.IGNORECASE)
# Questions that ask for nothing: greetings and tags.
_PHATIC_QUESTION = re.compile(
    r"^(?:\w+[,!]?\s+)?(?:how are you|how are you doing|how have you been|how's it going|how are things|"
    r"what's up|wassup|sup|you know|right|really|huh|eh|isn't it|ok|okay|yeah|what's new|anything new|"
    r"you\s?ok)(?:\s+\w+)?\W*$",
    re.IGNORECASE)


# --- pending actions ---------------------------------------------------------------------

def pending_actions(turns: list[Turn]) -> list[PendingAction]:
    """Commitments (first-person intent) and questions no other party answered afterwards."""
    # later_speakers[i]: up to two distinct speakers who spoke after turn i, enough to tell
    # whether anyone other than the asker did.
    later_speakers: list[tuple] = [()] * len(turns)
    seen_after: tuple = ()
    for index in range(len(turns) - 1, -1, -1):
        later_speakers[index] = seen_after
        turn = turns[index]
        if turn.direction != "system" and turn.speaker not in seen_after and len(seen_after) < 2:
            seen_after = (*seen_after, turn.speaker)
    actions: list[PendingAction] = []
    seen: set = set()
    for index, turn in enumerate(turns):
        if turn.direction == "system":
            continue
        for sentence in split_sentences(turn.content):
            normalised = sentence.translate(_APOSTROPHES)
            is_question = _strip_trailing(sentence).endswith("?")
            if is_question:
                answered = any(s != turn.speaker for s in later_speakers[index])
                if answered or _PHATIC_QUESTION.match(_strip_trailing(normalised)):
                    continue
                kind = "question"
            elif _COMMITMENT.search(normalised) and not _NOT_A_COMMITMENT.search(normalised):
                kind = "commitment"
            else:
                continue
            key = (kind, turn.speaker, sentence.lower())
            if key not in seen:
                seen.add(key)
                actions.append(PendingAction(kind=kind, text=_display(sentence), speaker=turn.speaker,
                                             interaction_id=turn.id))
    return actions
