from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.shortcuts import redirect, render

from core import registry, selectors
from core.decorators import workspace_view

# Dashboard sections and the issue that fills each one; until then the page says so.
SECTIONS = {
    "gaps": ("Gaps", "Capability gaps detected from interactions, and the TODOs they became."),
}


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
            **registry.workspace_counts(workspace),
        },
        "pending": registry.pending_counts(workspace),
        "heartbeat": selectors.worker_last_seen(),
        "events": selectors.audit_recent(workspace=workspace, limit=15),
    }
    return render(request, "core/home.html", context)


@workspace_view()
def section(request, section: str):
    title, description = SECTIONS[section]
    return render(request, "core/section.html", {"section": section, "title": title, "description": description})
