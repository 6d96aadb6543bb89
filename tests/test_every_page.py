"""Issue 21 part 6, the quality bars, on every page of the dashboard in a real browser
(Playwright + Debian's Chromium) as a logged-in owner, over one workspace seeded with one of
every kind of object:

- axe-core (axe-playwright-python, which bundles axe.min.js: no network) finds no serious or
  critical violation, at 1280 px and at 390 px;
- at a 390x844 viewport no page is wider than the screen;
- a screenshot of every page at both widths is kept under var/screenshots/every-page/
  (var/ is gitignored);
- at 1280 px, every action is reachable by keyboard with a visible focus (tests/keyboard.py):
  Tab reaches every visible control in order, each showing a focus indicator, with no trap;
  nothing acts on the mouse only; floating menus and dialogs opened by keys close with
  Escape and hand the focus back (KEYBOARD_DIALOGS says how each dialog is opened).

The pages come from the urlconf (django.urls.get_resolver), not from a list kept by hand:
every named pattern outside the admin and the API must be in PAGES (visited) or in NOT_PAGES
(with the reason it is not a page of its own), so a page added later fails
test_every_url_pattern_is_a_page_or_says_why_not, naming itself, until it gets its entry.
To add a page: give it one line in PAGES (`page(<kwarg>="<seed attribute>")`, with
`literal={"action": "retire"}` for a kwarg that is not an object and `query="into={attribute}"`
for a state reached by its query string), and if it needs an object the seed lacks, make one
in `seed()` and add it to `Seed`. A page that redirects (a confirmation that does not apply)
is reported, not swept."""

from __future__ import annotations

import json
import os
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import timedelta
from urllib.parse import urlsplit

import pytest
from django.template.loader import render_to_string
from django.test import Client
from django.urls import URLPattern, URLResolver, get_resolver, reverse
from django.urls.converters import IntConverter, UUIDConverter

from tests.helpers import CHROMIUM, SHOTS, ApiClient, log_in
from tests.keyboard import KEYBOARD_INIT, dialog_problems, keyboard_problems, tab_problems
from tests.live_requests import close_live_context, live_context

needs_chromium = pytest.mark.skipif(not os.path.exists(CHROMIUM), reason="make test installs Debian's chromium")

DESKTOP = {"width": 1280, "height": 900}
PHONE = {"width": 390, "height": 844}
SERIOUS = ("serious", "critical")
SHOT_DIR = SHOTS / "every-page"

# Not the dashboard: Django's own admin, the JSON API (its own schema tests) and the MCP
# endpoint (JSON-RPC).
OUTSIDE = ("admin/", "api/", "mcp")


@dataclass(frozen=True)
class Page:
    """A page to visit: its URL kwargs as the names of Seed attributes (their pk is used),
    and an optional query string for a state worth its own look (results, filters)."""

    kwargs: dict[str, str] = field(default_factory=dict)
    query: str = ""  # may name Seed attributes too: "into={merged_into}" is their pk
    literal: dict[str, str] = field(default_factory=dict)  # URL kwargs given as they are (an action's name)


def page(query: str = "", literal: dict[str, str] | None = None, **kwargs: str) -> Page:
    return Page(kwargs=kwargs, query=query, literal=literal or {})


