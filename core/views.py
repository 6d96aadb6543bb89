from __future__ import annotations

import math

from axes.helpers import get_cool_off
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import ValidationError
from django.core.paginator import Paginator
from django.http import Http404
from django.shortcuts import redirect, render
from django.urls import NoReverseMatch, reverse
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_POST

from core import layers, params, selectors, services
from core.decorators import workspace_view
from core.errors import ApiError
from core.models import Role, Scope
from core.pagination import page_number

PAGE_SIZE = 50

def login_locked_out(request, original_response=None, credentials=None):
    """django-axes' lockout answer (AXES_LOCKOUT_CALLABLE) for /login/ and /admin/login/:
    a page that says why and for how long, with Retry-After, instead of the login form."""
    cool_off = get_cool_off(request)
    seconds = math.ceil(cool_off.total_seconds()) if cool_off else None
    context = {"minutes": math.ceil(seconds / 60) if seconds else None}
    response = render(request, "registration/locked_out.html", context, status=429)
    if seconds:
        response["Retry-After"] = str(seconds)
    return response


@login_required
def root(request):
    memberships = list(selectors.user_memberships(user=request.user))
    if not memberships:
        return render(request, "core/no_workspace.html", status=403)
    last = request.session.get("last_workspace")
    slugs = [m.workspace.slug for m in memberships]
    return redirect("home", slug=last if last in slugs else slugs[0])


@workspace_view()
def home(request):
    workspace = request.workspace
    context = {
        "counts": {
            "Members": workspace.memberships.count(),
            "Active API keys": selectors.api_keys_active_count(workspace=workspace),
            **layers.workspace_counts(workspace),
        },
        "pending": layers.pending_counts(workspace),
        "heartbeat": selectors.worker_last_seen(),
        "events": selectors.audit_recent(workspace=workspace, limit=15),
    }
    return render(request, "core/home.html", context)


# --- the audit log ---------------------------------------------------------------------------

# Target types with a page of their own: (url name, whether the page takes the target's id).
# Names, not imports: core stands below the apps whose pages these are.
TARGET_PAGES = {
    "memory.memory": ("memory", True),
    "entities.entity": ("entity", True),
    "entities.decisionrecord": ("entity", True),  # a decision's id is its entity's
    "gaps.capabilitygap": ("gap", True),
    "conversations.conversation": ("conversation", True),
    "context.packlog": ("pack", True),
    "core.apikey": ("api-key", True),
    "memory.trustedstate": ("trusted-state", False),
    "memory.workingsession": ("working-session", True),
    "memory.scratchpad": ("scratchpad", True),
    "webhooks.webhookendpoint": ("webhooks", False),
}


def _target_url(slug: str, target_type: str, target_id: str) -> str:
    name, with_id = TARGET_PAGES.get(target_type, (None, False))
    if name is None or (with_id and not target_id):
        return ""
    try:
        return reverse(name, args=[slug, target_id] if with_id else [slug])
    except NoReverseMatch:  # an id that is not the page's kind of id
        return ""


@workspace_view(Role.REVIEWER)
def audit_log(request):
    """Every audit event of the workspace, newest first, with filters that combine.

    Reviewers and admins: the log says who decided what (reviewers answer for their
    decisions and check each other's), and its details name people, addresses that tried
    a key, and key prefixes — more than a read-only viewer needs (the home page shows
    them the last few events without the details)."""
    get = request.GET
    facets = selectors.audit_facets(workspace=request.workspace)
    since, until = params.day(get.get("since")), params.day(get.get("until"))
    filters = {"verb": params.choice(get.get("verb"), facets["verbs"]),
               "actor": params.choice(get.get("actor"), facets["actors"]),
               "target_type": params.choice(get.get("target_type"), facets["target_types"]),
               "target_id": get.get("target_id", "").strip()[:64] or None}
    understood = {**filters, "since": since, "until": until}
    ignored = [name for name in ("verb", "actor", "target_type", "since", "until") if get.get(name) and not understood[name]]
    rows = selectors.audit_search(workspace=request.workspace, **filters,
                                  since=params.day_start(since) if since else None,
                                  until=params.day_end(until) if until else None)
    page = Paginator(rows, PAGE_SIZE).get_page(page_number(request))
    slug = request.workspace.slug
    events = [{"event": e, "url": _target_url(slug, e.target_type, e.target_id)} for e in page.object_list]
    context = {"page": page, "events": events, "facets": facets, **filters,
               "since": since.isoformat() if since else "", "until": until.isoformat() if until else "",
               "ignored": ignored, "filtered": any(filters.values()) or since or until}
    return render(request, "core/audit.html#rows" if request.htmx else "core/audit.html", context)


