"""Issue 21 part 3 in a real browser (Debian Chromium through Playwright, as in
test_browser.py): fifty items reviewed with the keyboard only — approve, reject, undo,
edit, select two and act on the selection, merge into the top similar item — across two
pages; `?` lists every shortcut; `o`/Enter open the item's page; "select all" decides
every card the filters match after confirming the count; the undo toast counts down and
never covers the current card's buttons. Screenshots under var/screenshots/."""

from __future__ import annotations

import os
import re

import pytest

from memory import services as memory_services
from memory.models import Memory
from memory.services import Draft, Evidence
from review import views as review_views
from review.models import ReviewItem
from tests.helpers import CHROMIUM, SHOTS
from tests.review import factories
from tests.review.test_browser import eventually

pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.skipif(not os.path.exists(CHROMIUM), reason="make test installs Debian's chromium"),
]


def candidate(workspace, n: int, text: str | None = None) -> Memory:
    content = f"Note {n}: I like tea number {n}. That is all."
    source = factories.message(workspace, content=content)
    quote = f"I like tea number {n}"
    return memory_services.memory_store(workspace_id=workspace.pk, draft=Draft(
        type="preference", text=text or f"Ada likes tea number {n}.", certainty="inferred", confidence=0.6,
        rule="preference.like", source="rule:preference.like", subject_id=source.entity_id,
        evidence=[Evidence(source.id, quote, content.find(quote), content.find(quote) + len(quote))])).memory


def log_in_by_keyboard(page, user):
    page.goto("/login/")
    page.fill("input[name=username]", user.get_username())
    page.fill("input[name=password]", "pw-" + user.get_username())
    page.keyboard.press("Enter")
    page.wait_for_url("**/w/acme/")


def current_id(page) -> int:
    from playwright.sync_api import expect

    current = page.locator("#queue article.item.current")
    expect(current).to_have_count(1)  # after a page empties, the next one loads with a current card
    return int(current.get_attribute("data-id"))


def test_keyboard_only_review_of_fifty_items(page, teammate, workspace, settings):
    from playwright.sync_api import expect

    settings.MNEMO_REVIEW_UNDO_SECONDS = 0.5
    existing = memory_services.memory_store(workspace_id=workspace.pk, draft=Draft(
        type="preference", text="Ada's favourite editor is Helix.", certainty="verbatim", confidence=1.0)).memory
    assert existing.status == "active"
    targets = [candidate(workspace, n) for n in range(49)]
    twin = candidate(workspace, 49, text="Ada's favourite editor is Helix, she says.")  # the newest: first card
    log_in_by_keyboard(page, teammate)
    page.goto("/w/acme/review/")
    expect(page.locator("#review-count")).to_have_text("50")

    page.keyboard.press("?")
    shortcuts = page.locator("dialog#shortcuts")
    expect(shortcuts).to_be_visible()
    for key in "jkaremoxu*/?":
        expect(shortcuts.locator(f"kbd:text-is('{key}')").first).to_be_attached()
    page.keyboard.press("Escape")
    expect(shortcuts).to_be_hidden()

    # m: the merge confirmation of the top similar item; Enter confirms it.
    first = current_id(page)
    assert ReviewItem.objects.get(pk=first).target_id == twin.pk
    page.keyboard.press("m")
    dialog = page.locator(f"#item-{first} dialog.merge-confirm[open]")
    expect(dialog).to_be_visible()
    expect(dialog.locator(".merge-into-side")).to_contain_text("Ada's favourite editor is Helix.")
    page.keyboard.press("Enter")
    expect(page.locator(f"#item-{first}")).to_be_hidden()
    decided = 1

    # r then u: the card comes back and nothing is sent; then e, Tab to the button, Enter.
    undone = current_id(page)
    page.keyboard.press("r")
    expect(page.locator(f"#item-{undone}")).to_be_hidden()
    page.keyboard.press("u")
    expect(page.locator(f"#item-{undone}")).to_be_visible()
    assert current_id(page) == undone
    page.keyboard.press("e")
    field = page.locator(f"#item-{undone} textarea[name=change-text]")
    expect(field).to_be_focused()
    page.keyboard.press("Control+a")
    page.keyboard.type("Ada drinks tea, edited by keyboard.")
    page.keyboard.press("Tab")
    page.keyboard.press("Tab")
    expect(page.locator(f"#item-{undone} form.edit-form button.approve")).to_be_focused()
    page.keyboard.press("Enter")
    expect(page.locator(f"#item-{undone}")).to_be_hidden()
    decided += 1

    # x, j, x, a: two selected cards approved at once; then a and r by turns.
    selected = [current_id(page)]
    page.keyboard.press("x")
    page.keyboard.press("j")
    selected.append(current_id(page))
    page.keyboard.press("x")
    expect(page.locator("#selected-count")).to_have_text("2")
    page.keyboard.press("a")
    for item_id in selected:
        expect(page.locator(f"#item-{item_id}")).to_be_hidden()
    expect(page.locator("#toast")).to_contain_text("Approved 2 cards")
    decided += 2

    rejected = []
    while decided < 50:
        item_id = current_id(page)
        key = "r" if decided % 3 == 0 else "a"
        if key == "r":
            rejected.append(item_id)
        page.keyboard.press(key)
        expect(page.locator(f"#item-{item_id}")).to_be_hidden()
        decided += 1
        if decided == 30:
            SHOTS.mkdir(parents=True, exist_ok=True)
            page.screenshot(path=str(SHOTS / "keyboard-review-second-page.png"), full_page=True)

    expect(page.locator("#review-count")).to_have_text("0")
    eventually(lambda: not ReviewItem.objects.filter(status="pending").exists(), timeout=30)
    assert ReviewItem.objects.get(pk=first).decision == "merge"
    assert Memory.objects.get(pk=twin.pk).duplicate_of_id == existing.pk
    assert Memory.objects.filter(text="Ada drinks tea, edited by keyboard.", status="active").exists()
    assert set(ReviewItem.objects.filter(pk__in=rejected).values_list("status", flat=True)) == {"rejected"}
    assert ReviewItem.objects.filter(kind="memory", status="approved").exclude(pk=first).count() == 49 - len(rejected)
    assert Memory.objects.filter(pk__in=[t.pk for t in targets], status="candidate").count() == 0
    expect(page.locator("#queue")).to_contain_text("Nothing waits for review.")


