from __future__ import annotations

from functools import wraps

from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.http import Http404

from core.models import Role
from core.selectors import membership_get_by_slug


def workspace_view(role: str = Role.VIEWER):
    """Resolve /w/<slug>/ to the user's membership: 404 when the user is not a member (an
    outsider cannot even learn that the workspace exists), 403 when the role is too low."""

    def decorator(view):
        @login_required
        @wraps(view)
        def wrapper(request, slug: str, *args, **kwargs):
            membership = membership_get_by_slug(user=request.user, slug=slug)
            if membership is None:
                raise Http404("No such workspace.")
            if not membership.allows(role):
                raise PermissionDenied(f"This needs the {role} role.")
            request.workspace = membership.workspace
            request.membership = membership
            request.session["last_workspace"] = membership.workspace.slug
            return view(request, *args, **kwargs)

        return wrapper

    return decorator