# Every page of the dashboard by URL name. A name may list several states of its page.
PAGES: dict[str, list[Page]] = {
    "login": [page()],  # visited logged out, before logging in
    "home": [page()],
    "conversations": [page()],
    "conversation": [page(conversation_id="conversation")],
    "entity-interactions": [page(entity_id="person")],
    "entities": [page()],
    "entity": [page(entity_id="person"), page(entity_id="merged_into")],
    # The merge picker (with a search), then its confirmation (GET with `into`); POST merges.
    "entity-merge": [page(entity_id="person", query="q=Stone"), page(entity_id="person", query="into={merged_into}")],
    "decisions": [page()],
    "memories": [page()],
    "memory": [page(memory_id="memory")],
    "memories-about": [page(entity_id="person")],
    "procedures": [page()],
    "procedure": [page(memory_id="procedure")],
    "procedure-change": [page(memory_id="procedure", literal={"action": "retire"})],  # GET asks for confirmation
    "censors": [page()],
    "censor": [page(memory_id="censor")],
    "censor-change": [page(memory_id="censor", literal={"action": "false-positive"})],  # GET asks too
    "working-sessions": [page()],
    "working-session": [page(session_id="session")],
    "scratchpads": [page()],
    "scratchpad": [page(scratchpad_id="scratchpad"),
                   page(scratchpad_id="scratchpad", query="from={checkpoint}&to=current")],  # a diff
    "scratchpad-restore": [page(scratchpad_id="scratchpad", checkpoint_id="checkpoint")],  # GET asks for confirmation
    "trusted-state": [page()],
    "trust-policy": [page()],
    "inspector": [page(), page(query="q=Where+does+Ada+live%3F")],
    "packs": [page()],
    "pack": [page(pack_id="pack")],
    "review": [page(), page(query="q=nothing-matches-this")],
    "review-conflicts": [page()],
    "review-stats": [page()],
    "gaps": [page()],
    "gap-todos": [page()],
    "gap-policy": [page()],
    "gap-censored": [page()],
    "gap": [page(gap_id="gap")],
    "webhooks": [page()],
    "maintenance": [page()],
    "audit": [page()],
    "api-keys": [page()],
    "api-key": [page(key_id="key")],
    "api-key-revoke": [page(key_id="key")],  # GET asks for confirmation: a page
}

# Widgets that appear only after a key or a click: opened on their page, then checked as pages are.
OPENED: dict[str, dict[str, Callable]] = {
    "home": {"menus open": lambda page: page.evaluate(
        "document.querySelectorAll('details.navmore, details.switcher').forEach(d => { d.open = true; })")},
    "review": {"shortcuts dialog": lambda page: page.keyboard.press("?"),
               "merge dialog": lambda page: _open_a_merge_dialog(page)},
    "api-keys": {"key created": lambda page: _create_a_key(page)},  # the page that shows a key once
}


# Every <dialog> of a page, by selector: the element to focus (a JS expression) and the key
# that then opens it. Each is opened so, tabbed through, and closed with Escape. A page with a
# dialog not listed here fails the keyboard check; one whose opener is absent (the bulk dialog
# when every match is on the page) cannot be opened at all, by keys or mouse, and is passed over.
KEYBOARD_DIALOGS: dict[str, dict[str, tuple[str, str]]] = {
    "review": {
        "#shortcuts": ("document.querySelector('#queue article.item.current') || document.body", "?"),
        # The card that offers a merge is made the current one first: from 1200 px only its detail shows.
        "dialog.merge-confirm": ("(b => { if (b) b.closest('article.item').click(); return b; })"
                                 "(document.querySelector('button.merge-into'))", "Enter"),
        "#bulk-matching": ("document.getElementById('select-matching')", "Enter"),
    },
}


def _keyboard_check(page, name: str, label: str, keyboard: dict[str, list[str]]) -> int:
    """The keyboard check of tests/keyboard.py, at 1280 px, on the page as loaded; how many
    controls Tab reached."""
    page.set_viewport_size(DESKTOP)
    page.wait_for_load_state("networkidle")
    reached, found = keyboard_problems(page)
    dialogs = KEYBOARD_DIALOGS.get(name, {})
    for selector, (opener, key) in dialogs.items():
        if page.locator(selector).count():
            found += dialog_problems(page, opener, key, selector)
    unchecked = page.evaluate("selectors => [...document.querySelectorAll('dialog')]"
                              ".filter(d => !selectors.some(s => d.matches(s))).map(d => d.outerHTML.slice(0, 120))",
                              list(dialogs))
    found += [f"a dialog no keyboard check opens (add it to KEYBOARD_DIALOGS): {html}" for html in unchecked]
    if found:
        keyboard.setdefault(label, []).extend(found)
    return reached


def _tab_check(page, label: str, keyboard: dict[str, list[str]]) -> int:
    """Tab through a widget opened on its page (menus, a dialog), at 1280 px."""
    page.set_viewport_size(DESKTOP)
    _, steps, found = tab_problems(page)
    if found:
        keyboard.setdefault(label, []).extend(found)
    return len({step["kb"] for step in steps if step["kb"] is not None})


