"""Issue 21 part 4's remaining pages in a real browser (Playwright + Debian's Chromium): a
reviewer retires a censor after its confirmation page; compares two scratchpad checkpoints
and goes back to one; merges an entity by searching for the other "Priya Raman" (told apart
by their channels) and approves a profile value in place; and at 390 px none of these pages
scrolls sideways. Screenshots are kept under var/screenshots/."""

from __future__ import annotations

import json
import os

import pytest
from django.conf import settings

from conversations import services as conversation_services
from conversations.services import InteractionItem
from core.services import Actor
from entities import services as entity_services
from entities.models import Entity, EntityMerge, ProfileValue
from memory.models import Memory, MemoryStatus, Scratchpad, ScratchpadCheckpoint, WorkingSession
from memory.services import (
    Draft,
    FocusItem,
    censor_create,
    memory_store,
    procedure_create,
    procedure_outcome,
    scratchpad_checkpoint,
    scratchpad_put,
    working_memory_put,
)
from tests.helpers import CHROMIUM, log_in
from tests.live_requests import close_live_context, live_context

SHOTS = settings.BASE_DIR / "var" / "screenshots"

pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.skipif(not os.path.exists(CHROMIUM), reason="make test installs Debian's chromium"),
]


def _shot(page, name: str) -> None:
    SHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SHOTS / f"{name}.png"), full_page=True)


def _person(workspace, channel: str, handle: str, name: str = "Priya Raman") -> Entity:
    [result] = conversation_services.interactions_log(workspace=workspace, items=[InteractionItem(
        channel=channel, channel_id=handle, sender_name=name, content="Hello from me.")])
    return Entity.objects.get(pk=result.entity_id)


def _pad(workspace, actor) -> Scratchpad:
    pad = scratchpad_put(workspace=workspace, task="ticket-42", actor=actor,
                         raw_state=json.dumps({"step": 1, "contact": "priya@example.com"}))
    scratchpad_checkpoint(scratchpad=pad, actor=actor, label="started")
    pad = scratchpad_put(workspace=workspace, task="ticket-42", actor=actor,
                         raw_state=json.dumps({"step": 2, "contact": "priya@example.com", "done": ["triage"]}))
    scratchpad_checkpoint(scratchpad=pad, actor=actor, label="triaged")
    return scratchpad_put(workspace=workspace, task="ticket-42", actor=actor, raw_state=json.dumps({"step": 3}))


def test_a_reviewer_retires_a_censor_after_confirming(page, teammate, workspace, request):
    from playwright.sync_api import expect

    censor = censor_create(workspace_id=workspace.pk, trigger="deploy on Fridays", reason="weekend pages").memory
    censor_create(workspace_id=workspace.pk, trigger="email customers at night", action="absolute")
    log_in(page, teammate)
    page.click("nav.mainnav summary")
    page.click("nav.mainnav >> text=Censors")
    page.select_option("select[name=action]", "warn")
    page.click("form.filters button[type=submit]")
    expect(page.locator("#rows")).not_to_contain_text("email customers at night")
    page.click(f"#censor-{censor.pk} a")
    expect(page.locator("h1")).to_contain_text("Never deploy on Fridays")
    page.click("text=Retire…")
    expect(page.locator("h1")).to_contain_text("Retire?")
    page.fill("#note", "we deploy on Fridays now")
    page.click("button:has-text('Retire')")
    expect(page.locator(".flash")).to_contain_text("Retired")
    expect(page.locator("#history-title + ol")).to_contain_text("we deploy on Fridays now")
    assert Memory.objects.get(pk=censor.pk).status == MemoryStatus.INVALID
    _shot(page, request.node.name)


def test_a_reviewer_compares_checkpoints_and_goes_back_to_one(page, teammate, workspace, request):
    from playwright.sync_api import expect

    pad = _pad(workspace, Actor.for_user(teammate))
    log_in(page, teammate)
    page.goto("/w/acme/memories/scratchpads/")
    page.click(f"#scratchpad-{pad.pk} a")
    expect(page.locator("pre.state")).to_contain_text('"step": 3')
    page.locator("tr", has_text="triaged").locator("text=since the checkpoint before").click()
    expect(page.locator("pre.diff .del").first).to_contain_text('"step": 1')
    expect(page.locator("pre.diff")).to_contain_text("[email]")
    expect(page.locator("pre.diff")).not_to_contain_text("priya@example.com")
    _shot(page, f"{request.node.name}_diff")
    page.locator("tr", has_text="started").locator("text=Go back to it…").click()
    expect(page.locator("h1")).to_contain_text("Go back to checkpoint started?")
    page.click("button:has-text('Go back')")
    expect(page.locator(".flash")).to_contain_text("now version 4")
    expect(page.locator("pre.state")).to_contain_text('"step": 1')
    assert json.loads(Scratchpad.objects.get(pk=pad.pk).state)["step"] == 1


