"""A small server-rendered SVG line chart (no chart library needed): precision per day
for each rule / prompt version on the reviewer statistics page."""

from __future__ import annotations

from datetime import date
from html import escape

WIDTH, PLOT_HEIGHT, PAD = 640, 220, 36
LEGEND_ROW = 18
COLOURS = ("#2563eb", "#dc2626", "#16a34a", "#9333ea", "#ea580c", "#0891b2")
# One day of data puts every rule on one x: their dots sit side by side this far apart.
SAME_DAY_SPREAD = 22


def precision_chart(rules) -> str:
    """One polyline per rule over the days that had decisions; y = precision 0..1. The
    legend sits under the plot (a swatch in the series' colour per rule), never on it."""
    days = sorted({day for rule in rules for day, _, _ in rule.series})
    if not days:
        return ""
    first, last = date.fromisoformat(days[0]), date.fromisoformat(days[-1])
    span = max(1, (last - first).days)

    def x(day: str, index: int) -> float:
        if len(days) == 1:
            return WIDTH / 2 + (index - (len(rules) - 1) / 2) * SAME_DAY_SPREAD
        return PAD + (date.fromisoformat(day) - first).days / span * (WIDTH - 2 * PAD)

    def y(value: float) -> float:
        return PLOT_HEIGHT - PAD - value * (PLOT_HEIGHT - 2 * PAD)

    height = PLOT_HEIGHT + LEGEND_ROW * len(rules) + 8
    parts = [f'<svg class="chart" viewBox="0 0 {WIDTH} {height}" role="img" '
             f'aria-label="Precision per rule over time" xmlns="http://www.w3.org/2000/svg">',
             f'<g class="plot">']
    for value in (0, 0.5, 1):
        parts.append(f'<line x1="{PAD}" x2="{WIDTH - PAD}" y1="{y(value):.1f}" y2="{y(value):.1f}" class="grid"/>'
                     f'<text x="4" y="{y(value) + 4:.1f}" class="axis">{value:.0%}</text>')
    if len(days) == 1:
        parts.append(f'<text x="{WIDTH / 2}" y="{PLOT_HEIGHT - 8}" class="axis" text-anchor="middle">'
                     f'{escape(days[0])}</text>')
    else:
        parts.append(f'<text x="{PAD}" y="{PLOT_HEIGHT - 8}" class="axis">{escape(days[0])}</text>'
                     f'<text x="{WIDTH - PAD}" y="{PLOT_HEIGHT - 8}" class="axis" text-anchor="end">'
                     f'{escape(days[-1])}</text>')
    legend = []
    for index, rule in enumerate(rules):
        colour = COLOURS[index % len(COLOURS)]
        label = escape(rule.rule + (f" ({rule.prompt_version})" if rule.prompt_version else "") or "(none)")
        points = " ".join(f"{x(day, index):.1f},{y(value):.1f}" for day, value, _ in rule.series)
        parts.append(f'<g class="series" data-colour="{colour}"><title>{label}</title>'
                     f'<polyline points="{points}" fill="none" stroke="{colour}" stroke-width="2"/>')
        parts.extend(f'<circle cx="{x(day, index):.1f}" cy="{y(value):.1f}" r="4" fill="{colour}">'
                     f'<title>{label} {escape(day)}: {value:.0%} of {n}</title></circle>'
                     for day, value, n in rule.series)
        parts.append("</g>")
        row = PLOT_HEIGHT + 4 + LEGEND_ROW * index
        legend.append(f'<g class="legend-item"><rect class="swatch" x="{PAD}" y="{row}" width="12" height="12" '
                      f'rx="2" fill="{colour}"/><text x="{PAD + 18}" y="{row + 10}" class="legend">{label}</text></g>')
    parts.append("</g>")
    parts.extend(legend)
    parts.append("</svg>")
    return "".join(parts)