def _open_a_merge_dialog(page) -> None:
    # Each card's similar items load when its detail comes into view (hx-trigger="intersect");
    # in the list + detail layout (from 1200 px) only the current card's shows: j walks the cards.
    for _ in range(page.locator("#queue article.item").count()):
        box = page.locator("#queue article.item.current .similar-box")
        if box.count():
            box.scroll_into_view_if_needed()
            box.locator("ul.similar, p").first.wait_for(state="attached")  # loaded: a list, or "No similar…"
            if box.locator("button.merge-into").count():
                break
        page.keyboard.press("j")
    page.locator("#queue article.item.current button.merge-into").first.click()


def _create_a_key(page) -> None:
    page.fill("#key-create input[name=name]", "sweep")
    page.click("#key-create button[type=submit]")
    page.wait_for_selector("#plaintext")


# Named patterns that are not pages of their own, and why. "POST" ones are checked to answer
# GET with 405; fragments to be fragments (no <html>).
POST = "POST only: an action, answers GET with 405"
NOT_PAGES: dict[str, str] = {
    "logout": POST,
    "root": "redirects to the last workspace's home",
    "review-policy": "redirects to trust-policy",
    "review-count": "fragment: the pending badge in the navigation of every page",
    "review-similar": "fragment: loaded into each card of the review page",
    "entity-pick": "fragment: the agent picker's choices on the API keys pages",
    **dict.fromkeys([
        "entity-identity-add", "entity-identity-unlink", "entity-identity-verify", "entity-profile-decide",
        "entity-erase", "entity-split", "entity-suggestion", "memory-edit", "memory-decide", "graduation-decide",
        "trusted-state-set", "trust-policy-set", "consolidation-policy-set", "review-bulk", "review-bulk-matching",
        "review-claim-decide", "review-decide", "gap-sink", "gap-sink-act", "gap-delivery-retry", "gap-act",
        "webhook-add", "webhook-act", "webhook-replay", "maintenance-run", "api-key-create", "api-key-bind",
    ], POST),
}
FRAGMENTS = ("review-count", "review-similar", "entity-pick")

# Error pages, rendered from their templates (the 403 and 404 are also reached for real).
ERROR_TEMPLATES = ("400.html", "403.html", "404.html", "500.html", "503.html", "registration/locked_out.html",
                   "core/no_workspace.html")


def dashboard_patterns() -> list[tuple[str, str | None, dict]]:
    """(route, name, converters) of every URL pattern outside OUTSIDE."""
    found = []

    def walk(patterns, prefix: str, converters: dict):
        for entry in patterns:
            route = prefix + str(entry.pattern)
            known = {**converters, **getattr(entry.pattern, "converters", {})}
            if route.startswith(OUTSIDE):
                continue
            if isinstance(entry, URLResolver):
                walk(entry.url_patterns, route, known)
            elif isinstance(entry, URLPattern):
                found.append((route, entry.name, known))

    walk(get_resolver().url_patterns, "", {})
    return found


def test_every_url_pattern_is_a_page_or_says_why_not():
    patterns = dashboard_patterns()
    unnamed = [route for route, name, _ in patterns if not name]
    assert not unnamed, f"dashboard URL patterns without a name (name them, then add them to PAGES): {unnamed}"
    names = {name: route for route, name, _ in patterns}
    missing = {name: route for name, route in names.items() if name not in PAGES and name not in NOT_PAGES}
    assert not missing, (f"pages the sweep does not visit: {missing}. Add each to PAGES in tests/test_every_page.py "
                         "(with the seed objects its URL needs), or to NOT_PAGES with the reason it is not a page.")
    assert not set(PAGES) & set(NOT_PAGES)
    stale = (set(PAGES) | set(NOT_PAGES)) - set(names)
    assert not stale, f"entries for URL names that no longer exist: {stale}"


def _dummy(converter) -> object:
    if isinstance(converter, IntConverter):
        return 1
    if isinstance(converter, UUIDConverter):
        return uuid.uuid4()
    return "x"


@pytest.mark.django_db
def test_what_is_not_a_page_is_an_action_or_a_fragment(owner, workspace):
    client = Client()
    client.force_login(owner)
    for route, name, converters in dashboard_patterns():
        if name not in NOT_PAGES:
            continue
        kwargs = {key: "acme" if key == "slug" else _dummy(converter) for key, converter in converters.items()}
        response = client.get(reverse(name, kwargs=kwargs))
        if NOT_PAGES[name] == POST:
            assert response.status_code == 405, (name, route, response.status_code)
        elif name in FRAGMENTS:
            if name == "review-similar":
                continue  # needs a real item: loaded inside the review page, which the sweep visits
            assert response.status_code == 200 and b"<html" not in response.content, (name, response.status_code)
        else:
            assert response.status_code in (301, 302), (name, response.status_code)


