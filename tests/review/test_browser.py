"""The review flow end to end in a real browser: Playwright drives Debian's Chromium
(/usr/bin/chromium; `make test` installs it) against a live server on the test database.
Log in, approve with the keyboard and watch the item leave and the count drop, reject,
undo, edit then approve, bulk approve, merge, resolve a conflict. Any console error fails
the test; screenshots are kept under var/screenshots/."""

from __future__ import annotations

import os
import re
import time
from pathlib import Path

import pytest
from django.conf import settings

from entities.models import Entity
from memory.models import Memory
from review.models import ReviewItem
from tests.helpers import CHROMIUM
from tests.review import factories

SHOTS = Path(settings.BASE_DIR) / "var" / "screenshots"

pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.skipif(not os.path.exists(CHROMIUM), reason="make test installs Debian's chromium"),
]




@pytest.fixture
def page(browser, live_server, settings, request):
    settings.MNEMO_REVIEW_UNDO_SECONDS = 1.5
    context = browser.new_context(base_url=live_server.url, viewport={"width": 1280, "height": 900})
    page = context.new_page()
    problems: list[str] = []
    page.on("console", lambda msg: problems.append(f"console {msg.type}: {msg.text}") if msg.type == "error" else None)
    page.on("pageerror", lambda exc: problems.append(f"page error: {exc}"))
    yield page
    SHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SHOTS / f"{request.node.name}.png"), full_page=True)
    context.close()
    assert not problems, problems


def log_in(page, user):
    page.goto("/login/")
    page.fill("input[name=username]", user.get_username())
    page.fill("input[name=password]", "pw-" + user.get_username())
    page.click("button[type=submit]")
    page.wait_for_url("**/w/acme/")


def eventually(check, timeout: float = 10.0):
    """The decision is sent after the undo window: wait for the database to show it."""
    deadline = time.monotonic() + timeout
    while True:
        if check():
            return
        if time.monotonic() > deadline:
            raise AssertionError("the expected change never reached the database")
        time.sleep(0.1)


def status(kind: str, target) -> str:
    return ReviewItem.objects.filter(kind=kind, target_id=target.pk).order_by("-id").values_list("status", flat=True)[0]


def item_locator(page, kind: str, target):
    item = ReviewItem.objects.get(kind=kind, target_id=target.pk, status="pending")
    return page.locator(f"#item-{item.pk}")


@pytest.fixture
def queue(workspace, teammate):
    targets = factories.every_kind(workspace)
    return targets


def test_log_in_and_approve_with_the_keyboard(page, teammate, queue):
    from playwright.sync_api import expect

    log_in(page, teammate)
    page.click("nav.mainnav >> text=Review")
    expect(page.locator("#review-count")).to_have_text("8")
    first = page.locator("#queue article.item.current")
    expect(first).to_have_count(1)
    first_id = int(first.get_attribute("data-id"))
    page.keyboard.press("a")
    expect(page.locator(f"#item-{first_id}")).to_be_hidden()
    expect(page.locator("#review-count")).to_have_text("7")
    eventually(lambda: ReviewItem.objects.get(pk=first_id).status == "approved")
    expect(page.locator("#toast")).to_contain_text("Approved")
    page.reload()
    expect(page.locator(f"#item-{first_id}")).to_have_count(0)
    expect(page.locator("#review-count")).to_have_text("7")


def test_reject_with_the_keyboard_and_undo(page, teammate, queue):
    from playwright.sync_api import expect

    log_in(page, teammate)
    page.goto("/w/acme/review/?kind=memory")
    memory = item_locator(page, "memory", queue["memory"])
    memory.click()
    page.keyboard.press("r")
    expect(memory).to_be_hidden()
    page.keyboard.press("u")
    expect(memory).to_be_visible()
    expect(page.locator("#toast")).to_contain_text("Undone")
    time.sleep(2.0)  # longer than the undo window: nothing may have been sent
    assert status("memory", queue["memory"]) == "pending"
    memory.click()
    page.keyboard.press("r")
    eventually(lambda: status("memory", queue["memory"]) == "rejected")
    assert Memory.objects.get(pk=queue["memory"].pk).status == "invalid"


def test_edit_then_approve(page, teammate, queue):
    from playwright.sync_api import expect

    log_in(page, teammate)
    page.goto("/w/acme/review/?kind=memory")
    memory = item_locator(page, "memory", queue["memory"])
    memory.click()
    page.keyboard.press("e")
    field = memory.locator("textarea[name=change-text]")
    expect(field).to_be_focused()
    field.fill("Ada writes code in Helix.")
    memory.locator("form.edit-form button.approve").click()
    expect(memory).to_be_hidden()
    eventually(lambda: Memory.objects.filter(text="Ada writes code in Helix.", status="active").exists())
    assert status("memory", queue["memory"]) == "approved"


