"""Webhook endpoints and their deliveries. Configuration is admin business: every
operation, reads included, needs the admin scope (a URL and its deliveries' payloads say
where the workspace's events go)."""

from django.http import HttpRequest
from ninja import Query, Router, Status

from core.auth import require
from core.input_types import Id
from core.pagination import PageIn, page
from core.services import Actor
from webhooks import selectors, services
from webhooks.models import WebhookDelivery, WebhookEndpoint
from webhooks.schemas import DeliveryOut, DeliveryPage, WebhookIn, WebhookPage, WebhookPatchIn, WebhookSecretOut, WebhookOut

router = Router(tags=["webhooks"])
ADMIN = require("admin")


def webhook_out(endpoint: WebhookEndpoint, *, with_secret: bool = False) -> dict:
    out = {"id": endpoint.pk, "url": endpoint.url, "events": endpoint.events, "active": endpoint.active,
           "description": endpoint.description, "secret_hint": endpoint.secret_hint, "created_at": endpoint.created_at,
           "created_by": endpoint.created_by.get_username() if endpoint.created_by else None}
    return {**out, "secret": endpoint.secret} if with_secret else out


def delivery_out(delivery: WebhookDelivery) -> dict:
    return {"id": delivery.pk, "webhook_id": delivery.endpoint_id, "event": delivery.event,
            "event_id": delivery.event_id, "status": delivery.status, "attempts": delivery.attempts,
            "last_status_code": delivery.last_status_code, "last_error": delivery.last_error,
            "next_attempt_at": delivery.next_attempt_at, "delivered_at": delivery.delivered_at,
            "created_at": delivery.created_at, "payload": delivery.payload}


def _endpoint(request, webhook_id: int) -> WebhookEndpoint:
    return selectors.webhook_get(workspace=request.workspace, webhook_id=webhook_id)


@router.get("/webhooks", response=WebhookPage, auth=ADMIN, summary="Webhook endpoints of this workspace, newest first")
def list_webhooks(request: HttpRequest, paging: Query[PageIn]):
    return page(selectors.webhook_list(workspace=request.workspace), paging, webhook_out)


@router.post("/webhooks", response={201: WebhookSecretOut}, auth=ADMIN,
             summary="Add an endpoint; the answer holds its signing secret, shown only this once")
def create_webhook(request: HttpRequest, payload: WebhookIn):
    endpoint = services.webhook_create(workspace=request.workspace, url=payload.url, events=list(payload.events),
                                       description=payload.description, active=payload.active,
                                       actor=Actor.for_api_key(request.auth))
    return Status(201, webhook_out(endpoint, with_secret=True))


@router.get("/webhooks/{webhook_id}", response=WebhookOut, auth=ADMIN, summary="One endpoint")
def get_webhook(request: HttpRequest, webhook_id: Id):
    return webhook_out(_endpoint(request, webhook_id))


@router.patch("/webhooks/{webhook_id}", response=WebhookOut, auth=ADMIN,
              summary="Change an endpoint's URL, events, description or active flag")
def update_webhook(request: HttpRequest, webhook_id: Id, payload: WebhookPatchIn):
    changes = payload.model_dump(exclude_unset=True)
    endpoint = services.webhook_update(endpoint=_endpoint(request, webhook_id), actor=Actor.for_api_key(request.auth),
                                       **{k: (list(v) if k == "events" else v) for k, v in changes.items()
                                          if v is not None})
    return webhook_out(endpoint)


@router.delete("/webhooks/{webhook_id}", response={204: None}, auth=ADMIN,
               summary="Delete an endpoint and its deliveries")
def delete_webhook(request: HttpRequest, webhook_id: Id):
    services.webhook_delete(endpoint=_endpoint(request, webhook_id), actor=Actor.for_api_key(request.auth))
    return Status(204, None)


@router.post("/webhooks/{webhook_id}/rotate-secret", response=WebhookSecretOut, auth=ADMIN,
             summary="A new signing secret, shown only in this answer")
def rotate_secret(request: HttpRequest, webhook_id: Id):
    endpoint = services.webhook_rotate_secret(endpoint=_endpoint(request, webhook_id),
                                              actor=Actor.for_api_key(request.auth))
    return webhook_out(endpoint, with_secret=True)


@router.post("/webhooks/{webhook_id}/ping", response={201: DeliveryOut}, auth=ADMIN,
             summary="Send a webhook.ping event to this endpoint")
def ping_webhook(request: HttpRequest, webhook_id: Id):
    delivery = services.webhook_ping(endpoint=_endpoint(request, webhook_id), actor=Actor.for_api_key(request.auth))
    return Status(201, delivery_out(delivery))


@router.get("/webhooks/{webhook_id}/deliveries", response=DeliveryPage, auth=ADMIN,
            summary="An endpoint's deliveries, newest first")
def list_deliveries(request: HttpRequest, webhook_id: Id, paging: Query[PageIn]):
    return page(selectors.delivery_list(endpoint=_endpoint(request, webhook_id)), paging, delivery_out)


@router.post("/deliveries/{delivery_id}/replay", response={201: DeliveryOut}, auth=ADMIN,
             summary="Send a delivered or failed delivery again (same payload and event_id)")
def replay_delivery(request: HttpRequest, delivery_id: Id):
    delivery = selectors.delivery_get(workspace=request.workspace, delivery_id=delivery_id)
    return Status(201, delivery_out(services.delivery_replay(delivery=delivery, actor=Actor.for_api_key(request.auth))))
