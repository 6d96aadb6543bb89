"""Issue 21 part 6: every action is reachable by keyboard, and keyboard focus is visible.
The check itself lives in tests/keyboard.py and runs on every page in the every-page sweep
(tests/test_every_page.py). Here: that it finds each kind of defect on a page made to have
them (a check that cannot fail is worse than none), and, on the review queue and the API keys
page, which controls Tab reaches (the queue's actions for each kind of card, not only links)."""

from __future__ import annotations

import os

import pytest

from tests.helpers import CHROMIUM, log_in
from tests.keyboard import KEYBOARD_INIT, dialog_problems, keyboard_problems
from tests.review import factories
from tests.review.test_claims_api import derive

pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.skipif(not os.path.exists(CHROMIUM), reason="make test installs Debian's chromium"),
]

# One of each defect, each beside a control that is fine. Tab is trapped in the last field.
FLAWED = """<!doctype html><html lang="en"><head><title>flawed</title><style>
  :focus-visible { outline: 3px solid blue; }
  .bare:focus-visible { outline: none; }
  .menu ul { display: none; position: absolute; } .menu:hover ul { display: block; }
  details.pop ul { position: absolute; }
</style></head><body>
  <a href="#ok">A fine link</a>
  <div class="clicky" onclick="location.hash = 'x'">A div that acts on a click only</div>
  <span class="listened">A span with a click listener</span>
  <button class="bare">A button that hides its focus</button>
  <div class="menu"><span>Hover menu</span><ul><li>revealed on hover only</li></ul></div>
  <details class="pop"><summary>Pop-up menu</summary><ul><li><a href="#in">In the menu</a></li></ul></details>
  <div tabindex="0" class="skipped" style="display:none">hidden, not a control</div>
  <input class="trap" aria-label="A field that keeps the focus">
  <script>
    document.querySelector('.listened').addEventListener('click', () => {});
    document.querySelector('.trap').addEventListener('keydown', e => { if (e.key === 'Tab') e.preventDefault(); });
  </script>
</body></html>"""


def test_the_keyboard_check_finds_each_kind_of_defect(browser):
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    context.add_init_script(KEYBOARD_INIT)
    page = context.new_page()
    page.route("http://flawed.test/", lambda route: route.fulfill(body=FLAWED, content_type="text/html"))
    page.goto("http://flawed.test/")
    reached, problems = keyboard_problems(page)
    context.close()
    found = "\n".join(problems)
    assert "keyboard trap" in found and "input.trap" in found, found
    assert 'focused without a visible indicator: [\'button.bare "A button that hides its focus"\']' in found, found
    assert "acts on the mouse only: <div class=\"clicky\"" in found, found
    assert "acts on the mouse only: <span class=\"listened\"" in found, found
    assert "shown on hover only: .menu:hover ul" in found, found
    assert 'menu summary "Pop-up menu": Escape leaves it open' in found, found
    assert len(problems) == 6, found  # the trap, the ring, two mouse-only elements, the hover rule, the menu
    assert not [found for found in problems[1:] if "A fine link" in found]  # only the trap's path names it


def walk(page) -> str:
    """The keyboard check on the page as loaded: no problem; what Tab focused, in order."""
    reached, problems = keyboard_problems(page)
    assert not problems, problems
    return " ".join(step["what"] for step in page.evaluate("window.__kb.steps"))


def test_tab_reaches_every_control_of_the_review_queue_each_with_a_visible_ring(page, owner, workspace):
    factories.every_kind(workspace)
    derive(workspace)
    page.set_viewport_size({"width": 1100, "height": 900})  # the stacked cards: every card's actions show
    page.add_init_script(KEYBOARD_INIT)
    log_in(page, owner)
    page.goto("/w/acme/review/")
    focused = walk(page)
    # The queue's actions, for each kind of card, are among them (not only links and the nav).
    for control in ("a.skip", "input.select", "input.facet-tick", "button.approve", "button.reject",
                    "button.edit-toggle", "button.both", "button.merge", "button.link.show-shortcuts", "input"):
        assert control in focused, control
    # The skip link comes first and leads past the navigation to the queue.
    assert focused.startswith("a.skip")
    page.evaluate("document.querySelector('a.skip').focus()")
    page.keyboard.press("Enter")
    assert page.evaluate("document.activeElement.id") == "main"
    # `?` from the current card opens the shortcuts; Escape closes them and the card has the focus again.
    assert not dialog_problems(page, "document.querySelector('#queue article.item.current')", "?", "shortcuts")
    assert page.evaluate("document.activeElement.matches('article.item.current')")


def test_tab_reaches_every_control_of_the_api_keys_page_each_with_a_visible_ring(page, owner, workspace, make_key):
    make_key(workspace, name="ingest")
    page.add_init_script(KEYBOARD_INIT)
    log_in(page, owner)
    page.goto("/w/acme/keys/")
    focused = walk(page)
    for control in ('"Create key"', "input", "summary"):
        assert control in focused, control


def test_in_the_list_and_detail_layout_tab_reaches_every_card_and_the_current_cards_actions(page, owner, workspace):
    """From 1200 px only the current card's detail shows (j/k change it): Tab reaches every
    card's checkbox in the list and the current card's facets and buttons, each with a ring."""
    factories.every_kind(workspace)
    derive(workspace)  # the newest card, current on arrival: a claim of four facets
    page.add_init_script(KEYBOARD_INIT)
    log_in(page, owner)
    page.goto("/w/acme/review/")
    assert "list-detail" in page.get_attribute("#review-app", "class")
    focused = walk(page)
    cards = page.locator("#queue article.item").count()
    assert focused.count("input.select") == cards > 5
    assert focused.count("input.facet-tick") == 4
    for control in ("button.approve", "button.reject", "button.link.show-shortcuts"):
        assert control in focused, control
    assert "button.both" not in focused  # the conflict card's detail is not shown until it is current
    page.keyboard.press("Escape")
    page.evaluate("document.querySelector('#queue article.item.current').focus()")
    for _ in range(cards):
        if page.get_attribute("#queue article.item.current", "aria-label").startswith("Contradiction"):
            break
        page.keyboard.press("j")
    assert "button.both" in walk(page)