def test_o_and_enter_open_the_items_page(page, teammate, workspace):
    from playwright.sync_api import expect

    older, newer = candidate(workspace, 1), candidate(workspace, 2)
    log_in_by_keyboard(page, teammate)
    page.goto("/w/acme/review/")
    expect(page.locator("#queue article.item.current .why")).to_contain_text("rule preference.like looks for")
    page.keyboard.press("o")
    page.wait_for_url(f"**/w/acme/memories/{newer.pk}/")
    page.go_back()
    expect(page.locator("#queue article.item.current")).to_have_count(1)
    page.keyboard.press("j")
    page.keyboard.press("Enter")
    page.wait_for_url(f"**/w/acme/memories/{older.pk}/")


def test_search_by_keyboard_and_select_all_matching_across_pages(page, teammate, workspace, monkeypatch):
    from playwright.sync_api import expect

    monkeypatch.setattr(review_views, "PAGE_SIZE", 3)
    teas = [candidate(workspace, n) for n in range(5)]
    other = candidate(workspace, 99, text="Ada keeps bees.")
    log_in_by_keyboard(page, teammate)
    page.goto("/w/acme/review/")
    page.keyboard.press("/")
    search = page.locator(".queue-search input[name=q]")
    expect(search).to_be_focused()
    page.keyboard.type("likes tea")
    page.keyboard.press("Enter")
    page.wait_for_url(re.compile(r".*\?q=likes\+tea$"))
    expect(page.locator("#queue article.item")).to_have_count(3)
    page.click("#select-matching")
    dialog = page.locator("dialog#bulk-matching")
    expect(dialog).to_be_visible()
    expect(dialog).to_contain_text("Decide all 5 matching cards?")
    expect(page.locator("#selected-count")).to_have_text("All 5 matching")
    SHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SHOTS / "select-all-matching-confirmation.png"), full_page=True)
    dialog.locator("button.reject").click()
    expect(page.locator("#toast")).to_contain_text("Rejected 5 matching cards.")
    expect(page.locator("#queue")).to_contain_text("Nothing waits for review with these filters.")
    assert set(Memory.objects.filter(pk__in=[t.pk for t in teas]).values_list("status", flat=True)) == {"invalid"}
    assert Memory.objects.get(pk=other.pk).status == "candidate"


@pytest.mark.parametrize("width", [1280, 390])
def test_the_undo_toast_counts_down_and_never_covers_the_buttons(page, teammate, workspace, settings, width):
    from playwright.sync_api import expect

    settings.MNEMO_REVIEW_UNDO_SECONDS = 60
    for n in range(12):
        candidate(workspace, n)
    page.set_viewport_size({"width": width, "height": 800})
    log_in_by_keyboard(page, teammate)
    page.goto("/w/acme/review/")
    page.keyboard.press("r")
    toast = page.locator("#toast")
    expect(toast).to_contain_text("sending in 60 s")
    expect(toast).to_contain_text("sending in 59 s")  # it counts down
    for _ in range(10):
        # Once the card's similar items have loaded (the layout settles), its buttons are clear.
        page.wait_for_function("""() => {
            const current = document.querySelector('#queue article.item.current');
            if (current.querySelector('.similar-box').textContent.includes('Looking for similar')) return false;
            const a = current.querySelector('form.actions').getBoundingClientRect();
            const b = document.getElementById('toast').getBoundingClientRect();
            return a.bottom <= b.top || b.bottom <= a.top || a.right <= b.left || b.right <= a.left;
        }""", timeout=5_000)
        page.keyboard.press("j")
    SHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SHOTS / f"undo-toast-{width}.png"))
    page.keyboard.press("u")
    expect(toast).to_contain_text("Undone")
