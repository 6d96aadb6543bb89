"""Dashboard pages in a real browser at a phone's width (Playwright + Debian's Chromium):
nothing may make the page wider than the screen (issue 21: the home page's activity table
made it 612 px wide at 390 px)."""

from __future__ import annotations

import os

import pytest

from tests.helpers import CHROMIUM, log_in
from tests.review import factories

pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.skipif(not os.path.exists(CHROMIUM), reason="make test installs Debian's chromium"),
]

PHONE = {"width": 390, "height": 844}


def test_the_home_page_fits_a_390_px_phone(page, teammate, workspace):
    factories.every_kind(workspace)  # audit events with long verbs and targets fill the activity table
    page.set_viewport_size(PHONE)
    log_in(page, teammate)
    activity = page.locator("section.card:has(h2:text-is('Recent activity')) table")
    assert activity.locator("tbody tr").count() >= 5
    width = page.evaluate("document.documentElement.scrollWidth")
    assert width <= PHONE["width"], f"the home page is {width} px wide at {PHONE['width']} px"
    table = activity.bounding_box()
    assert table["x"] >= 0 and table["x"] + table["width"] <= PHONE["width"]
