"""Background work through a real broker and a real Celery worker: the embedded default
(kombu's filesystem transport) and Redis, which production uses."""

from __future__ import annotations

import socket
import time

import pytest
from celery.contrib.testing.worker import start_worker
from django.utils import timezone

from core.logging import request_id_var

from core.models import WorkerHeartbeat
from core.tasks import heartbeat
from mnemo.celery import app

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.celery_worker]


def redis_reachable() -> bool:
    try:
        with socket.create_connection(("127.0.0.1", 6379), timeout=0.5):
            return True
    except OSError:
        return False


def reset_connection_pools():
    # The app and kombu's global pool groups cache connections and producers for the
    # broker first used; switching brokers between tests needs fresh ones.
    from kombu import pools

    pools.reset()
    app._after_fork()


@pytest.fixture(params=["filesystem", "redis"])
def broker(request, tmp_path):
    saved = (app.conf.broker_url, app.conf.broker_transport_options)
    reset_connection_pools()
    if request.param == "redis":
        if not redis_reachable():
            pytest.skip("no Redis on 127.0.0.1:6379 on this machine")
        app.conf.broker_url = "redis://127.0.0.1:6379/15"
        app.conf.broker_transport_options = {}
    else:
        folder = tmp_path / "worker-broker"
        (folder / "control").mkdir(parents=True)
        app.conf.broker_url = "filesystem://"
        app.conf.broker_transport_options = {
            "data_folder_in": str(folder), "data_folder_out": str(folder), "control_folder": str(folder / "control"),
        }
    yield request.param
    reset_connection_pools()
    app.conf.broker_url, app.conf.broker_transport_options = saved


def wait_for(predicate, timeout=30.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.2)
    return False


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
