from __future__ import annotations

from core.selectors import user_memberships


def workspace(request):
    """The current workspace (set by workspace views) and the user's memberships, for the
    navigation and the workspace switcher."""
    user = getattr(request, "user", None)
    if user is None or not user.is_authenticated:
        return {}
    return {
        "current_workspace": getattr(request, "workspace", None),
        "current_membership": getattr(request, "membership", None),
        "memberships": list(user_memberships(user=user)),
    }
