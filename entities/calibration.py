"""Calibration of stated confidence against outcomes (seed 003, decision memory): how far
an agent's "I'm 80% sure" is from how often such decisions turn out well.

Pure: no Django, no I/O, so it can be property-tested."""

from __future__ import annotations

from bisect import bisect_right

# A partial success counts half: the decision was neither right nor wrong.
OUTCOME_VALUES: dict[str, float] = {"success": 1.0, "partial": 0.5, "failure": 0.0}


def _mean(values: list[float]) -> float | None:
    return sum(values) / len(values) if values else None


def calibration(pairs: list[tuple[float, str]], bins: int = 5) -> dict:
    """Brier score, a reliability table and overconfidence for (confidence, outcome) pairs.

    Bins are equal-width over [0, 1]: [0, 1/bins), [1/bins, 2/bins), …, and the last one
    closed at 1.0 so that a confidence of exactly 1 has a home. Empty bins are kept (with
    None means) so that a chart of the table has a fixed x axis."""
    if bins < 1:
        raise ValueError("calibration needs at least one bin")
    confidences: list[float] = []
    values: list[float] = []
    for confidence, outcome in pairs:
        if not 0 <= confidence <= 1:
            raise ValueError(f"confidence {confidence!r} lies outside [0, 1]")
        if outcome not in OUTCOME_VALUES:
            raise ValueError(f"unknown outcome {outcome!r}; expected one of {', '.join(OUTCOME_VALUES)}")
        confidences.append(float(confidence))
        values.append(OUTCOME_VALUES[outcome])

    # Edges computed once and compared against, rather than int(confidence * bins), so that
    # a confidence equal to a bin's reported "from" always lands in that bin (0.29 * 100 is
    # 28.999… in floating point).
    edges = [i / bins for i in range(bins + 1)]
    members: list[list[int]] = [[] for _ in range(bins)]
    for index, confidence in enumerate(confidences):
        members[min(bisect_right(edges, confidence) - 1, bins - 1)].append(index)

    table = [
        {
            "from": edges[b],
            "to": edges[b + 1],
            "count": len(indexes),
            "mean_confidence": _mean([confidences[i] for i in indexes]),
            "success_rate": _mean([values[i] for i in indexes]),
        }
        for b, indexes in enumerate(members)
    ]
    count = len(confidences)
    mean_confidence, mean_value = _mean(confidences), _mean(values)
    return {
        "count": count,
        "brier": _mean([(c - v) ** 2 for c, v in zip(confidences, values)]),
        "bins": table,
        "overconfidence": mean_confidence - mean_value if count else None,
    }
