"""Deliveries through a real Celery worker and a real broker, to a real HTTP receiver:
retried after 5xx until delivered, failed at once on 410, replayed."""

from __future__ import annotations

import pytest
from celery.contrib.testing.worker import start_worker

from core.services import SYSTEM
from mnemo.celery import app
from tests.helpers import wait_for
from tests.webhooks.receiver import Receiver
from webhooks import services
from webhooks.models import DeliveryStatus, WebhookDelivery

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.celery_worker]


@pytest.fixture(autouse=True)
def _fast_backoff(settings):
    settings.MNEMO_WEBHOOK_BACKOFF_SECONDS = 0.2


def _settled(delivery_id: int) -> bool:
    return WebhookDelivery.objects.get(pk=delivery_id).status != DeliveryStatus.PENDING


def test_a_failing_receiver_is_retried_until_it_answers(broker, make_endpoint):
    with Receiver([500, 500, 200]) as receiver:
        endpoint = make_endpoint(url=receiver.url, events=["gap.todo_created"])
        receiver.secret = endpoint.secret
        [delivery_id] = services.webhooks_emit(workspace_id=endpoint.workspace_id, event="gap.todo_created",
                                               data={"gap_id": 1})
        with start_worker(app, pool="solo", perform_ping_check=False, shutdown_timeout=30):
            assert wait_for(lambda: _settled(delivery_id), timeout=60)
    delivery = WebhookDelivery.objects.get(pk=delivery_id)
    assert (delivery.status, delivery.attempts, delivery.last_status_code) == (DeliveryStatus.DELIVERED, 3, 200)
    assert len(receiver.requests) == 3 and all(r["signature_valid"] for r in receiver.requests)
    assert len({r["headers"]["X-Mnemo-Delivery"] for r in receiver.requests}) == 1


def test_a_gone_receiver_fails_at_once_and_a_replay_is_sent(broker, make_endpoint):
    with Receiver([410, 200]) as receiver:
        endpoint = make_endpoint(url=receiver.url)
        receiver.secret = endpoint.secret
        [delivery_id] = services.webhooks_emit(workspace_id=endpoint.workspace_id, event="gap.resolved", data={})
        with start_worker(app, pool="solo", perform_ping_check=False, shutdown_timeout=30):
            assert wait_for(lambda: _settled(delivery_id), timeout=60)
            delivery = WebhookDelivery.objects.get(pk=delivery_id)
            assert (delivery.status, delivery.attempts, delivery.last_status_code) == (DeliveryStatus.FAILED, 1, 410)
            replay = services.delivery_replay(delivery=delivery, actor=SYSTEM)
            assert wait_for(lambda: _settled(replay.pk), timeout=60)
    replay.refresh_from_db()
    assert (replay.status, replay.attempts) == (DeliveryStatus.DELIVERED, 1)
    assert [r["json"] for r in receiver.requests] == [delivery.payload, delivery.payload]