# --- the seeded workspace ---------------------------------------------------------------------

@dataclass
class Seed:
    conversation: object
    person: object  # an entity with identities, memories, relationships
    merged_into: object  # an entity another was merged into (its page offers the split)
    memory: object
    pack: object
    gap: object
    key: object
    procedure: object  # the memory of a flagged procedure (five failures)
    censor: object  # the memory of a censor that warns
    session: object  # a working-memory session with items in focus and one evicted
    scratchpad: object  # with two checkpoints
    checkpoint: object  # its first


# What agents write in their notes: one long word that must not widen a phone's page.
LONG_LINK = "https://tracker.example.com/tickets/42/attachments/" + "release-notes-draft-" * 5 + "final.pdf"


def seed(workspace, owner, make_key) -> Seed:
    """One of every kind of object, made through the owners' services (and the API where
    that is the way in), so every page has rows, cards, charts and forms to check."""
    from context import services as context_services
    from conversations.models import Conversation
    from core import services as core_services
    from core.services import SYSTEM, Actor
    from entities import decisions
    from entities import services as entity_services
    from entities.models import Entity
    from gaps.models import CapabilityGap
    from memory import services as memory_services
    from review import selectors
    from review import views as review_views
    from tests.gaps.test_api import ASKED_THREE_WAYS, T0, log_exchange, process
    from tests.gaps.test_censored import PASSWORD_ASK, PASSWORD_NO, censor
    from tests.review import factories
    from tests.review.test_claims_api import derive
    from tests.review.test_triage_browser import candidate
    from webhooks import services as webhook_services

    # More cards than one page holds, older than the rest (the first page keeps a card of every
    # kind): the queue offers "Select all N matching", whose dialog the keyboard check opens.
    for n in range(review_views.PAGE_SIZE):
        candidate(workspace, 100 + n)
    kinds = factories.every_kind(workspace)  # a pending review item of every kind, a conflict
    derive(workspace)  # a claim with four facets
    assert selectors.pending_count(workspace) > review_views.PAGE_SIZE
    key, plaintext = make_key(workspace, scopes="read,write", name="ingest-agent")
    api = ApiClient(plaintext)
    for n, (channel, person, request, answer) in enumerate(ASKED_THREE_WAYS):  # a gap with a TODO
        process(log_exchange(api, channel, person, request, answer, thread=f"t{n}", at=T0 + timedelta(days=n)))
    censor(api, "share passwords", reason="security policy")  # a censored refusal
    process(log_exchange(api, "slack", "priya", PASSWORD_ASK, PASSWORD_NO, thread="pw", at=T0 + timedelta(days=4)))
    decided = decisions.decision_record(workspace=workspace, description="Ship the importer on Friday",
                                        confidence=0.8, options=["Friday", "Monday"], chosen="Friday")
    decisions.decision_add_thought(decision=decided, text="Monday clashes with the release freeze.")
    decisions.decision_record_outcome(decision=decided, outcome="partial", result="Half of it shipped.")
    pack = context_services.context_pack(context_services.PackRequest(
        query="Where does Ada live and which editor does she use?", workspace_id=workspace.pk),
        actor=Actor.for_api_key(key))
    bob = entity_services.entity_create(workspace=workspace, kind="person", name="Bob Stone")
    robert = entity_services.entity_create(workspace=workspace, kind="person", name="Robert Stone")
    entity_services.entity_merge(source=bob, target=robert)
    endpoint = webhook_services.webhook_create(workspace=workspace, url="http://127.0.0.1:9/hook", events=["*"],
                                               actor=SYSTEM, description="ops channel")
    webhook_services.webhook_ping(endpoint=endpoint)
    # The owner is a viewer elsewhere: that workspace's admin pages answer 403.
    other = core_services.workspace_create(name="Globex", slug="globex")
    core_services.membership_set(workspace=other, user=owner, role="viewer")
    person = Entity.objects.get(workspace=workspace, pk=kinds["memory"].subject_id)
    procedure = memory_services.procedure_create(workspace_id=workspace.pk, name="Restart the cache",
                                                 steps=["drain the node", "restart", "warm it up"]).memory
    flagged = procedure.procedure
    for _ in range(5):  # flagged for low effectiveness
        flagged = memory_services.procedure_outcome(procedure=flagged, outcome="failure", actor=SYSTEM)
    censor_memory = memory_services.censor_create(workspace_id=workspace.pk, trigger="deploy on Fridays",
                                                  reason="weekend pages").memory
    agent = Actor.for_api_key(key)
    session, _ = memory_services.working_memory_put(
        workspace=workspace, session_key="triage", actor=agent, capacity=2, task="Answer ada@example.com's ticket",
        items=[memory_services.FocusItem(content=text, attention=attention, key=name) for name, text, attention in (
            ("call", "Call ada@example.com about the invoice", 0.9), ("notes", "Draft the release notes", 0.6),
            ("lunch", f"Order lunch for the team, see {LONG_LINK}", 0.1))])
    pad, checkpoints = None, []
    states = ({"step": 1}, {"step": 2, "done": ["triage"]}, {"step": 3, "done": ["triage", "reply"], "link": LONG_LINK})
    for step, state in enumerate(states):
        pad = memory_services.scratchpad_put(workspace=workspace, task="ticket-42", raw_state=json.dumps(state),
                                             actor=agent)
        if step < 2:
            checkpoints.append(memory_services.scratchpad_checkpoint(scratchpad=pad, actor=agent,
                                                                     label=f"step {step + 1}"))
    return Seed(conversation=Conversation.objects.filter(workspace=workspace).first(), person=person,
                merged_into=robert, memory=kinds["memory"], pack=pack,
                gap=CapabilityGap.objects.filter(workspace=workspace).first(), key=key, procedure=procedure,
                censor=censor_memory, session=session, scratchpad=pad, checkpoint=checkpoints[0])


