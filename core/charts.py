"""Small server-rendered SVG charts for every app's pages (pure: no Django; in core so that
any layer may draw one): values over days as lines, values per label as (stacked) bars.

Issue 21 part 5: legible at 390 px — a narrow viewBox (WIDTH) that the page scales to its
width, so the 11-12 px labels stay about that size on a phone; x labels only where they
fit (the first and last day, or every bar's label when each has room); with one x value
the series' dots sit side by side instead of on one another. The legend sits under the
plot, one row per series, never on it. Every chart has a <title> and <desc>
(aria-labelledby) and, after the SVG, its numbers as a table in a <details>: the text
alternative. Colours are each at least 3:1 against the white card (WCAG 1.4.11, checked
by tests/core/test_charts.py) and far apart; lines also differ by dash pattern, so colour
is never the only cue."""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Mapping, Sequence
from datetime import date
from html import escape

WIDTH = 360
LEFT, RIGHT, TOP, BOTTOM = 40, 14, 12, 30  # the plot's margins: y labels left, x labels under it
PLOT_HEIGHT = 200  # the SVG above the legend
LEGEND_ROW = 18
# One x value puts every series on one x: their dots sit this far apart.
SAME_X_SPREAD = 16
# Blue, vermilion, green, purple, crimson, teal, brown, grey: darkened from Okabe & Ito's
# colour-blind-safe set until each reaches 3:1 on white.
PALETTE = ("#1d5fb4", "#c1440e", "#137a4f", "#7b3fa8", "#b0174a", "#0d6e7d", "#8a5a00", "#4b5563")
DASHES = ("", "6 3", "2 3", "8 3 2 3")
_ids = itertools.count(1)

Format = Callable[[float], str]


def count_format(value: float) -> str:
    return f"{value:,.0f}"


def percent_format(value: float) -> str:
    return f"{value:.0%}"


def colour(index: int) -> str:
    return PALETTE[index % len(PALETTE)]


def _luminance(hex_colour: str) -> float:
    channels = [int(hex_colour[i:i + 2], 16) / 255 for i in (1, 3, 5)]
    linear = [c / 12.92 if c <= 0.03928 else ((c + 0.055) / 1.055) ** 2.4 for c in channels]
    return 0.2126 * linear[0] + 0.7152 * linear[1] + 0.0722 * linear[2]


def contrast(a: str, b: str) -> float:
    """WCAG contrast ratio of two #rrggbb colours (1 to 21)."""
    la, lb = sorted((_luminance(a), _luminance(b)), reverse=True)
    return (la + 0.05) / (lb + 0.05)


def nice_ceiling(value: float) -> float:
    """The axis top: 1, 2, 2.5 or 5 times a power of ten, at least `value` (1 for nothing)."""
    if value <= 0:
        return 1
    power = 10 ** math.floor(math.log10(value))
    return next(step * power for step in (1, 2, 2.5, 5, 10) if step * power >= value)


def _y(value: float, top: float) -> float:
    return PLOT_HEIGHT - BOTTOM - value / top * (PLOT_HEIGHT - TOP - BOTTOM)


def _svg_head(title: str, description: str, height: float, css: str) -> str:
    n = next(_ids)
    classes = escape(f"chart {css}".strip())
    return (f'<svg class="{classes}" viewBox="0 0 {WIDTH} {height:.0f}" role="img" '
            f'aria-labelledby="chart-{n}-title chart-{n}-desc" xmlns="http://www.w3.org/2000/svg">'
            f'<title id="chart-{n}-title">{escape(title)}</title><desc id="chart-{n}-desc">{escape(description)}</desc>')


def _axes(top: float, fmt: Format) -> list[str]:
    parts = []
    # A count axis has no half-way tick between 0 and 1, or 0 and 5: it would read "0" or "2".
    middle = () if fmt is count_format and not (top / 2).is_integer() else (top / 2,)
    for value in (0, *middle, top):
        y = _y(value, top)
        parts.append(f'<line x1="{LEFT}" x2="{WIDTH - RIGHT}" y1="{y:.1f}" y2="{y:.1f}" class="grid"/>'
                     f'<text x="{LEFT - 4}" y="{y + 4:.1f}" class="axis" text-anchor="end">{escape(fmt(value))}</text>')
    return parts


