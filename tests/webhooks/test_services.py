"""Endpoints, emitting events, and single delivery attempts against a real HTTP receiver."""

from __future__ import annotations

import json
import socket
from datetime import timedelta

import pytest
from django.core.exceptions import ValidationError
from django.db import transaction
from django.utils import timezone

from core.errors import Conflict
from core.models import AuditEvent
from core.safe_text import SecretRefused
from core.services import SYSTEM
from tests.core.test_secrets_everywhere import SECRETS
from tests.webhooks.receiver import Receiver
from webhooks import services, signing
from webhooks.delivery import deliveries_requeue_lost, delivery_attempt
from webhooks.models import DeliveryStatus, WebhookDelivery, WebhookEndpoint

pytestmark = pytest.mark.django_db


def _attempt(delivery_id: int):
    return delivery_attempt(delivery_id=delivery_id)


# --- endpoints ---------------------------------------------------------------------------------

def test_it_generates_a_secret_and_audits_without_it(make_endpoint):
    endpoint = make_endpoint(description="CI bot")
    assert len(endpoint.secret) >= 40 and endpoint.secret_hint == "…" + endpoint.secret[-4:]
    event = AuditEvent.objects.get(verb="webhook.create")
    assert endpoint.secret not in json.dumps(event.data) and event.data["url"] == endpoint.url


def test_rotating_replaces_the_secret(make_endpoint):
    endpoint = make_endpoint()
    old = endpoint.secret
    assert services.webhook_rotate_secret(endpoint=endpoint, actor=SYSTEM).secret != old
    assert WebhookEndpoint.objects.get().secret != old
    assert old not in json.dumps(list(AuditEvent.objects.values_list("data", flat=True)))


@pytest.mark.parametrize("url", ["ftp://example.com/", "https://ann@example.com/x", "not a url"])
def test_it_refuses_a_bad_url_and_stores_nothing(make_endpoint, url):
    with pytest.raises(ValidationError):
        make_endpoint(url=url)
    assert not WebhookEndpoint.objects.exists()


def test_it_refuses_a_url_with_a_password_as_a_secret(make_endpoint):
    with pytest.raises(SecretRefused):
        make_endpoint(url="https://ann:Zx8kLq2vPw9@hooks.example.com/in")
    assert not WebhookEndpoint.objects.exists()


def test_it_refuses_unknown_events(make_endpoint):
    with pytest.raises(ValidationError, match="Unknown event"):
        make_endpoint(events=["memory.deleted"])


def test_it_refuses_a_secret_in_the_description(make_endpoint):
    with pytest.raises(SecretRefused):
        make_endpoint(description=f"token {SECRETS['github_token']}")
    assert not WebhookEndpoint.objects.exists()


def test_update_changes_what_is_given_and_audits(make_endpoint):
    endpoint = make_endpoint(events=["review.decided"])
    services.webhook_update(endpoint=endpoint, actor=SYSTEM, events=["*", "gap.resolved"], active=False)
    endpoint.refresh_from_db()
    assert endpoint.events == ["*"] and not endpoint.active
    assert AuditEvent.objects.get(verb="webhook.update").data["changed"] == ["events", "active"]


# --- emitting ----------------------------------------------------------------------------------

def test_emit_makes_a_delivery_for_each_active_subscribed_endpoint_only(make_endpoint, other_workspace):
    decided = make_endpoint(events=["review.decided"])
    everything = make_endpoint(events=["*"])
    make_endpoint(events=["memory.activated"])
    make_endpoint(events=["*"], active=False)
    make_endpoint(events=["*"], workspace_=other_workspace)
    ids = services.webhooks_emit(workspace_id=decided.workspace_id, event="review.decided", data={"item_id": 7})
    deliveries = WebhookDelivery.objects.filter(pk__in=ids)
    assert {d.endpoint_id for d in deliveries} == {decided.pk, everything.pk}
    [event_id] = {d.event_id for d in deliveries}
    payload = deliveries[0].payload
    assert payload == {"event": "review.decided", "event_id": str(event_id), "occurred_at": payload["occurred_at"],
                       "workspace": "acme", "data": {"item_id": 7}}
    assert all(d.status == DeliveryStatus.PENDING and d.attempts == 0 for d in deliveries)


def test_emit_without_endpoints_costs_one_query(workspace, django_assert_num_queries):
    with django_assert_num_queries(1):
        assert services.webhooks_emit(workspace_id=workspace.pk, event="gap.resolved", data={}) == []


