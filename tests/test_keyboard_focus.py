"""Issue 21 part 6: every action is reachable by keyboard, and keyboard focus is visible.
In a real browser (Playwright + Debian's Chromium), Tab walks the review queue (a card of
every kind) and the API keys page from the first element to the last: every visible control
on the page is reached, and each one, while it has the focus, wears a visible ring (computed
outline) that it loses when the focus moves on."""

from __future__ import annotations

import os

import pytest

from tests.helpers import CHROMIUM, log_in
from tests.review import factories
from tests.review.test_claims_api import derive

pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.skipif(not os.path.exists(CHROMIUM), reason="make test installs Debian's chromium"),
]

# Every control a keyboard user could want: numbered, so the walk can say which it reached.
# Cards (tabindex=-1) are left out: j/k move between them (tests/review/test_triage_browser.py).
MARK_CONTROLS = """() => {
  // checkVisibility: also false inside a closed <details> (its content is not rendered).
  const visible = el => el.checkVisibility({visibilityProperty: true, contentVisibilityAuto: true});
  const controls = [...document.querySelectorAll(
    'a[href], button, input:not([type=hidden]), select, textarea, summary, [tabindex]:not([tabindex="-1"])')]
    .filter(el => visible(el) && !el.disabled && !el.closest('[inert]'));
  controls.forEach((el, i) => { el.dataset.kb = String(i); });
  return controls.map(el => el.outerHTML.slice(0, 160));
}"""

# The focused element, its computed outline, and the outline of the one focused before it
# (now unfocused): a ring that stays after the focus leaves is no focus indicator.
FOCUSED = """() => {
  const el = document.activeElement;
  const ring = s => s.outlineStyle === 'none' ? 0 : parseFloat(s.outlineWidth);
  const prev = window.__kbPrevious;
  const before = prev && prev !== el && prev.isConnected ? ring(getComputedStyle(prev)) : null;
  window.__kbPrevious = el;
  if (!el || el === document.body) return {body: true, before};
  const style = getComputedStyle(el);
  return {
    kb: el.dataset.kb ?? null,
    what: el.tagName.toLowerCase() + (el.className ? '.' + String(el.className).trim().split(/\\s+/).join('.') : '')
      + ' "' + (el.innerText || el.value || el.getAttribute('aria-label') || '').trim().slice(0, 40) + '"',
    ring: ring(style), color: style.outlineColor, before,
  };
}"""


def tab_through(page) -> tuple[list[str], list[dict]]:
    """Load every lazy panel, number the controls, then press Tab from the top until the
    focus leaves the page; (the controls, what each Tab focused)."""
    page.wait_for_load_state("networkidle")
    page.evaluate("window.scrollTo(0, document.body.scrollHeight)")  # hx-trigger="intersect" panels
    page.wait_for_load_state("networkidle")
    page.evaluate("window.scrollTo(0, 0)")
    controls = page.evaluate(MARK_CONTROLS)
    # From the first control with the keyboard: focus it, leave the page backwards, come back.
    page.evaluate("document.querySelector('[data-kb=\"0\"]').focus()")
    page.keyboard.press("Shift+Tab")
    page.keyboard.press("Tab")
    page.evaluate("window.__kbPrevious = null")
    steps = [page.evaluate(FOCUSED)]
    for _ in range(len(controls) + 20):
        page.keyboard.press("Tab")
        step = page.evaluate(FOCUSED)
        if step.get("body") or step["kb"] == "0":
            break
        steps.append(step)
    return controls, steps


def assert_every_control_reached_with_a_visible_ring(controls: list[str], steps: list[dict]) -> None:
    reached = {step["kb"] for step in steps if step["kb"] is not None}
    missed = [html for i, html in enumerate(controls) if str(i) not in reached]
    assert not missed, f"not reached by Tab: {missed}"
    unringed = [controls[int(step["kb"])] if step["kb"] else step["what"] for step in steps
                if step["ring"] < 2 or step["color"].endswith(", 0)")]
    assert not unringed, f"focused without a visible ring: {unringed}"
    lingering = [step["what"] for step in steps[1:] if step["before"]]
    assert not lingering, f"the ring stays after the focus moves on: {lingering}"


def test_tab_reaches_every_control_of_the_review_queue_each_with_a_visible_ring(page, owner, workspace):
    factories.every_kind(workspace)
    derive(workspace)
    log_in(page, owner)
    page.goto("/w/acme/review/")
    controls, steps = tab_through(page)
    assert_every_control_reached_with_a_visible_ring(controls, steps)
    focused = " ".join(step["what"] for step in steps)
    # The queue's actions, for each kind of card, are among them (not only links and the nav).
    for control in ("a.skip", "input.select", "input.facet-tick", "button.approve", "button.reject",
                    "button.edit-toggle", "button.both", "button.merge", "button.link.show-shortcuts", 'input "'):
        assert control in focused, control
    # The skip link comes first and leads past the navigation to the queue.
    assert steps[0]["what"].startswith("a.skip")
    page.evaluate("document.querySelector('a.skip').focus()")
    page.keyboard.press("Enter")
    assert page.evaluate("document.activeElement.id") == "main"


def test_tab_reaches_every_control_of_the_api_keys_page_each_with_a_visible_ring(page, owner, workspace, make_key):
    make_key(workspace, name="ingest")
    log_in(page, owner)
    page.goto("/w/acme/keys/")
    controls, steps = tab_through(page)
    assert_every_control_reached_with_a_visible_ring(controls, steps)
    focused = " ".join(step["what"] for step in steps)
    for control in ('"Create key"', "input", "summary"):
        assert control in focused, control