def test_a_reviewer_merges_by_searching_and_approves_a_profile_value_in_place(page, teammate, workspace, request):
    from playwright.sync_api import expect

    by_email, by_slack = _person(workspace, "email", "priya@example.com"), _person(workspace, "slack", "U07PRIYA")
    value = entity_services.profile_candidate_add(entity=by_email, key="location", value="Lisbon", confidence=0.7,
                                                  evidence=None, quote="I live in Lisbon now", source="rule:profile")
    memory_store(workspace_id=workspace.pk, draft=Draft(type="preference", text="Priya prefers email to calls.",
                                                        certainty="verbatim", subject_id=by_email.pk))
    log_in(page, teammate)
    page.goto(f"/w/acme/entities/{by_email.pk}/")
    expect(page.locator("#memories-about")).to_contain_text("Priya prefers email to calls.")  # its active memories
    page.click(f"#profile-candidate-{value.pk} button:has-text('Approve')")
    expect(page.locator(".flash")).to_contain_text("location = Lisbon: approved")
    assert ProfileValue.objects.get(pk=value.pk).status == "active"
    page.fill("#merge-q", "priya")
    choice = page.locator("#merge-choices label", has_text="slack:U07PRIYA")
    expect(choice).to_be_visible()  # the htmx results, each with its channels
    expect(page.locator("#merge-choices")).not_to_contain_text("email:priya@example.com")  # not itself
    choice.locator("input[type=radio]").check()
    page.click("#merge-choices button:has-text('Review the merge')")
    expect(page.locator("h1")).to_contain_text("Merge Priya Raman into Priya Raman?")
    expect(page.locator("form.merge-confirm")).to_contain_text("email:priya@example.com")
    _shot(page, f"{request.node.name}_confirm")
    page.click("form.merge-confirm button:has-text('Merge')")
    page.wait_for_url(f"**/entities/{by_slack.pk}/")
    assert EntityMerge.objects.get().source_id == by_email.pk


def test_no_new_page_scrolls_sideways_at_390_px(browser, live_server, teammate, workspace, request):
    long = "a-very-long-agent-session-key-without-any-spaces-that-could-push-the-page-wide-" * 2
    working_memory_put(workspace=workspace, session_key=long, actor=Actor.for_user(teammate), task="Answer " * 30,
                       items=[FocusItem(content="x" * 300, key="k"), FocusItem(content="Call me " * 20, key="c")])
    pad = _pad(workspace, Actor.for_user(teammate))
    procedure = procedure_create(workspace_id=workspace.pk, name="Restart the cache " * 6,
                                 steps=["stop it", "wipe it", "start it"]).memory.procedure
    for _ in range(5):
        procedure = procedure_outcome(procedure=procedure, outcome="failure", actor=Actor.for_user(teammate))
    censor = censor_create(workspace_id=workspace.pk, trigger="deploy on Fridays " * 8).memory
    by_email, by_slack = _person(workspace, "email", "priya.raman.with.a.long.address@example.com"), \
        _person(workspace, "slack", "U07PRIYA")
    started = ScratchpadCheckpoint.objects.filter(scratchpad=pad).order_by("id").first()
    paths = ["/w/acme/memories/procedures/", f"/w/acme/memories/procedures/{procedure.pk}/",
             f"/w/acme/memories/procedures/{procedure.pk}/retire/", "/w/acme/memories/censors/",
             f"/w/acme/memories/censors/{censor.pk}/", "/w/acme/memories/working/",
             f"/w/acme/memories/working/{WorkingSession.objects.get().pk}/", "/w/acme/memories/scratchpads/",
             f"/w/acme/memories/scratchpads/{pad.pk}/?from={started.pk}&to=current",
             f"/w/acme/memories/scratchpads/{pad.pk}/restore/{started.pk}/", "/w/acme/entities/",
             f"/w/acme/entities/{by_email.pk}/", f"/w/acme/entities/{by_email.pk}/merge/?q=priya",
             f"/w/acme/entities/{by_email.pk}/merge/?into={by_slack.pk}"]
    context = live_context(browser, live_server, viewport={"width": 390, "height": 844})
    page = context.new_page()
    problems: list[str] = []
    page.on("pageerror", lambda exc: problems.append(f"page error: {exc}"))
    log_in(page, teammate)
    wide = {}
    for index, path in enumerate(paths):
        page.goto(path)
        page.wait_for_load_state("networkidle")
        width = page.evaluate("document.documentElement.scrollWidth")
        if width > 390:
            wide[path] = width
        _shot(page, f"{request.node.name}_{index:02d}{path.split('?')[0].replace('/', '_')}")
    close_live_context(context, live_server)
    assert not wide, wide
    assert not problems, problems
