"""A gap's occurrences over time as a small inline SVG bar chart (pure: no Django)."""

from __future__ import annotations

from collections.abc import Sequence
from html import escape


def sparkline(counts: Sequence[int], *, width: int = 120, height: int = 24, label: str = "") -> str:
    """One bar per day, oldest left; scaled to the busiest day; a title for screen readers
    and hover. An all-zero series draws a flat baseline."""
    if not counts:
        return ""
    peak = max(counts) or 1
    step = width / len(counts)
    bars = []
    for i, n in enumerate(counts):
        h = 0 if n == 0 else max(2.0, (height - 2) * n / peak)
        bars.append(f'<rect x="{i * step:.1f}" y="{height - h:.1f}" width="{max(1.0, step - 1):.1f}" '
                    f'height="{h:.1f}"><title>{n}</title></rect>')
    title = escape(label or f"{sum(counts)} occurrences in {len(counts)} days")
    return (f'<svg class="spark" role="img" aria-label="{title}" viewBox="0 0 {width} {height}" width="{width}" '
            f'height="{height}"><title>{title}</title><line x1="0" y1="{height - 0.5}" x2="{width}" '
            f'y2="{height - 0.5}" class="base"/>{"".join(bars)}</svg>')
