from __future__ import annotations

from functools import wraps

from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.http import Http404, HttpResponse

from core.models import Role
from core.selectors import membership_get_by_slug, workspace_importing


def workspace_view(role: str = Role.VIEWER):
    """Resolve /w/<slug>/ to the user's membership: 404 when the user is not a member (an
    outsider cannot even learn that the workspace exists), 403 when the role is too low,
    409 while an archive import loads the workspace (nothing of it is shown half-stored)."""

    def decorator(view):
        @login_required
        @wraps(view)
        def wrapper(request, slug: str, *args, **kwargs):
            membership = membership_get_by_slug(user=request.user, slug=slug)
            if membership is None:
                raise Http404("No such workspace.")
            if not membership.allows(role):
                raise PermissionDenied(f"This needs the {role} role.")
            if workspace_importing(workspace_id=membership.workspace_id):
                return HttpResponse("This workspace is being imported from an archive; it opens once the import "
                                    "ends.", status=409, content_type="text/plain; charset=utf-8")
            request.workspace = membership.workspace
            request.membership = membership
            # Written only when it changes: a session written on every page is three more
            # statements and a commit per request (issue 21, the review queue's timings).
            if request.session.get("last_workspace") != membership.workspace.slug:
                request.session["last_workspace"] = membership.workspace.slug
            return view(request, *args, **kwargs)

        return wrapper

    return decorator