def page_urls(seeded: Seed) -> list[tuple[str, str]]:
    """(label, path) of every page state in PAGES."""
    urls = []
    for name, states in PAGES.items():
        for state in states:
            kwargs = {key: getattr(seeded, attribute).pk for key, attribute in state.kwargs.items()} | state.literal
            if name != "login":
                kwargs["slug"] = "acme"
            query = state.query.format_map({attribute: getattr(seeded, attribute).pk for attribute in
                                            Seed.__dataclass_fields__})
            path = reverse(name, kwargs=kwargs) + (f"?{query}" if query else "")
            label = name + (f"[{','.join(state.kwargs.values())}]" if len(states) > 1 and state.kwargs else "")
            urls.append((label + (f"?{state.query}" if state.query else ""), path))
    return urls


# --- the sweep --------------------------------------------------------------------------------

def _serious(results) -> list[str]:
    found = []
    for violation in results.response["violations"]:
        if violation["impact"] in SERIOUS:
            targets = "; ".join(" ".join(node["target"]) for node in violation["nodes"][:5])
            found.append(f"{violation['id']} ({violation['impact']}, {len(violation['nodes'])}x): "
                         f"{violation['help']} -> {targets}")
    return found


def _shot(page, label: str, width: int) -> None:
    safe = "".join(c if c.isalnum() or c in "-_" else "_" for c in label)
    page.screenshot(path=str(SHOT_DIR / f"{safe}-{width}.png"), full_page=True)


# The innermost elements that stick out past the right edge: what to fix when a page is too wide.
WIDEST = """() => {
  const out = el => el.getBoundingClientRect().right > window.innerWidth + 0.5;
  const name = el => el.tagName.toLowerCase() + (el.id ? '#' + el.id : '') +
    (el.classList.length ? '.' + [...el.classList].join('.') : '');
  return [...document.body.querySelectorAll('*')]
    .filter(el => out(el) && ![...el.children].some(out))
    .slice(0, 5).map(el => name(el) + ' (' + Math.round(el.getBoundingClientRect().right) + ' px)');
}"""


def _check(page, axe, label: str, problems: dict[str, list[str]]) -> None:
    """axe and a screenshot at both widths, the overflow at the phone's: on the page as loaded."""
    for viewport in (DESKTOP, PHONE):
        page.set_viewport_size(viewport)
        page.wait_for_load_state("networkidle")
        for found in _serious(axe.run(page)):
            problems.setdefault(label, []).append(f"{viewport['width']} px: {found}")
        if viewport is PHONE:
            width = page.evaluate("document.scrollingElement.scrollWidth")
            if width > PHONE["width"]:
                culprits = page.evaluate(WIDEST)
                problems.setdefault(label, []).append(f"{width} px wide at {PHONE['width']} px: {culprits}")
        _shot(page, label, viewport["width"])


