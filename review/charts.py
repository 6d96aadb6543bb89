"""A small server-rendered SVG line chart (no chart library needed): precision per day
for each rule / prompt version on the reviewer statistics page."""

from __future__ import annotations

from datetime import date
from html import escape

WIDTH, HEIGHT, PAD = 640, 220, 36
COLOURS = ("#2563eb", "#dc2626", "#16a34a", "#9333ea", "#ea580c", "#0891b2")


def precision_chart(rules) -> str:
    """One polyline per rule over the days that had decisions; y = precision 0..1."""
    days = sorted({day for rule in rules for day, _, _ in rule.series})
    if not days:
        return ""
    first, last = date.fromisoformat(days[0]), date.fromisoformat(days[-1])
    span = max(1, (last - first).days)

    def x(day: str) -> float:
        return PAD + (date.fromisoformat(day) - first).days / span * (WIDTH - 2 * PAD) if len(days) > 1 else WIDTH / 2

    def y(value: float) -> float:
        return HEIGHT - PAD - value * (HEIGHT - 2 * PAD)

    parts = [f'<svg class="chart" viewBox="0 0 {WIDTH} {HEIGHT}" role="img" '
             f'aria-label="Precision per rule over time" xmlns="http://www.w3.org/2000/svg">']
    for value in (0, 0.5, 1):
        parts.append(f'<line x1="{PAD}" x2="{WIDTH - PAD}" y1="{y(value):.1f}" y2="{y(value):.1f}" class="grid"/>'
                     f'<text x="4" y="{y(value) + 4:.1f}" class="axis">{value:.0%}</text>')
    parts.append(f'<text x="{PAD}" y="{HEIGHT - 8}" class="axis">{escape(days[0])}</text>')
    if len(days) > 1:
        parts.append(f'<text x="{WIDTH - PAD}" y="{HEIGHT - 8}" class="axis" text-anchor="end">{escape(days[-1])}</text>')
    for index, rule in enumerate(rules):
        colour = COLOURS[index % len(COLOURS)]
        label = escape(rule.rule + (f" ({rule.prompt_version})" if rule.prompt_version else "") or "(none)")
        points = " ".join(f"{x(day):.1f},{y(value):.1f}" for day, value, _ in rule.series)
        parts.append(f'<g><title>{label}</title><polyline points="{points}" fill="none" stroke="{colour}" '
                     f'stroke-width="2"/>')
        parts.extend(f'<circle cx="{x(day):.1f}" cy="{y(value):.1f}" r="3" fill="{colour}">'
                     f'<title>{label} {escape(day)}: {value:.0%} of {n}</title></circle>' for day, value, n in rule.series)
        parts.append("</g>")
        parts.append(f'<text x="{WIDTH - PAD + 4}" y="{PAD + 14 * index}" class="legend" fill="{colour}" '
                     f'text-anchor="end" dx="-8">{label}</text>')
    parts.append("</svg>")
    return "".join(parts)
