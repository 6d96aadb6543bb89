"""The webhooks page: endpoints (add, activate or pause, ping, rotate the secret, delete)
and recent deliveries (replay). Admins only, like the API: checked here by
workspace_view, not in the template. Actions answer htmx with the updated panel and a
`webhooks-changed` event (the other panel refreshes on it); without JavaScript they
redirect back with a message."""

from __future__ import annotations

from django.contrib import messages
from django.core.exceptions import ValidationError
from django.http import Http404, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_POST

from core.decorators import workspace_view
from core.errors import ApiError
from core.models import Role
from core.services import Actor
from webhooks import events, selectors, services
from webhooks.models import WebhookDelivery, WebhookEndpoint

PANELS = ("endpoints", "deliveries")
ACTIONS = ("pause", "activate", "ping", "rotate", "delete")


def _context(request, **extra) -> dict:
    return {"endpoints": list(selectors.webhook_list(workspace=request.workspace)),
            "deliveries": selectors.deliveries_recent(workspace=request.workspace),
            "events": events.EVENTS, **extra}


@workspace_view(Role.ADMIN)
def webhooks_page(request):
    target = request.htmx.target if request.htmx else None
    template = f"webhooks/list.html#{target}" if target in PANELS else "webhooks/list.html"
    return render(request, template, _context(request))


def _done(request, panel: str, message: str):
    if request.htmx:
        response = render(request, f"webhooks/list.html#{panel}", _context(request, notice=message))
        if panel == "endpoints":  # the deliveries panel refreshes (a ping adds one)
            response["HX-Trigger"] = "webhooks-changed"
        return response
    messages.success(request, message)
    return redirect("webhooks", slug=request.workspace.slug)


def _failed(request, exc: Exception):
    message = exc.message if isinstance(exc, ApiError) else "; ".join(exc.messages)
    status = exc.status if isinstance(exc, ApiError) else 422
    if request.htmx:
        return HttpResponse(message, status=status, content_type="text/plain; charset=utf-8")
    messages.error(request, message)
    return redirect("webhooks", slug=request.workspace.slug)


@require_POST
@workspace_view(Role.ADMIN)
def webhook_add(request):
    try:
        endpoint = services.webhook_create(
            workspace=request.workspace, url=request.POST.get("url", "")[:2100],
            events=request.POST.getlist("events"), description=request.POST.get("description", "")[:600],
            actor=Actor.for_user(request.user))
    except ValidationError as exc:
        return _failed(request, exc)
    # Shown once, like a new API key in the admin: the page never shows it again.
    messages.warning(request, f"Endpoint added. Its signing secret, shown only this once: {endpoint.secret}")
    return redirect("webhooks", slug=request.workspace.slug)


@require_POST
@workspace_view(Role.ADMIN)
def webhook_act(request, webhook_id: int, action: str):
    if action not in ACTIONS:
        raise Http404("No such action.")
    try:
        endpoint = selectors.webhook_get(workspace=request.workspace, webhook_id=webhook_id)
    except WebhookEndpoint.DoesNotExist:
        raise Http404("No such webhook.")
    actor = Actor.for_user(request.user)
    try:
        if action in ("pause", "activate"):
            services.webhook_update(endpoint=endpoint, actor=actor, active=action == "activate")
            return _done(request, "endpoints", f"{'Activated' if action == 'activate' else 'Paused'}: {endpoint.url}")
        if action == "ping":
            services.webhook_ping(endpoint=endpoint, actor=actor)
            return _done(request, "endpoints", f"Ping sent to {endpoint.url}; see the deliveries below.")
        if action == "rotate":
            endpoint = services.webhook_rotate_secret(endpoint=endpoint, actor=actor)
            return _done(request, "endpoints", f"New signing secret for {endpoint.url}, shown only this once: "
                                               f"{endpoint.secret}")
        services.webhook_delete(endpoint=endpoint, actor=actor)
        return _done(request, "endpoints", f"Deleted: {endpoint.url}")
    except (ApiError, ValidationError) as exc:
        return _failed(request, exc)


@require_POST
@workspace_view(Role.ADMIN)
def delivery_replay(request, delivery_id: int):
    try:
        delivery = selectors.delivery_get(workspace=request.workspace, delivery_id=delivery_id)
    except WebhookDelivery.DoesNotExist:
        raise Http404("No such delivery.")
    try:
        services.delivery_replay(delivery=delivery, actor=Actor.for_user(request.user))
    except (ApiError, ValidationError) as exc:
        return _failed(request, exc)
    return _done(request, "deliveries", f"Replaying {delivery.event} to {delivery.endpoint.url}.")