def _x_labels(labels: Sequence[str], xs: Sequence[float]) -> list[str]:
    """Each label under its x when every one has room, else the first and the last, held
    inside the plot's edges so neither is cut nor runs into the other."""
    baseline = PLOT_HEIGHT - BOTTOM + 16
    room = (WIDTH - LEFT - RIGHT) / len(labels)
    if room >= 6.5 * max(len(label) for label in labels):
        return [f'<text x="{x:.1f}" y="{baseline}" class="axis" text-anchor="middle">{escape(label)}</text>'
                for label, x in zip(labels, xs)]
    return [f'<text x="{LEFT}" y="{baseline}" class="axis">{escape(labels[0])}</text>',
            f'<text x="{WIDTH - RIGHT}" y="{baseline}" class="axis" text-anchor="end">{escape(labels[-1])}</text>']


def _legend(names: Sequence[str], totals: Sequence[str], dashed: bool) -> list[str]:
    parts = []
    for index, name in enumerate(names):
        row = PLOT_HEIGHT + 2 + LEGEND_ROW * index
        sample = ""
        if dashed:
            sample = (f'<line x1="{LEFT + 16}" x2="{LEFT + 34}" y1="{row + 6}" y2="{row + 6}" stroke="{colour(index)}" '
                      f'stroke-width="2"{_dash(index)}/>')
        text_x = LEFT + (40 if dashed else 18)
        total = f" ({escape(totals[index])})" if totals[index] else ""
        parts.append(f'<g class="legend-item"><rect class="swatch" x="{LEFT}" y="{row}" width="12" height="12" rx="2" '
                     f'fill="{colour(index)}"/>{sample}<text x="{text_x}" y="{row + 10}" class="legend">'
                     f'{escape(name)}{total}</text></g>')
    return parts


def _dash(index: int) -> str:
    pattern = DASHES[index % len(DASHES)]
    return f' stroke-dasharray="{pattern}"' if pattern else ""


def _table(x_title: str, labels: Sequence[str], series: Mapping[str, Sequence[float | None]], fmt: Format) -> str:
    head = "".join(f"<th scope=\"col\">{escape(name)}</th>" for name in series)
    rows = "".join(
        f'<tr><th scope="row">{escape(label)}</th>'
        + "".join(f"<td>{'—' if values[i] is None else escape(fmt(values[i]))}</td>" for values in series.values())
        + "</tr>" for i, label in enumerate(labels))
    return (f'<details class="chart-data"><summary>The numbers</summary><div class="table-scroll">'
            f'<table class="table"><thead><tr><th scope="col">{escape(x_title)}</th>{head}</tr></thead>'
            f"<tbody>{rows}</tbody></table></div></details>")


def _positions(labels: Sequence[str]) -> list[float]:
    """x of each label: by date when every label is an ISO date (gaps between days show),
    else evenly spaced."""
    span = WIDTH - LEFT - RIGHT
    if len(labels) == 1:
        return [LEFT + span / 2]
    try:
        days = [date.fromisoformat(label) for label in labels]
    except ValueError:
        return [LEFT + 8 + i / (len(labels) - 1) * (span - 16) for i in range(len(labels))]
    total = max(1, (days[-1] - days[0]).days)
    return [LEFT + 8 + (day - days[0]).days / total * (span - 16) for day in days]