def test_emit_refuses_an_event_not_in_the_catalogue(workspace):
    with pytest.raises(ValueError):
        services.webhooks_emit(workspace_id=workspace.pk, event="gap.exploded", data={})


def test_emit_redacts_personal_data_and_secrets(make_endpoint):
    endpoint = make_endpoint()
    [delivery_id] = services.webhooks_emit(workspace_id=endpoint.workspace_id, event="review.decided", data={
        "text": "Mail ada@example.com", "nested": [{"note": SECRETS["stripe_key"]}]})
    data = WebhookDelivery.objects.get(pk=delivery_id).payload["data"]
    assert data == {"text": "Mail [email]", "nested": [{"note": "[secret:stripe_key]"}]}


def test_deliveries_are_enqueued_only_when_the_write_commits(make_endpoint, django_capture_on_commit_callbacks,
                                                             monkeypatch):
    endpoint = make_endpoint()
    sent = []
    monkeypatch.setattr(services.deliver, "delay", sent.append)
    with django_capture_on_commit_callbacks(execute=True):
        with transaction.atomic():
            services.webhooks_emit(workspace_id=endpoint.workspace_id, event="gap.resolved", data={})
            transaction.set_rollback(True)
    assert sent == [] and not WebhookDelivery.objects.exists()
    with django_capture_on_commit_callbacks(execute=True):
        ids = services.webhooks_emit(workspace_id=endpoint.workspace_id, event="gap.resolved", data={})
    assert sent == ids


# --- attempts against a real receiver ------------------------------------------------------------

def _emit(endpoint) -> int:
    [delivery_id] = services.webhooks_emit(workspace_id=endpoint.workspace_id, event="gap.todo_created",
                                           data={"gap_id": 3})
    return delivery_id


def test_a_delivery_is_signed_and_recorded_as_delivered(make_endpoint):
    with Receiver([204]) as receiver:
        endpoint = make_endpoint(url=receiver.url)
        receiver.secret = endpoint.secret
        delivery_id = _emit(endpoint)
        assert _attempt(delivery_id).outcome == "delivered"
    [request] = receiver.requests
    delivery = WebhookDelivery.objects.get(pk=delivery_id)
    assert request["signature_valid"] and request["json"] == delivery.payload
    assert request["headers"]["X-Mnemo-Event"] == "gap.todo_created"
    assert request["headers"]["X-Mnemo-Delivery"] == str(delivery.event_id)
    # The signature is over the exact bytes sent, recomputed here from the stored secret.
    timestamp = int(request["headers"]["X-Mnemo-Timestamp"])
    assert abs(timestamp - timezone.now().timestamp()) < 60
    assert signing.verify(secret=endpoint.secret, timestamp=str(timestamp), body=request["body"],
                          signature_header=request["headers"]["X-Mnemo-Signature"])
    assert (delivery.status, delivery.attempts, delivery.last_status_code) == (DeliveryStatus.DELIVERED, 1, 204)
    assert delivery.delivered_at is not None
    assert _attempt(delivery_id) is None and len(receiver.requests) == 1  # idempotent


def test_a_5xx_is_retried_later(make_endpoint, settings):
    settings.MNEMO_WEBHOOK_BACKOFF_SECONDS = 100
    with Receiver([503]) as receiver:
        delivery_id = _emit(make_endpoint(url=receiver.url))
        verdict = _attempt(delivery_id)
    delivery = WebhookDelivery.objects.get(pk=delivery_id)
    assert verdict.outcome == "retry" and 50 <= verdict.delay <= 100
    assert (delivery.status, delivery.attempts, delivery.last_status_code) == (DeliveryStatus.PENDING, 1, 503)
    assert delivery.last_error == "HTTP 503 Service Unavailable"
    assert delivery.next_attempt_at > timezone.now() + timedelta(seconds=40)
    # Not due yet: a duplicate task does nothing.
    assert _attempt(delivery_id) is None and len(receiver.requests) == 1


def test_retry_after_is_honoured(make_endpoint, settings):
    settings.MNEMO_WEBHOOK_BACKOFF_SECONDS = 1
    with Receiver([429], retry_after="120") as receiver:
        verdict = _attempt(_emit(make_endpoint(url=receiver.url)))
    assert verdict.outcome == "retry" and verdict.delay == 120


