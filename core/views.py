from __future__ import annotations

import math

from axes.helpers import get_cool_off
from django.contrib.auth.decorators import login_required
from django.shortcuts import redirect, render

from core import layers, selectors
from core.decorators import workspace_view

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
