"""Issue 21 part 5 in a real browser at 390 px (Debian Chromium through Playwright): the
statistics page's charts with one day of data fit the phone screen, their labels render at
a legible size, legend rows overlap neither each other nor the plot, each legend swatch has
its series' colour. Screenshot under var/screenshots/."""

from __future__ import annotations

import os

import pytest

from core.services import Actor
from review import services
from tests.helpers import CHROMIUM, SHOTS, log_in
from tests.review import factories

pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.skipif(not os.path.exists(CHROMIUM), reason="make test installs Debian's chromium"),
]


# What sticks out past the window's right edge, to name it when the page overflows.
WIDEST = """() => Array.from(document.querySelectorAll('body *'))
    .filter((el) => el.getBoundingClientRect().right > innerWidth + 0.5)
    .slice(0, 5).map((el) => el.tagName + '.' + el.className + '#' + el.id)"""


def fits(page) -> bool:
    return page.evaluate("document.documentElement.scrollWidth <= window.innerWidth")


def _overlap(a: dict, b: dict) -> bool:
    return (a["x"] < b["x"] + b["width"] and b["x"] < a["x"] + a["width"]
            and a["y"] < b["y"] + b["height"] and b["y"] < a["y"] + a["height"])


def test_the_statistics_charts_are_legible_at_390_px_with_one_day_of_data(page, teammate, workspace):
    for n, rule in enumerate(("rule.one", "rule.two", "rule.three", "rule.four")):
        memory = factories.memory_candidate(workspace, text=f"Decided by {rule}.", rule=rule)
        services.review_decide(item=factories.item_for("memory", memory), actor=Actor.for_user(teammate),
                               action="approve" if n % 2 else "reject")
    factories.memory_candidate(workspace, text="Still waiting.")
    page.set_viewport_size({"width": 390, "height": 844})
    log_in(page, teammate)
    page.goto("/w/acme/review/stats/?days=7")
    charts = page.locator("svg.chart")
    assert charts.count() == 4  # waited, had waited, per day, precision
    assert fits(page), page.evaluate(WIDEST)
    for n in range(4):
        chart = charts.nth(n)
        box = chart.bounding_box()
        assert box["x"] >= 0 and box["x"] + box["width"] <= 390
        sizes = chart.locator("text").evaluate_all("els => els.map((el) => el.getBoundingClientRect().height)")
        assert sizes and min(sizes) >= 9, sizes  # about 11-12 px: readable on the phone
        legend = chart.locator(".legend-item")
        boxes = [legend.nth(i).bounding_box() for i in range(legend.count())]
        plot = chart.locator("g.plot").bounding_box()
        for i, row in enumerate(boxes):
            assert row["y"] >= plot["y"] + plot["height"] - 1, "a legend row overlaps the plot"
            assert all(not _overlap(row, other) for other in boxes[i + 1:]), "two legend rows overlap"
            swatch = legend.nth(i).locator(".swatch").evaluate("el => getComputedStyle(el).fill")
            series = chart.locator("g.series").nth(i).evaluate("el => el.dataset.colour")
            assert swatch == "rgb({}, {}, {})".format(*(int(series[k:k + 2], 16) for k in (1, 3, 5))), (swatch, series)
    dots = page.locator("#precision-chart g.series circle")
    assert dots.count() == 4
    for a in range(4):
        for b in range(a + 1, 4):
            assert not _overlap(dots.nth(a).bounding_box(), dots.nth(b).bounding_box()), "two rules' dots overlap"
    page.locator("#queue-age-chart summary").click()
    assert page.locator("#queue-age-chart table").is_visible()
    assert fits(page), page.evaluate(WIDEST)  # the table scrolls inside its box
    SHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SHOTS / "review-stats-charts-390.png"), full_page=True)