def test_a_410_fails_at_once(make_endpoint):
    with Receiver([410]) as receiver:
        delivery_id = _emit(make_endpoint(url=receiver.url))
        assert _attempt(delivery_id).outcome == "failed"
    delivery = WebhookDelivery.objects.get(pk=delivery_id)
    assert (delivery.status, delivery.attempts, delivery.last_status_code) == (DeliveryStatus.FAILED, 1, 410)


def test_a_refused_connection_is_retried_until_the_attempts_run_out(make_endpoint, settings):
    settings.MNEMO_WEBHOOK_MAX_ATTEMPTS = 2
    settings.MNEMO_WEBHOOK_BACKOFF_SECONDS = 0
    with socket.socket() as unused:
        unused.bind(("127.0.0.1", 0))
        port = unused.getsockname()[1]
    delivery_id = _emit(make_endpoint(url=f"http://127.0.0.1:{port}/hook"))
    assert _attempt(delivery_id).outcome == "retry"
    assert _attempt(delivery_id).outcome == "failed"
    delivery = WebhookDelivery.objects.get(pk=delivery_id)
    assert (delivery.status, delivery.attempts, delivery.last_status_code) == (DeliveryStatus.FAILED, 2, None)
    assert "ConnectError" in delivery.last_error


def test_a_paused_endpoint_is_not_sent_to(make_endpoint):
    endpoint = make_endpoint()
    delivery_id = _emit(endpoint)
    services.webhook_update(endpoint=endpoint, actor=SYSTEM, active=False)
    assert _attempt(delivery_id) is None
    assert WebhookDelivery.objects.get(pk=delivery_id).status == DeliveryStatus.FAILED


# --- replay, ping, lost tasks ------------------------------------------------------------------

def test_replay_sends_the_same_payload_and_event_id_again(make_endpoint):
    with Receiver([200]) as receiver:
        endpoint = make_endpoint(url=receiver.url)
        original = WebhookDelivery.objects.get(pk=_emit(endpoint))
        _attempt(original.pk)
        replay = services.delivery_replay(delivery=original, actor=SYSTEM)
        assert replay.pk != original.pk and replay.status == DeliveryStatus.PENDING
        _attempt(replay.pk)
    first, second = receiver.requests
    assert first["body"] == second["body"]
    assert first["headers"]["X-Mnemo-Delivery"] == second["headers"]["X-Mnemo-Delivery"] == str(original.event_id)
    assert AuditEvent.objects.get(verb="webhook.replay").data["replay_of"] == original.pk


def test_a_pending_delivery_cannot_be_replayed(make_endpoint):
    delivery = WebhookDelivery.objects.get(pk=_emit(make_endpoint()))
    with pytest.raises(Conflict):
        services.delivery_replay(delivery=delivery, actor=SYSTEM)


def test_ping_goes_to_the_endpoint_whatever_it_subscribes_to(make_endpoint):
    endpoint = make_endpoint(events=["gap.resolved"])
    delivery = services.webhook_ping(endpoint=endpoint, actor=SYSTEM)
    assert delivery.event == "webhook.ping" and delivery.payload["data"] == {"webhook_id": endpoint.pk}


def test_lost_deliveries_are_found_once_a_minute_late(make_endpoint):
    endpoint = make_endpoint()
    late, recent = _emit(endpoint), _emit(endpoint)
    WebhookDelivery.objects.filter(pk=late).update(next_attempt_at=timezone.now() - timedelta(minutes=2))
    WebhookDelivery.objects.filter(pk=recent).update(next_attempt_at=timezone.now() - timedelta(seconds=20))
    assert deliveries_requeue_lost() == [late]
    assert deliveries_requeue_lost() == []  # made due now: the next sweep waits for its task


def test_the_sweep_is_on_the_beat_schedule_and_enqueues_the_lost(make_endpoint, monkeypatch):
    from mnemo.celery import app
    from webhooks import tasks

    assert app.conf.beat_schedule["webhooks-requeue-lost"]["task"] == tasks.requeue_lost.name
    late = _emit(make_endpoint())
    WebhookDelivery.objects.filter(pk=late).update(next_attempt_at=timezone.now() - timedelta(minutes=5))
    sent = []
    monkeypatch.setattr(tasks.deliver, "delay", sent.append)
    assert tasks.requeue_lost() == 1 and sent == [late]
