"""Writes for webhooks: endpoints (create, update, delete, rotate the secret), events
(`webhooks_emit`, which any app calls inside the transaction of the write it announces),
a ping, replays, and the erasure hook. One attempt at sending is webhooks.delivery's
`delivery_attempt` (re-exported here), which the task calls.

Every endpoint write is atomic and audited. Deliveries are created in the caller's
transaction and their tasks enqueued once it commits (robust: a broker that is down is
logged, and the beat sweep sends them later), so an event is sent only when what it
announces was stored. The secret is generated here and is never in an audit row."""

from __future__ import annotations

import secrets
import uuid

from django.core.exceptions import ValidationError
from django.db import transaction
from django.db.models import Q
from django.utils import timezone

from core.errors import Conflict
from core.models import Workspace
from core.redaction import redact_all
from core.safe_text import refuse_secrets
from core.services import SYSTEM, Actor, audit_record
from webhooks import events, policy
from webhooks.delivery import delivery_attempt  # noqa: F401 - re-exported: a service like the others
from webhooks.models import DeliveryStatus, WebhookDelivery, WebhookEndpoint
from webhooks.tasks import deliver

MAX_DESCRIPTION_CHARS = 500


def _new_secret() -> str:
    return secrets.token_urlsafe(32)


def _clean_url(url: str) -> str:
    url = url.strip()
    problem = policy.url_problem(url)
    if problem:
        raise ValidationError({"url": problem})
    return url


def _clean_events(names) -> list[str]:
    names = list(dict.fromkeys(str(name) for name in names))
    if not names:
        raise ValidationError({"events": "Subscribe to at least one event, or to \"*\" for all."})
    unknown = [name for name in names if name != events.ALL and name not in events.EVENTS]
    if unknown:
        raise ValidationError({"events": f"Unknown event {unknown[0]!r}; see the event catalogue."})
    return [events.ALL] if events.ALL in names else names


def _clean_description(description: str) -> str:
    description = description.strip()
    if len(description) > MAX_DESCRIPTION_CHARS:
        raise ValidationError({"description": f"At most {MAX_DESCRIPTION_CHARS} characters."})
    return description


def _audit_data(endpoint: WebhookEndpoint) -> dict:
    # The URL and settings, never the secret.
    return {"url": endpoint.url, "events": endpoint.events, "active": endpoint.active}


@transaction.atomic
def webhook_create(*, workspace: Workspace, url: str, events: list[str], actor: Actor, description: str = "",
                   active: bool = True) -> WebhookEndpoint:
    """The new endpoint; its `secret` is the one time the caller sees it whole."""
    refuse_secrets(url=url, description=description)
    endpoint = WebhookEndpoint.objects.create(
        workspace=workspace, url=_clean_url(url), events=_clean_events(events), secret=_new_secret(), active=active,
        description=_clean_description(description), created_by=actor.user)
    audit_record(workspace=workspace, actor=actor, verb="webhook.create", target=endpoint, data=_audit_data(endpoint))
    return endpoint


@transaction.atomic
def webhook_update(*, endpoint: WebhookEndpoint, actor: Actor, url: str | None = None, events: list[str] | None = None,
                   active: bool | None = None, description: str | None = None) -> WebhookEndpoint:
    """Change what is given (None leaves a field as it is)."""
    refuse_secrets(url=url or "", description=description or "")
    endpoint = WebhookEndpoint.objects.select_for_update().get(pk=endpoint.pk)
    changed = []
    for name, value in (("url", None if url is None else _clean_url(url)),
                        ("events", None if events is None else _clean_events(events)),
                        ("active", active),
                        ("description", None if description is None else _clean_description(description))):
        if value is not None and value != getattr(endpoint, name):
            setattr(endpoint, name, value)
            changed.append(name)
    if changed:
        endpoint.save(update_fields=changed)
        audit_record(workspace=endpoint.workspace, actor=actor, verb="webhook.update", target=endpoint,
                     data={**_audit_data(endpoint), "changed": changed})
    return endpoint


@transaction.atomic
def webhook_delete(*, endpoint: WebhookEndpoint, actor: Actor) -> None:
    """The endpoint and its deliveries; a task still queued for one finds nothing to send."""
    audit_record(workspace=endpoint.workspace, actor=actor, verb="webhook.delete", target=endpoint,
                 data=_audit_data(endpoint))
    endpoint.delete()


@transaction.atomic
def webhook_rotate_secret(*, endpoint: WebhookEndpoint, actor: Actor) -> WebhookEndpoint:
    """A new secret, shown once; deliveries sent from now on are signed with it."""
    endpoint = WebhookEndpoint.objects.select_for_update().get(pk=endpoint.pk)
    endpoint.secret = _new_secret()
    endpoint.save(update_fields=["secret"])
    audit_record(workspace=endpoint.workspace, actor=actor, verb="webhook.rotate_secret", target=endpoint,
                 data={"url": endpoint.url})
    return endpoint


