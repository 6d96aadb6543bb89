"""Counts over time as a small server-rendered SVG line chart (pure: no Django), for the
maintenance page's memories by status and by type."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from html import escape

WIDTH, PLOT_HEIGHT, PAD, LEGEND_ROW = 640, 200, 40, 18
COLOURS = ("#2563eb", "#16a34a", "#dc2626", "#9333ea", "#ea580c", "#0891b2", "#4b5563")


def counts_chart(days: Sequence[str], series: Mapping[str, Sequence[int]], *, label: str) -> str:
    """One polyline per series over `days` (ISO dates, oldest first, one value per day per
    series); y from 0 to the largest count. The legend sits under the plot. Nothing to draw:
    the empty string."""
    if not days or not series:
        return ""
    peak = max((max(values) for values in series.values() if values), default=0) or 1

    def x(index: int) -> float:
        return WIDTH / 2 if len(days) == 1 else PAD + index / (len(days) - 1) * (WIDTH - 2 * PAD)

    def y(value: int) -> float:
        return PLOT_HEIGHT - PAD - value / peak * (PLOT_HEIGHT - 2 * PAD)

    height = PLOT_HEIGHT + LEGEND_ROW * len(series) + 8
    parts = [f'<svg class="chart" viewBox="0 0 {WIDTH} {height}" role="img" aria-label="{escape(label)}" '
             f'xmlns="http://www.w3.org/2000/svg"><title>{escape(label)}</title>']
    for value in (0, peak):
        parts.append(f'<line x1="{PAD}" x2="{WIDTH - PAD}" y1="{y(value):.1f}" y2="{y(value):.1f}" class="grid"/>'
                     f'<text x="4" y="{y(value) + 4:.1f}" class="axis">{value:,}</text>')
    parts.append(f'<text x="{PAD}" y="{PLOT_HEIGHT - 8}" class="axis">{escape(days[0])}</text>')
    if len(days) > 1:
        parts.append(f'<text x="{WIDTH - PAD}" y="{PLOT_HEIGHT - 8}" class="axis" text-anchor="end">'
                     f'{escape(days[-1])}</text>')
    for index, (name, values) in enumerate(series.items()):
        colour, name = COLOURS[index % len(COLOURS)], escape(name)
        points = " ".join(f"{x(i):.1f},{y(v):.1f}" for i, v in enumerate(values))
        parts.append(f'<g class="series"><polyline points="{points}" fill="none" stroke="{colour}" stroke-width="2"/>')
        parts.extend(f'<circle cx="{x(i):.1f}" cy="{y(v):.1f}" r="3" fill="{colour}"><title>{name} '
                     f'{escape(days[i])}: {v:,}</title></circle>' for i, v in enumerate(values))
        row = PLOT_HEIGHT + 4 + LEGEND_ROW * index
        parts.append(f'</g><rect x="{PAD}" y="{row}" width="12" height="12" rx="2" fill="{colour}"/>'
                     f'<text x="{PAD + 18}" y="{row + 10}" class="legend">{name} ({values[-1]:,})</text>')
    parts.append("</svg>")
    return "".join(parts)