def _serving(html: str):
    def handler(route, request):
        route.fulfill(status=200, body=html, content_type="text/html")

    return handler


@needs_chromium
@pytest.mark.django_db(transaction=True)
def test_every_page_passes_axe_and_fits_a_phone(browser, live_server, owner, workspace, make_key):
    from axe_playwright_python.sync_playwright import Axe

    started = time.monotonic()
    seeded = seed(workspace, owner, make_key)
    seeded_in = time.monotonic() - started
    SHOT_DIR.mkdir(parents=True, exist_ok=True)
    context = live_context(browser, live_server, viewport=DESKTOP)
    context.add_init_script(KEYBOARD_INIT)
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(f"{page.url}: {exc}"))
    axe = Axe()
    problems: dict[str, list[str]] = {}
    statuses: dict[str, int] = {}
    keyboard: dict[str, list[str]] = {}
    reached: dict[str, int] = {}
    keyboard_seconds = 0.0

    def check_keyboard(label: str, check: Callable) -> None:
        nonlocal keyboard_seconds
        began = time.monotonic()
        reached[label] = check()
        keyboard_seconds += time.monotonic() - began
        print(f"keyboard: {label}: {reached[label]} controls reached, {len(keyboard.get(label, []))} problems")

    def visit(label: str, path: str, status: int = 200) -> None:
        response = page.goto(path)
        statuses[label] = response.status
        if response.status != status:
            problems.setdefault(label, []).append(f"answered {response.status}, expected {status}")
        # goto follows redirects: a confirmation page that sends you back instead is not visited.
        landed = urlsplit(page.url)
        if (landed.path, landed.query) != (urlsplit(path).path, urlsplit(path).query):
            problems.setdefault(label, []).append(f"redirected to {page.url}")
        _check(page, axe, label, problems)
        check_keyboard(label, lambda: _keyboard_check(page, label.split("[")[0].split("?")[0], label, keyboard))

    urls = page_urls(seeded)
    login = [path for label, path in urls if label == "login"]
    visit("login", login[0])
    log_in(page, owner)
    for label, path in urls:
        if label != "login":
            visit(label, path)
        for state, open_it in OPENED.get(label, {}).items():
            page.goto(path)
            page.wait_for_load_state("networkidle")
            open_it(page)
            _check(page, axe, f"{label} ({state})", problems)
            check_keyboard(f"{label} ({state})", lambda: _tab_check(page, f"{label} ({state})", keyboard))
    visit("404 (real)", "/w/acme/no-such-page/", status=404)
    visit("403 (real)", "/w/globex/keys/", status=403)
    for template in ERROR_TEMPLATES:
        html = render_to_string(template, {"exception": "This needs the admin role."})
        page.route("**/__error__", _serving(html))
        visit(f"template {template}", "/__error__")
        page.unroute("**/__error__")
    close_live_context(context, live_server)
    swept_in = time.monotonic() - started - seeded_in
    print(f"\nseeded in {seeded_in:.1f} s; swept {len(statuses)} pages and "
          f"{sum(map(len, OPENED.values()))} opened widgets at 2 widths in {swept_in:.1f} s, of which "
          f"{keyboard_seconds:.1f} s the keyboard check ({sum(reached.values())} controls reached by Tab)")
    report = "\n".join(f"{label}:\n  " + "\n  ".join(found) for label, found in problems.items())
    (SHOT_DIR / "problems.txt").write_text(report + "\n")
    keys = "\n".join(f"{label}:\n  " + "\n  ".join(found) for label, found in keyboard.items())
    (SHOT_DIR / "keyboard.txt").write_text(keys + "\n")
    assert not problems, f"{len(problems)} pages with problems:\n{report}"
    assert not keyboard, f"{len(keyboard)} pages a keyboard user trips over:\n{keys}"
    # Not a vacuous walk: every page has controls (the navigation, at least) and Tab got to
    # them, but the 500 page, plain HTML on purpose (it must render when nothing else does).
    assert [label for label, n in reached.items() if not n] == ["template 500.html"], reached
    assert not errors, errors
