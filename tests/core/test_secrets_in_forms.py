"""Issue 16: the HTML doors refuse a secret too — every Django admin form and every
dashboard form that writes text.

Neither list is written here. The admin's are every registered ModelAdmin (and its
inlines) that may change a row; the dashboard's are every `<form method="post">` on
every dashboard page the URL configuration names. Each text box of each form is sent a
secret, the rule families taken in turn so that each is met; the form must answer with an error and the database must not
change (pg_stat_xact_user_tables, as in test_secrets_everywhere.py)."""

from __future__ import annotations

import itertools
import re
from html.parser import HTMLParser
from urllib.parse import urljoin

import pytest
from django.contrib import admin
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group
from django.db import connection
from django.test import RequestFactory
from django.urls import URLPattern, URLResolver, get_resolver, reverse

from core import services as core_services
from entities import decisions
from gaps import services as gap_services
from entities import services as entity_services
from memory import services as memory_services
from review.models import ReviewItem
from tests.core.test_secrets_everywhere import SECRETS, changes_in_this_transaction
from tests.review import factories
from webhooks import services as webhook_services

TEXT_INPUTS = {"text", "search", "email", "url", "tel", ""}


class _Forms(HTMLParser):
    """The POST forms of a page, each as its action and the fields a browser would send,
    plus the names of the fields a person types text into."""

    def __init__(self):
        super().__init__()
        self.forms: list[dict] = []
        self._form: dict | None = None
        self._textarea: str | None = None
        self._select: str | None = None
        self._select_first: str | None = None
        self._select_chosen = False

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "form":
            self._form = {"action": a.get("action") or "", "method": (a.get("method") or "get").lower(),
                          "id": a.get("id") or "", "data": {}, "text": []}
            self.forms.append(self._form)
        if self._form is None:
            return
        name = a.get("name")
        if tag == "input" and name and "disabled" not in a:
            kind = (a.get("type") or "").lower()
            if kind in ("submit", "button", "file", "image", "reset"):
                return
            if kind in ("checkbox", "radio") and "checked" not in a:
                return
            self._form["data"].setdefault(name, []).append(a.get("value") or ("on" if kind == "checkbox" else ""))
            if kind in TEXT_INPUTS:
                self._form["text"].append(name)
        elif tag == "textarea" and name:
            self._textarea = name
            self._form["data"][name] = [""]
            self._form["text"].append(name)
        elif tag == "select" and name:
            self._select, self._select_first, self._select_chosen = name, None, False
        elif tag == "option" and self._select:
            value = a.get("value", "")
            if self._select_first is None:
                self._select_first = value
            if "selected" in a:
                self._form["data"].setdefault(self._select, []).append(value)
                self._select_chosen = True

    def handle_data(self, data):
        if self._textarea and self._form is not None:
            self._form["data"][self._textarea][0] += data

    def handle_endtag(self, tag):
        if tag == "textarea":
            self._textarea = None
        elif tag == "select" and self._select:
            if not self._select_chosen and self._select_first is not None and self._form is not None:
                self._form["data"][self._select] = [self._select_first]
            self._select = None
        elif tag == "form":
            self._form = None


def post_forms(html: str, page_url: str) -> list[dict]:
    parser = _Forms()
    parser.feed(html)
    for form in parser.forms:
        form["action"] = urljoin(page_url, form["action"]) if form["action"] else page_url
        form["data"] = {k: v[0].removeprefix("\n") if len(v) == 1 else v for k, v in form["data"].items()}
    return [form for form in parser.forms if form["method"] == "post"]