def line_chart(labels: Sequence[str], series: Mapping[str, Sequence[float | None]], *, title: str,
               description: str = "", fmt: Format = count_format, top: float | None = None,
               x_title: str = "Day", totals: Sequence[str] | None = None, css: str = "") -> str:
    """One line per series over `labels` (ISO days, oldest first, or any labels), a value per
    label per series (None: no value that day; the line joins the days that have one), y
    from 0 to `top` (the largest value rounded up when not given). The SVG, then its numbers
    as a table. Nothing to draw: ""."""
    if not labels or not series or not any(v is not None for values in series.values() for v in values):
        return ""
    top = top or nice_ceiling(max(v for values in series.values() for v in values if v is not None))
    xs = _positions(labels)
    names = list(series)
    height = PLOT_HEIGHT + LEGEND_ROW * len(names) + 6
    parts = [_svg_head(title, description or title, height, css), '<g class="plot">', *_axes(top, fmt),
             *_x_labels(labels, xs)]
    for index, (name, values) in enumerate(series.items()):
        shift = (index - (len(names) - 1) / 2) * SAME_X_SPREAD if len(labels) == 1 else 0
        points = [(xs[i] + shift, _y(v, top), labels[i], v) for i, v in enumerate(values) if v is not None]
        parts.append(f'<g class="series" data-colour="{colour(index)}"><title>{escape(name)}</title>')
        if points:  # a single point draws no line, only its dot
            parts.append(f'<polyline points="{" ".join(f"{x:.1f},{y:.1f}" for x, y, _, _ in points)}" fill="none" '
                         f'stroke="{colour(index)}" stroke-width="2"{_dash(index)}/>')
        parts.extend(f'<circle cx="{x:.1f}" cy="{y:.1f}" r="3.5" fill="{colour(index)}"><title>{escape(name)} '
                     f'{escape(label)}: {escape(fmt(v))}</title></circle>' for x, y, label, v in points)
        parts.append("</g>")
    parts.append("</g>")
    parts.extend(_legend(names, totals or [""] * len(names), dashed=True))
    parts.append("</svg>")
    return "".join(parts) + _table(x_title, labels, series, fmt)


def bar_chart(labels: Sequence[str], series: Mapping[str, Sequence[float]], *, title: str, description: str = "",
              fmt: Format = count_format, x_title: str = "", totals: Sequence[str] | None = None,
              css: str = "") -> str:
    """A bar per label, its series stacked bottom up in order (one series: plain bars).
    The SVG, then its numbers as a table. Nothing but zeros still draws (an empty queue is
    an answer); no label or no series: ""."""
    if not labels or not series:
        return ""
    sums = [sum(values[i] for values in series.values()) for i in range(len(labels))]
    top = nice_ceiling(max(sums))
    span = WIDTH - LEFT - RIGHT
    step = span / len(labels)
    width = max(1.0, min(36.0, step * 0.7))
    xs = [LEFT + step * (i + 0.5) for i in range(len(labels))]
    names = list(series)
    legend = len(names) > 1
    height = PLOT_HEIGHT + (LEGEND_ROW * len(names) + 6 if legend else 6)
    parts = [_svg_head(title, description or title, height, css), '<g class="plot">', *_axes(top, fmt),
             *_x_labels(labels, xs)]
    base = [0.0] * len(labels)
    for index, (name, values) in enumerate(series.items()):
        parts.append(f'<g class="series" data-colour="{colour(index)}"><title>{escape(name)}</title>')
        for i, value in enumerate(values):
            if not value:
                continue
            y0, y1 = _y(base[i], top), _y(base[i] + value, top)
            parts.append(f'<rect x="{xs[i] - width / 2:.1f}" y="{y1:.1f}" width="{width:.1f}" height="{y0 - y1:.1f}" '
                         f'fill="{colour(index)}"><title>{escape(labels[i])}: {escape(fmt(value))} {escape(name)}'
                         f'</title></rect>')
            base[i] += value
        parts.append("</g>")
    parts.append("</g>")
    if legend:
        parts.extend(_legend(names, totals or [""] * len(names), dashed=False))
    parts.append("</svg>")
    return "".join(parts) + _table(x_title or "", labels, series, fmt)


def counts_chart(days: Sequence[str], series: Mapping[str, Sequence[int]], *, label: str) -> str:
    """Counts over days (ISO dates, oldest first, one value per day per series) as lines;
    the legend names each series with its latest count. Nothing to draw: ""."""
    if not days or not series:
        return ""
    latest = [count_format(values[-1]) for values in series.values()]
    described = ", ".join(f"{name} {n}" for name, n in zip(series, latest))
    return line_chart(days, series, title=label, totals=latest,
                      description=f"{label} per day from {days[0]} to {days[-1]}; on {days[-1]}: {described}.")
