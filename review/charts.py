"""The reviewer statistics page's charts (issue 21 part 5), drawn by core.charts (pure: no
Django): how long pending items have waited, how long decided items had waited, decisions
per day, and precision per rule / prompt version over time."""

from __future__ import annotations

from collections.abc import Sequence

from core.charts import bar_chart, count_format, line_chart, percent_format


def hours_format(value: float) -> str:
    return f"{value:,.1f} h" if value < 100 else f"{value:,.0f} h"


def queue_age_chart(buckets: Sequence[tuple[str, int]]) -> str:
    """Pending items per band of how long they have waited; "" when nothing is pending."""
    total = sum(n for _, n in buckets)
    if not total:
        return ""
    described = ", ".join(f"{label}: {n:,}" for label, n in buckets)
    return bar_chart([label for label, _ in buckets], {"Pending items": [n for _, n in buckets]},
                     title="How long pending items have waited", x_title="Waiting",
                     description=f"{total:,} pending items by how long they have waited. {described}.")


def decision_wait_chart(waits) -> str:
    """Median and 90th-percentile wait of the items decided each day (selectors.DayWait)."""
    if not waits:
        return ""
    days = [w.day for w in waits]
    worst = max(waits, key=lambda w: w.p90_hours)
    return line_chart(days, {"Median": [w.median_hours for w in waits],
                             "90th percentile": [w.p90_hours for w in waits]},
                      fmt=hours_format, title="How long decided items had waited",
                      description=f"Per day, from {days[0]} to {days[-1]}, the median and 90th-percentile wait of the "
                                  f"{sum(w.decided for w in waits):,} items decided that day; the longest 90th "
                                  f"percentile was {hours_format(worst.p90_hours)} on {worst.day}.")


def decisions_chart(per_day) -> str:
    """Decisions per day (selectors.DayDecisions), stacked: accepted and rejected by people,
    approved by the trust policy; "" when the period has none."""
    series = {"Accepted by people": [d.accepted for d in per_day], "Rejected by people": [d.rejected for d in per_day],
              "Approved by the trust policy": [d.auto for d in per_day]}
    totals = {name: sum(values) for name, values in series.items()}
    if not per_day or not any(totals.values()):
        return ""
    return bar_chart([d.day for d in per_day], series, title="Decisions per day", x_title="Day",
                     totals=[count_format(n) for n in totals.values()],
                     description=f"From {per_day[0].day} to {per_day[-1].day}: "
                                 + ", ".join(f"{n:,} {name.lower()}" for name, n in totals.items()) + ".")


def precision_chart(rules) -> str:
    """One line per rule (selectors.RuleStats) over the days that had decisions; y =
    precision 0..1; the legend names each rule with its precision over the period."""
    days = sorted({day for rule in rules for day, _, _ in rule.series})
    if not days:
        return ""
    series, totals = {}, []
    for rule in rules:
        label = (rule.rule + (f" ({rule.prompt_version})" if rule.prompt_version else "")) or "(none)"
        by_day = {day: value for day, value, _ in rule.series}
        series[label] = [by_day.get(day) for day in days]
        totals.append(f"{percent_format(rule.precision)} of {rule.decisions:,}" if rule.precision is not None else "")
    return line_chart(days, series, fmt=percent_format, top=1, title="Precision per rule over time", totals=totals,
                      description=f"Precision (accepted ÷ decided) per day from {days[0]} to {days[-1]} for "
                                  + "; ".join(f"{name}: {total}" for name, total in zip(series, totals)) + ".")
