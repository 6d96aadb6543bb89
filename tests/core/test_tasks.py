"""Background work through a real broker and a real Celery worker: the embedded default
(kombu's filesystem transport) and Redis, which production uses."""

from __future__ import annotations

import socket

import pytest
from celery.contrib.testing.worker import start_worker
from django.utils import timezone

from core.logging import request_id_var
from core.models import WorkerHeartbeat
from core.tasks import heartbeat
from mnemo.celery import app
from tests.helpers import wait_for

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.celery_worker]


def test_a_worker_runs_the_heartbeat_through_the_broker(broker):
    with start_worker(app, pool="solo", perform_ping_check=False, shutdown_timeout=10):
        heartbeat.delay()
        assert wait_for(lambda: WorkerHeartbeat.objects.filter(name="worker").exists()), f"no heartbeat via {broker}"
    beat = WorkerHeartbeat.objects.get(name="worker")
    assert beat.hostname == socket.gethostname()


@app.task(name="tests.record_request_id")
def record_request_id() -> None:
    from core.logging import request_id_var

    WorkerHeartbeat.objects.create(name="probe", seen_at=timezone.now(), hostname=request_id_var.get())


def test_a_task_logs_under_the_request_id_that_enqueued_it(broker):
    token = request_id_var.set("req-from-api")
    try:
        record_request_id.delay()
    finally:
        request_id_var.reset(token)
    with start_worker(app, pool="solo", perform_ping_check=False, shutdown_timeout=10):
        assert wait_for(lambda: WorkerHeartbeat.objects.filter(name="probe").exists())
    assert WorkerHeartbeat.objects.get(name="probe").hostname == "req-from-api"


def test_the_heartbeat_is_on_the_beat_schedule():
    entry = app.conf.beat_schedule["worker-heartbeat"]
    assert entry["task"] == heartbeat.name and entry["schedule"] <= 60