def _enqueue(delivery_ids: list[int]) -> None:
    for delivery_id in delivery_ids:
        deliver.delay(delivery_id)


def _deliveries(endpoints: list[WebhookEndpoint], *, event: str, workspace_slug: str, data: dict) -> list[int]:
    event_id = str(uuid.uuid4())
    payload = events.envelope(event=event, event_id=event_id, occurred_at=timezone.now(), workspace=workspace_slug,
                              data=redact_all(data))
    rows = WebhookDelivery.objects.bulk_create([
        WebhookDelivery(endpoint=endpoint, event=event, event_id=event_id, payload=payload) for endpoint in endpoints])
    ids = [row.pk for row in rows]
    transaction.on_commit(lambda: _enqueue(ids), robust=True)
    return ids


def webhooks_emit(*, workspace_id: int, event: str, data: dict) -> list[int]:
    """Announce `event` (webhooks.events.EVENTS) to the workspace's active endpoints that
    subscribe to it: one delivery each, sent after the caller's transaction commits (none
    if it rolls back). `data` passes the read path's redaction (emails, phone numbers,
    IPs and secrets are masked): everything in it leaves Mnemo. Returns the new
    deliveries' ids; with no such endpoint it costs one query and returns []."""
    return webhooks_emit_many(workspace_id=workspace_id, event=event, data=[data])


def webhooks_emit_many(*, workspace_id: int, event: str, data: list[dict]) -> list[int]:
    """One event per item of `data` (a bulk decision), with one query for the endpoints."""
    if event not in events.EVENTS:
        raise ValueError(f"unknown webhook event {event!r}")
    if not data:
        return []
    endpoints = list(WebhookEndpoint.objects.select_related("workspace").filter(
        workspace_id=workspace_id, active=True).filter(Q(events__contains=[event]) | Q(events__contains=[events.ALL])))
    if not endpoints:
        return []
    with transaction.atomic():
        return [delivery_id for item in data for delivery_id in
                _deliveries(endpoints, event=event, workspace_slug=endpoints[0].workspace.slug, data=item)]


def deliveries_erase(*, workspace_id: int, key: str, ids) -> int:
    """Part of an entity's erasure (the erasers of the apps whose rows a payload copied
    call it with the ids they remove): deliveries whose `data[key]` is one of `ids` keep
    their envelope, and their data becomes {"erased": true}; a pending one is not sent.
    Returns how many."""
    rows = list(WebhookDelivery.objects.filter(endpoint__workspace_id=workspace_id,
                                               **{f"payload__data__{key}__in": list(ids)}).only("pk", "payload", "status"))
    for row in rows:
        row.payload = {**row.payload, "data": {"erased": True}}
        if row.status == DeliveryStatus.PENDING:
            row.status, row.last_error = DeliveryStatus.FAILED, "Its data was erased."
    WebhookDelivery.objects.bulk_update(rows, ["payload", "status", "last_error"])
    return len(rows)


@transaction.atomic
def webhook_ping(*, endpoint: WebhookEndpoint, actor: Actor = SYSTEM) -> WebhookDelivery:
    """A `webhook.ping` to this endpoint alone, whatever it subscribes to."""
    if not endpoint.active:
        raise ValidationError({"active": "The endpoint is inactive; activate it to ping it."})
    [delivery_id] = _deliveries([endpoint], event="webhook.ping", workspace_slug=endpoint.workspace.slug,
                                data={"webhook_id": endpoint.pk})
    audit_record(workspace=endpoint.workspace, actor=actor, verb="webhook.ping", target=endpoint,
                 data={"delivery": delivery_id})
    return WebhookDelivery.objects.get(pk=delivery_id)


@transaction.atomic
def delivery_replay(*, delivery: WebhookDelivery, actor: Actor) -> WebhookDelivery:
    """Send a delivered or failed delivery again: a new delivery with the same payload and
    event_id (so the receiver can tell it is the same event), signed with today's secret."""
    delivery = WebhookDelivery.objects.select_related("endpoint__workspace").get(pk=delivery.pk)
    if delivery.status == DeliveryStatus.PENDING:
        raise Conflict(f"Delivery {delivery.pk} is still pending; it is retried on its own.",
                       details={"status": delivery.status})
    if not delivery.endpoint.active:
        raise ValidationError({"active": "The endpoint is inactive; activate it to replay a delivery."})
    replay = WebhookDelivery.objects.create(endpoint=delivery.endpoint, event=delivery.event,
                                            event_id=delivery.event_id, payload=delivery.payload)
    audit_record(workspace=delivery.endpoint.workspace, actor=actor, verb="webhook.replay", target=replay,
                 data={"replay_of": delivery.pk, "event": delivery.event, "event_id": str(delivery.event_id)})
    transaction.on_commit(lambda: _enqueue([replay.pk]), robust=True)
    return replay