@pytest.fixture
def world(workspace, make_key, settings):
    """One row of every kind a form can change, made through the services."""
    root = get_user_model().objects.create_superuser(username="root", password="pw-root")
    Group.objects.create(name="reviewers")
    core_services.membership_set(workspace=workspace, user=root, role="admin")
    make_key(workspace, scopes="read,write", name="agent")
    memory = factories.memory_candidate(workspace)  # a message, its conversation, Ada and her identity, a pending item
    ada = memory.subject
    project = entity_services.entity_create(workspace=workspace, kind="organisation", name="Acme Ltd")
    entity_services.relationship_add(subject=ada, predicate="works_at", object=project)
    decisions.decision_record(workspace=workspace, description="Ship on Friday", confidence=0.7)
    memory_services.trusted_state_set(workspace=workspace, key="deploy.window", value="Fridays",
                                      actor=core_services.SYSTEM)
    memory_services.trust_policy_set(workspace=workspace, actor=core_services.SYSTEM, auto_certainties=["verbatim"],
                                     auto_types=["fact"], min_confidence=0.9)
    webhook_services.webhook_create(workspace=workspace, url="https://hooks.example.com/in", events=["*"],
                                    actor=core_services.SYSTEM)
    gap = gap_services.gap_report(workspace=workspace, description="Export invoices as PDF",
                                  actor=core_services.SYSTEM)
    gap_services.gap_policy_set(workspace=workspace, todo_threshold=3, actor=core_services.SYSTEM)
    return {"root": root, "workspace": workspace, "ada": ada, "memory": memory, "gap": gap}


def stored_anywhere(secret: str) -> bool:
    """Whether any row of any table holds the secret (its longest alphanumeric run, which
    survives JSON and row-text escaping)."""
    needle = max(re.findall(r"[A-Za-z0-9]+", secret), key=len)
    tables = [t for t in connection.introspection.table_names() if t != "django_session"]
    query = " UNION ALL ".join(f'SELECT 1 FROM "{t}" AS r WHERE r::text LIKE %s' for t in tables)
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT EXISTS({query})", [f"%{needle}%"] * len(tables))
        return cursor.fetchone()[0]


# --- the Django admin ----------------------------------------------------------------------------

def _admin_change_pages(root) -> list[tuple[str, str]]:
    request = RequestFactory().get("/admin/")
    request.user = root
    pages = []
    for model, model_admin in admin.site._registry.items():
        opts = model._meta
        if opts.app_label == "axes":
            # django-axes' login records: no add page, every field read-only (checked here).
            assert not model_admin.has_add_permission(request)
            assert not model_admin.get_form(request, None, change=True).base_fields, opts.label
            continue
        # Mnemo's models and Django's own users and groups (core/admin.py guards them too).
        if model_admin.has_add_permission(request):
            pages.append((opts.label, reverse(f"admin:{opts.app_label}_{opts.model_name}_add")))
        obj = model.objects.order_by("pk").first()
        if model_admin.has_change_permission(request, obj):
            assert obj is not None, f"the world fixture has no {opts.label} to change in the admin"
            pages.append((opts.label, reverse(f"admin:{opts.app_label}_{opts.model_name}_change", args=[obj.pk])))
    return pages


def _families():
    """One secret per text box, the rule families taken in turn: every box is tried and every
    family is met, without posting each form six times per box (the families themselves
    are each tried on every API field, tests/core/test_secrets_everywhere.py)."""
    return itertools.cycle(SECRETS.items())


def test_every_admin_form_refuses_a_secret_in_every_text_box(client, world):
    client.force_login(world["root"])
    pages = _admin_change_pages(world["root"])
    assert {label for label, _ in pages} >= {"entities.Entity", "core.ApiKey", "entities.Identity", "auth.User",
                                             "auth.Group"}
    families = _families()
    tried, guarded = 0, set()
    for label, url in pages:
        [form] = [f for f in post_forms(client.get(url).content.decode(), url) if f["id"].endswith("_form")]
        boxes = [name for name in form["text"] if "__prefix__" not in name]  # the template of a new inline row
        for name in boxes:
            rule, secret = next(families)
            before = changes_in_this_transaction()
            # A new user's passwords filled in, so that the secret is the form's only fault.
            passwords = {k: "Plain-passw0rd-of-a-test" for k in ("password1", "password2") if k in form["data"]}
            response = client.post(url, {**form["data"], **passwords, name: secret, "_save": "Save"})
            assert changes_in_this_transaction() == before, (label, name, rule, "something was written")
            assert response.status_code == 200, (label, name, rule, response.status_code)
            body = response.content.decode()
            assert "errorlist" in body, (label, name, rule)
            if f"(rule {rule})" in body:  # else a format check (a date, an email) refused it first
                guarded.add(label)
            tried += 1
    assert tried >= len(SECRETS)  # every rule family met at least one box
    # Django's own user and group forms refuse it through the guard, not only by chance of
    # a format check (as the JSON, date and email boxes elsewhere do).
    assert {"auth.User", "auth.Group", "entities.Entity", "core.ApiKey"} <= guarded


