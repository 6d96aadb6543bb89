"""Forgetting (seed 004: decay per type; seed 001: a decay daemon beside reinforcement):
a memory's strength halves every half-life of its type since it was last reinforced or
served, a memory confirmed or used often forgets more slowly, and one that falls under the
threshold is archived — kept, restorable, no longer served unless asked for. Pure: the
nightly job (memory.services.decaying) applies it to rows in batches.

Strength is stored with the time it refers to (`strength_at`), so each run continues from
where the last one left off: a run repeated at the same `as_of` changes nothing, and a run
killed mid-way leaves every row either before or after that night's step, never between."""

from __future__ import annotations

import math
from datetime import datetime

# A memory served in a pack is weaker evidence that it matters than a person restating it
# (context.scoring weighs accesses against reinforcements the same way).
ACCESS_WEIGHT = 0.25

# Identity is who someone is: forgetting a person's name because nobody asked for it this
# year is a defect, not hygiene (the identity section of a pack has its own small budget, so
# keeping them costs nothing). A censor that has not fired is doing its job: archiving it
# would lift the guard exactly when it works. Both still lose strength, which only ranks.
NEVER_ARCHIVED = frozenset({"identity", "censor"})

# An episode is the one derived record of its turns with their dates resolved and speakers
# named, and it is what recall ranks those turns by: archiving it loses evidence the turns
# alone rank far lower (LoCoMo, a year without use: R@10 -15 and -23 points on the two
# parts of the development half, bench/RESULTS.md). So decay archives an episode only once
# consolidation has kept what it says (it is a pattern's source); until then it only
# weakens. Kept means served: the pattern is active (a candidate pattern waiting for review
# is not served, so its sources would leave recall with nothing in their place); an active
# pattern serves an archived source's turns in its place (context.services, families).
KEPT_UNTIL_CONSOLIDATED = frozenset({"episodic"})

SECONDS_PER_DAY = 86_400.0


def effective_half_life(base_days: float, *, reinforcements: int = 0, accesses: int = 0) -> float:
    """The spacing effect: each doubling of the evidence that a memory is used (restated,
    or served at ACCESS_WEIGHT) adds one base half-life: never reinforced ×1, once ×2, three
    times ×3, seven times ×4."""
    if not base_days > 0:
        raise ValueError(f"a half-life is positive, got {base_days}")
    evidence = max(reinforcements, 0) + ACCESS_WEIGHT * max(accesses, 0)
    return base_days * (1.0 + math.log2(1.0 + evidence))


def decayed(strength: float, *, days: float, half_life_days: float) -> float:
    """`strength` after `days` without use: halved every `half_life_days`. A negative age
    (clock skew, a row written after the run's reference time) counts as no time passed;
    strength is clamped to 0..1 (NaN counts as 0)."""
    if not half_life_days > 0:
        raise ValueError(f"a half-life is positive, got {half_life_days}")
    start = min(float(strength), 1.0) if strength > 0 else 0.0
    return start * 0.5 ** (max(days, 0.0) / half_life_days)


def days_between(start: datetime, end: datetime) -> float:
    return (end - start).total_seconds() / SECONDS_PER_DAY


def anchor(*, strength_at: datetime | None, created_at: datetime, last_confirmed_at: datetime | None,
           last_accessed_at: datetime | None) -> datetime:
    """The time the stored strength refers to: the last decay step, or a later reinforcement
    or access (each of which sets strength back to 1), or the memory's creation."""
    return max(t for t in (strength_at, created_at, last_confirmed_at, last_accessed_at) if t is not None)


def archives(*, strength: float, memory_type: str, threshold: float, consolidated: bool = False) -> bool:
    """Whether a memory this weak is archived (only active ones are; see NEVER_ARCHIVED and
    KEPT_UNTIL_CONSOLIDATED: `consolidated`, it is the source of an active pattern)."""
    if memory_type in KEPT_UNTIL_CONSOLIDATED and not consolidated:
        return False
    return strength < threshold and memory_type not in NEVER_ARCHIVED
