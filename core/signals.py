"""Receivers of Django's auth signals; each hands over to one service."""

from __future__ import annotations

from django.contrib.auth.signals import user_login_failed
from django.dispatch import receiver

from core.ratelimit import client_address
from core.services import login_failure_record


@receiver(user_login_failed, dispatch_uid="core.login_failure_audit")
def _audit_failed_login(sender, credentials: dict, request=None, **kwargs) -> None:
    if request is None:
        return  # authenticate() outside a request (a shell, a script): no client to name.
    # django-axes refused the attempt unchecked, during a lockout (its backend flags the
    # request, and only a checked failure gets a failure count): no row, so an attacker
    # hammering a locked login cannot grow the audit log.
    if getattr(request, "axes_locked_out", False) and getattr(request, "axes_failures_since_start", None) is None:
        return
    login_failure_record(
        username=str(credentials.get("username", "")), client_address=client_address(request), path=request.path
    )
