"""The calibration report as a reliability diagram (server-rendered SVG, no Django): for
each confidence bin, a bar of how often its decisions turned out well, a dot at the bin's
mean stated confidence, and the diagonal a perfectly calibrated agent would follow.

Drawn in a small viewBox that the page scales to its width, so the labels stay legible on
a 390 px phone screen."""

from __future__ import annotations

from html import escape

WIDTH, HEIGHT = 320, 280
LEFT, RIGHT, TOP, BOTTOM = 44, 18, 14, 42
TICKS = (0.0, 0.25, 0.5, 0.75, 1.0)


def _x(value: float) -> float:
    return LEFT + value * (WIDTH - LEFT - RIGHT)


def _y(value: float) -> float:
    return HEIGHT - BOTTOM - value * (HEIGHT - TOP - BOTTOM)


def reliability_diagram(report: dict) -> str:
    """The SVG for entities.calibration.calibration()'s report; "" with no reviewed decision."""
    if not report.get("count"):
        return ""
    brier = report["brier"]
    label = escape(f"Reliability diagram of {report['count']} reviewed decisions; Brier score {brier:.3f} "
                   f"(0 is perfect)")
    parts = [f'<svg class="chart calibration" viewBox="0 0 {WIDTH} {HEIGHT}" role="img" aria-label="{label}" '
             f'xmlns="http://www.w3.org/2000/svg"><title>{label}</title>']
    for tick in TICKS:
        parts.append(f'<line class="grid" x1="{_x(0):.1f}" x2="{_x(1):.1f}" y1="{_y(tick):.1f}" y2="{_y(tick):.1f}"/>'
                     f'<text class="axis" x="{LEFT - 4}" y="{_y(tick) + 4:.1f}" text-anchor="end">{tick:.0%}</text>'
                     f'<text class="axis" x="{_x(tick):.1f}" y="{HEIGHT - BOTTOM + 14}" text-anchor="middle">'
                     f'{tick:.0%}</text>')
    for b in report["bins"]:
        if not b["count"]:
            continue
        x0, x1 = _x(b["from"]) + 2, _x(b["to"]) - 2
        rate = b["success_rate"]
        tip = escape(f"{b['from']:.0%}–{b['to']:.0%} stated: {b['count']} decision{'s' if b['count'] != 1 else ''}, "
                     f"mean confidence {b['mean_confidence']:.0%}, turned out well {rate:.0%}")
        parts.append(f'<g class="bin"><title>{tip}</title>'
                     f'<rect class="observed" x="{x0:.1f}" y="{_y(rate):.1f}" width="{x1 - x0:.1f}" '
                     f'height="{_y(0) - _y(rate):.1f}"/>'
                     f'<circle class="stated" cx="{_x(b["mean_confidence"]):.1f}" cy="{_y(rate):.1f}" r="4"/>'
                     f'<text class="count" x="{(x0 + x1) / 2:.1f}" y="{_y(rate) - 7:.1f}" text-anchor="middle">'
                     f'n={b["count"]}</text></g>')
    parts.append(f'<line class="ideal" x1="{_x(0):.1f}" y1="{_y(0):.1f}" x2="{_x(1):.1f}" y2="{_y(1):.1f}"/>'
                 f'<text class="axis" x="{(_x(0) + _x(1)) / 2:.1f}" y="{HEIGHT - 6}" text-anchor="middle">'
                 f'Stated confidence</text>'
                 f'<text class="axis" transform="translate(11 {(_y(0) + _y(1)) / 2:.1f}) rotate(-90)" '
                 f'text-anchor="middle">Turned out well</text></svg>')
    return "".join(parts)
