"""The summariser's inputs and outputs, shared by every part of it."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime


@dataclass(frozen=True)
class Turn:
    id: int
    speaker: str
    direction: str  # inbound | outbound | system
    content: str
    occurred_at: datetime  # timezone-aware


@dataclass(frozen=True)
class PendingAction:
    kind: str  # "commitment" | "question"
    text: str  # the sentence, trimmed
    speaker: str
    interaction_id: int


@dataclass(frozen=True)
class SummaryDraft:
    text: str
    # formality 0..1, technical_level 0..1, sentiment -1..1,
    # pace "rapid" | "steady" | "slow" | "sporadic", messages_per_hour
    tone: dict
    pending_actions: list[PendingAction]
    salient_turn_ids: list[int]  # the turns the summary sentences came from, in order
