"""Issue 21 part 4's pages in a real browser (Playwright + Debian's Chromium, as the review
flow's tests): an admin creates a key on the keys page, choosing its agent by searching its
name, and sees the key once; at 390 px no new page scrolls sideways. Screenshots are kept
under var/screenshots/."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest
from django.conf import settings

from core.models import ApiKey
from core.services import api_key_verify
from entities import decisions
from entities.models import Entity
from tests.helpers import CHROMIUM
from tests.helpers import log_in
from tests.live_requests import close_live_context, live_context

SHOTS = Path(settings.BASE_DIR) / "var" / "screenshots"

pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.skipif(not os.path.exists(CHROMIUM), reason="make test installs Debian's chromium"),
]


def _page(browser, live_server, request, width: int, height: int):
    context = live_context(browser, live_server, viewport={"width": width, "height": height})
    page = context.new_page()
    problems: list[str] = []
    page.on("console", lambda msg: problems.append(f"console {msg.type}: {msg.text}") if msg.type == "error" else None)
    page.on("pageerror", lambda exc: problems.append(f"page error: {exc}"))
    return context, page, problems


def test_an_admin_creates_a_key_for_an_agent_and_sees_it_once(browser, live_server, request, owner, workspace):
    from playwright.sync_api import expect

    bot = Entity.objects.create(workspace=workspace, kind="agent", name="triage-bot")
    Entity.objects.create(workspace=workspace, kind="agent", name="summary-bot")
    context, page, problems = _page(browser, live_server, request, 1280, 900)
    log_in(page, owner)
    page.click("nav.mainnav summary")
    page.click("nav.mainnav >> text=API keys")
    page.fill("input[name=name]", "ingest")
    page.check("input[name=scopes][value=write]")
    page.fill("input[name=agent_q]", "triage")
    expect(page.locator("#key-create-agents")).not_to_contain_text("summary-bot")
    page.check(f"#key-create-agents input[value='{bot.pk}']")
    page.click("#key-create button[type=submit]")
    expect(page.locator("h1")).to_contain_text("Key created: ingest")
    plaintext = page.locator("#plaintext").inner_text()
    assert re.fullmatch(r"mn_[A-Za-z0-9]{8}_[A-Za-z0-9]{40}", plaintext)
    api_key = ApiKey.objects.get(name="ingest")
    assert api_key_verify(plaintext) == api_key and api_key.agent == bot and api_key.scopes == ["read", "write"]
    SHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SHOTS / f"{request.node.name}.png"), full_page=True)
    page.click("text=The key's page")
    expect(page.locator("h1")).to_contain_text("Key ingest")
    assert plaintext not in page.content()
    page.goto("/w/acme/keys/")
    expect(page.locator(f"#key-{api_key.pk}")).to_contain_text("triage-bot")
    assert plaintext not in page.content()
    close_live_context(context, live_server)
    assert not problems, problems


NEW_PAGES = ["/w/acme/audit/", "/w/acme/keys/", "/w/acme/inspector/packs/", "/w/acme/entities/decisions/"]


def test_no_new_page_scrolls_sideways_at_390_px(browser, live_server, request, owner, workspace, make_key):
    key, _ = make_key(workspace, name="a-rather-long-key-name-for-an-ingest-agent-that-says-too-much")
    decided = decisions.decision_record(workspace=workspace, description="Ship the importer on Friday " * 8,
                                        confidence=0.9, options=["Friday", "Monday"], chosen="Friday")
    decisions.decision_record_outcome(decision=decided, outcome="partial", result="Half of it.")
    from context import services as context_services
    from core.services import Actor

    pack = context_services.context_pack(context_services.PackRequest(
        query="What did the team decide about the importer release schedule and its rollout?",
        workspace_id=workspace.pk), actor=Actor.for_api_key(key))
    context, page, problems = _page(browser, live_server, request, 390, 844)
    log_in(page, owner)
    wide = {}
    SHOTS.mkdir(parents=True, exist_ok=True)
    for path in [*NEW_PAGES, f"/w/acme/keys/{key.pk}/", f"/w/acme/inspector/packs/{pack.pk}/"]:
        page.goto(path)
        page.wait_for_load_state("networkidle")
        width = page.evaluate("document.documentElement.scrollWidth")
        if width > 390:
            wide[path] = width
        page.screenshot(path=str(SHOTS / f"{request.node.name}{path.replace('/', '_')}.png"), full_page=True)
    close_live_context(context, live_server)
    assert not wide, wide
    assert not problems, problems