def test_bulk_approve(page, teammate, queue):
    from playwright.sync_api import expect

    log_in(page, teammate)
    page.goto("/w/acme/review/")
    items = page.locator("#queue article.item")
    chosen = [int(items.nth(n).get_attribute("data-id")) for n in (0, 1, 2)]
    page.keyboard.press("x")
    page.keyboard.press("j")
    page.keyboard.press("x")
    page.locator(f"#item-{chosen[2]} input.select").check()
    expect(page.locator("#selected-count")).to_have_text("3")
    page.click("#bulk button.approve")
    for item_id in chosen:
        expect(page.locator(f"#item-{item_id}")).to_be_hidden()
    expect(page.locator("#review-count")).to_have_text("5")
    eventually(lambda: ReviewItem.objects.filter(pk__in=chosen, status="approved").count() == 3)


def test_merge_into_a_similar_item(page, teammate, queue, workspace):
    from playwright.sync_api import expect

    helix = Entity.objects.create(workspace=workspace, kind="tool", name="Helix editor")
    log_in(page, teammate)
    page.goto("/w/acme/review/?kind=entity")
    entity = item_locator(page, "entity", queue["entity"])
    merge = entity.locator(f"button.merge-into[data-into='{helix.pk}']")
    expect(merge).to_be_visible()  # the similar items load when the item is revealed
    merge.click()
    expect(entity).to_be_hidden()
    eventually(lambda: Entity.objects.get(pk=queue["entity"].pk).merged_into_id == helix.pk)


def test_resolve_a_conflict_side_by_side(page, teammate, queue):
    from playwright.sync_api import expect

    log_in(page, teammate)
    page.goto("/w/acme/review/")
    page.click("text=Conflict inbox")
    conflict = page.locator("article.conflict").first
    expect(conflict.locator(".side-old")).to_contain_text("Ada lives in Porto.")
    expect(conflict.locator(".side-new")).to_contain_text("Ada lives in Lisbon.")
    SHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SHOTS / "conflict-inbox-before-the-decision.png"), full_page=True)
    conflict.locator("button.approve").click()
    eventually(lambda: Memory.objects.get(text="Ada lives in Porto.").status == "superseded")
    expect(page.locator("#review-count")).to_have_text("7")


def test_a_claim_is_one_card_approved_with_a_facet_unticked_and_another_rejected(page, teammate, workspace):
    from playwright.sync_api import expect

    from review.models import Claim
    from tests.review.test_claims_api import derive, facets, owner_status

    derive(workspace, "I work at Acme as a nurse.")
    derive(workspace)  # "I'm in Berlin now": the newest, first card
    berlin, acme = Claim.objects.filter(workspace=workspace, source_interaction__content__contains="Berlin").get(), \
        Claim.objects.filter(workspace=workspace, source_interaction__content__contains="Acme").get()
    f = facets(berlin)
    log_in(page, teammate)
    page.click("nav.mainnav >> text=Review")
    expect(page.locator("#review-count")).to_have_text("2")
    card = page.locator(f"#claim-{berlin.pk}")
    expect(card).to_have_class(re.compile(r"\bcurrent\b"))
    expect(card.locator("input.facet-tick")).to_have_count(4)
    expect(card.locator("blockquote mark")).to_have_text("I'm in Berlin now")
    card.locator(f"li[data-facet='{f['entity'].pk}'] input.facet-tick").uncheck()
    SHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SHOTS / "claim-card-with-a-facet-unticked.png"), full_page=True)
    page.keyboard.press("Escape")  # leave the checkbox: keys act on the current card again
    page.keyboard.press("a")
    expect(card).to_be_hidden()
    expect(page.locator("#review-count")).to_have_text("1")
    eventually(lambda: Claim.objects.get(pk=berlin.pk).status == "decided")
    expect(page.locator("#toast")).to_contain_text("3 approved, 1 rejected")
    assert owner_status(f["entity"]) == "invalid"
    assert {owner_status(f[k]) for k in ("memory", "relationship", "profile_value")} == {"active"}
    second = page.locator(f"#claim-{acme.pk}")
    expect(second).to_have_class(re.compile(r"\bcurrent\b"))
    page.keyboard.press("r")
    expect(second).to_be_hidden()
    eventually(lambda: Claim.objects.get(pk=acme.pk).status == "decided")
    assert set(acme.items.values_list("status", flat=True)) == {"rejected"}