# --- API keys --------------------------------------------------------------------------------

def _key_or_404(request, key_id: int):
    api_key = selectors.api_key_get(workspace=request.workspace, key_id=key_id)
    if api_key is None:
        raise Http404("No such API key.")
    return api_key


def _agent_id(raw: str | None) -> int | None:
    """The agent picker's choice: an entity id, or None for no agent."""
    return int(raw) if raw and raw.isdigit() and len(raw) < 19 else None


def _problem(exc: Exception) -> str:
    return exc.message if isinstance(exc, ApiError) else "; ".join(exc.messages)


@workspace_view(Role.ADMIN)
def api_keys(request):
    """The workspace's keys with what each may do and when it was last used; a form to
    create one. Admins only, like the keys API (scope admin)."""
    page = Paginator(selectors.api_key_list(workspace=request.workspace).select_related("agent", "created_by"),
                     PAGE_SIZE).get_page(page_number(request))
    return render(request, "core/keys.html", {"page": page, "scopes": Scope.choices})


@never_cache
@require_POST
@workspace_view(Role.ADMIN)
def api_key_create(request):
    """Create a key and show it on the answer to this POST, once: it is stored nowhere (not
    in the session, not in a message), so no later page can show it again."""
    expires = params.day(request.POST.get("expires"))
    if request.POST.get("expires") and expires is None:
        messages.error(request, "The expiry must be a date (YYYY-MM-DD).")
        return redirect("api-keys", slug=request.workspace.slug)
    try:
        api_key, plaintext = services.api_key_create(
            workspace=request.workspace, name=request.POST.get("name", "")[:200],
            scopes=request.POST.getlist("scopes"), actor=services.Actor.for_user(request.user),
            expires_at=params.day_start(expires) if expires else None,
            agent_id=_agent_id(request.POST.get("agent")))
    except (ApiError, ValidationError) as exc:
        messages.error(request, _problem(exc))
        return redirect("api-keys", slug=request.workspace.slug)
    return render(request, "core/key_created.html", {"api_key": api_key, "plaintext": plaintext}, status=201)


@workspace_view(Role.ADMIN)
def api_key_detail(request, key_id: int):
    api_key = _key_or_404(request, key_id)
    events = selectors.audit_search(workspace=request.workspace, target_type="core.apikey",
                                    target_id=str(api_key.pk))[:20]
    return render(request, "core/key_detail.html", {"api_key": api_key, "events": events,
                                                    "active": api_key.is_active()})


@workspace_view(Role.ADMIN)
def api_key_revoke(request, key_id: int):
    """GET asks for confirmation (a page, so it works without JavaScript); POST revokes."""
    api_key = _key_or_404(request, key_id)
    if request.method != "POST":
        return render(request, "core/key_revoke.html", {"api_key": api_key})
    services.api_key_revoke(api_key=api_key, actor=services.Actor.for_user(request.user))
    messages.success(request, f"Revoked {api_key.name} (mn_{api_key.prefix}…): agents using it are refused from now on.")
    return redirect("api-key", slug=request.workspace.slug, key_id=api_key.pk)


@require_POST
@workspace_view(Role.ADMIN)
def api_key_bind(request, key_id: int):
    api_key = _key_or_404(request, key_id)
    agent_id = _agent_id(request.POST.get("agent"))
    if "agent" not in request.POST or (agent_id is None and request.POST["agent"]):
        messages.error(request, "Choose an agent from the search results, or “no agent”.")
        return redirect("api-key", slug=request.workspace.slug, key_id=api_key.pk)
    try:
        services.api_key_bind(api_key=api_key, agent_id=agent_id, actor=services.Actor.for_user(request.user))
    except ApiError as exc:
        messages.error(request, _problem(exc))
        return redirect("api-key", slug=request.workspace.slug, key_id=api_key.pk)
    messages.success(request, f"Bound to {api_key.agent.name}." if api_key.agent else "Unbound: no agent.")
    return redirect("api-key", slug=request.workspace.slug, key_id=api_key.pk)
