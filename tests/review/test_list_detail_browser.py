"""Issue 21 part 3, "a list + detail layout on wide screens", in a real browser (Debian
Chromium through Playwright, as in test_triage_browser.py): from 1200 px the queue is the
list of cards on the left and the current card's detail on the right (the source message
with the quote marked, why, confidence, similar items, the buttons); j/k move the current
card and the detail follows; deciding by keyboard works as in the stacked layout; narrower
screens keep the stacked cards. axe-core finds nothing serious; screenshots under
var/screenshots/."""

from __future__ import annotations

import os

import pytest

from review.models import Claim, ReviewItem
from tests.helpers import CHROMIUM, SHOTS
from tests.review.test_browser import eventually
from tests.review.test_claims_api import derive
from tests.review.test_triage_browser import candidate, current_id, log_in_by_keyboard

pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.skipif(not os.path.exists(CHROMIUM), reason="make test installs Debian's chromium"),
]

SERIOUS = ("serious", "critical")
# Where the current card's detail is, and whether each card's detail shows.
GEOMETRY = """() => {
  const box = el => { const r = el.getBoundingClientRect(); return {left: r.left, right: r.right, top: r.top, bottom: r.bottom}; };
  const current = document.querySelector('#queue article.item.current');
  const visible = el => el.checkVisibility();
  return {
    card: box(current), detail: box(current.querySelector('.detail')),
    shown: Array.from(document.querySelectorAll('#queue article.item .detail')).filter(visible).length,
    cards: document.querySelectorAll('#queue article.item:not([hidden])').length,
    width: document.scrollingElement.scrollWidth, viewport: innerWidth, height: innerHeight,
  };
}"""


def _serious(page) -> list[str]:
    from axe_playwright_python.sync_playwright import Axe

    return [f"{v['id']}: {v['help']}" for v in Axe().run(page).response["violations"] if v["impact"] in SERIOUS]


def _shot(page, name: str) -> None:
    SHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SHOTS / f"{name}.png"), full_page=True)


def test_wide_screens_show_the_list_and_the_current_cards_detail_beside_it(page, teammate, workspace, settings):
    from playwright.sync_api import expect

    settings.MNEMO_REVIEW_UNDO_SECONDS = 0
    teas = [candidate(workspace, n) for n in range(6)]
    derive(workspace)  # "I'm in Berlin now": a claim of four facets, the newest card
    claim = Claim.objects.get(workspace=workspace, source_interaction__content__contains="Berlin")
    page.set_viewport_size({"width": 1280, "height": 900})
    log_in_by_keyboard(page, teammate)
    page.goto("/w/acme/review/")
    expect(page.locator("#review-app")).to_have_class("review list-detail")
    first = page.locator(f"#claim-{claim.pk}")
    expect(first).to_have_class("item claim current")
    detail = first.locator(".detail")
    expect(detail.locator(".detail-head")).to_contain_text(claim.label)
    expect(detail.locator("blockquote mark")).to_have_text("I'm in Berlin now")
    expect(detail.locator("input.facet-tick")).to_have_count(4)
    expect(detail.locator("button.approve")).to_be_visible()
    shape = page.evaluate(GEOMETRY)
    assert shape["shown"] == 1 and shape["cards"] == 7  # one detail: the current card's
    assert shape["detail"]["left"] >= shape["card"]["right"]  # beside the list, not below the card
    assert shape["detail"]["bottom"] <= shape["height"]
    assert shape["width"] <= shape["viewport"]
    assert _serious(page) == []
    _shot(page, "review-list-detail-1280")

    # j/k move the current card; the detail follows, with the card's why, confidence and similar items.
    page.keyboard.press("j")
    second = page.locator(f"#item-{current_id(page)}")
    assert ReviewItem.objects.get(pk=current_id(page)).target_id == teas[-1].pk
    expect(detail).to_be_hidden()
    expect(second.locator(".detail .detail-head")).to_contain_text(teas[-1].text)
    expect(second.locator(".detail .why")).to_contain_text("Confidence 0.60")
    expect(second.locator(".detail blockquote mark")).to_have_text("I like tea number 5")
    expect(second.locator(".detail .similar-box")).not_to_contain_text("Looking for similar")
    shape = page.evaluate(GEOMETRY)
    assert shape["shown"] == 1 and shape["detail"]["left"] >= shape["card"]["right"]
    _shot(page, "review-list-detail-second-card-1280")
    page.keyboard.press("k")
    expect(first).to_have_class("item claim current")
    expect(detail).to_be_visible()

    # Keyboard-only triage: approve the claim, reject the next card; the detail moves on each time.
    page.keyboard.press("a")
    expect(first).to_be_hidden()
    eventually(lambda: Claim.objects.get(pk=claim.pk).status == "decided")
    expect(second).to_have_class("item current")
    expect(second.locator(".detail")).to_be_visible()
    page.keyboard.press("r")
    eventually(lambda: ReviewItem.objects.get(kind="memory", target_id=teas[-1].pk).status == "rejected")
    third = page.locator(f"#item-{current_id(page)}")
    expect(third.locator(".detail")).to_be_visible()
    assert page.evaluate(GEOMETRY)["shown"] == 1


@pytest.mark.parametrize("width", [1100, 390])
def test_narrower_screens_keep_the_stacked_cards(page, teammate, workspace, width):
    from playwright.sync_api import expect

    for n in range(4):
        candidate(workspace, n)
    page.set_viewport_size({"width": width, "height": 900})
    log_in_by_keyboard(page, teammate)
    page.goto("/w/acme/review/")
    expect(page.locator("#review-app")).not_to_have_class("review list-detail")
    expect(page.locator("#queue article.item.current .detail-head")).to_be_hidden()
    shape = page.evaluate(GEOMETRY)
    assert shape["shown"] == 4  # every card shows its detail under its own line
    assert shape["detail"]["top"] >= shape["card"]["top"] and shape["detail"]["right"] <= shape["card"]["right"]
    assert shape["width"] <= width
    assert _serious(page) == []
    _shot(page, f"review-stacked-{width}")


def test_the_layout_follows_a_window_resized_across_the_threshold(page, teammate, workspace):
    from playwright.sync_api import expect

    for n in range(3):
        candidate(workspace, n)
    page.set_viewport_size({"width": 1100, "height": 900})
    log_in_by_keyboard(page, teammate)
    page.goto("/w/acme/review/")
    app = page.locator("#review-app")
    expect(app).to_have_class("review")
    page.set_viewport_size({"width": 1300, "height": 900})
    expect(app).to_have_class("review list-detail")
    assert page.evaluate(GEOMETRY)["shown"] == 1
    page.set_viewport_size({"width": 1100, "height": 900})
    expect(app).to_have_class("review")
    assert page.evaluate(GEOMETRY)["shown"] == 3