def test_the_admin_still_saves_plain_text(client, world):
    client.force_login(world["root"])
    ada = world["ada"]
    url = reverse("admin:entities_entity_change", args=[ada.pk])
    [form] = [f for f in post_forms(client.get(url).content.decode(), url) if f["id"].endswith("_form")]
    response = client.post(url, {**form["data"], "description": "Plays the cello.", "_save": "Save"})
    assert response.status_code == 302
    ada.refresh_from_db()
    assert ada.description == "Plays the cello."


# --- the dashboard -------------------------------------------------------------------------------

def _dashboard_patterns(resolver=None, prefix="") -> list[tuple[str, URLPattern]]:
    found = []
    for entry in (resolver or get_resolver()).url_patterns:
        route = prefix + str(entry.pattern)
        if isinstance(entry, URLResolver):
            if not route.startswith(("admin/", "api/")):
                found += _dashboard_patterns(entry, route)
        elif entry.name and route.startswith("w/"):
            found.append((route, entry))
    return found


def _dashboard_pages(world) -> list[str]:
    """Every dashboard page the URL configuration names whose ids this world has; routes
    with other parts (a decision, an action) are POST targets of forms on these pages."""
    memory = world["memory"]
    ids = {"slug": world["workspace"].slug, "entity_id": world["ada"].pk, "memory_id": memory.pk,
           "conversation_id": memory.evidence.first().interaction.conversation_id,
           "item_id": ReviewItem.objects.get(kind="memory", target_id=memory.pk).pk, "gap_id": world["gap"].pk}
    pages = []
    for route, _ in _dashboard_patterns():
        names = re.findall(r"<(?:\w+:)?(\w+)>", route)
        if set(names) <= set(ids):
            pages.append("/" + re.sub(r"<(?:\w+:)?(\w+)>", lambda m: str(ids[m.group(1)]), route))
    return pages


def test_every_dashboard_form_refuses_a_secret_in_every_text_box(client, world):
    client.force_login(world["root"])
    assert stored_anywhere("the value Fridays") and not any(stored_anywhere(s) for s in SECRETS.values())
    forms = {}
    for page in _dashboard_pages(world):
        response = client.get(page)
        if response.status_code != 200:
            continue
        for form in post_forms(response.content.decode(), page):
            if form["text"] and not form["action"].startswith(("/admin/", "/logout")):
                forms.setdefault((form["action"], tuple(sorted(form["text"]))), form)
    actions = {action for action, _ in forms}
    assert any("/identities/" in a for a in actions) and any("/trusted/set/" in a for a in actions)
    assert any("/memories/" in a and a.endswith("/edit/") for a in actions)
    families = _families()
    for (action, _), form in forms.items():
        for name in form["text"]:
            rule, secret = next(families)
            # The other boxes hold plain words, as a person would type, so the secret is
            # what the form has to refuse, not an empty required field.
            plain = {box: form["data"].get(box) or "plain" for box in form["text"]}
            response = client.post(action, {**form["data"], **plain, name: secret}, follow=True)
            # 201: the keys page created a key and ignored its agent search box, whose words are
            # never stored (checked below); what matters is that no secret is kept or echoed.
            assert response.status_code in (200, 201, 404, 422), (action, name, rule, response.status_code)
            assert secret not in response.content.decode(), (action, name, rule)
            # A form may still do what it does with its other fields (the review card's
            # `merge_into` box is ignored by its default button, approve); what the
            # secret may never be is stored.
            assert not stored_anywhere(secret), (action, name, rule)
