"""Logging through the API with a real Celery worker behind a real broker: embeddings are
computed after commit, never in the request, and /status reaches idle when they are done."""

from __future__ import annotations

import pytest
from celery.contrib.testing.worker import start_worker

from conversations.models import InteractionIndex
from mnemo.celery import app
from tests.helpers import wait_for

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.celery_worker]


def test_logged_interactions_are_embedded_by_the_worker(api, broker):
    items = [{"channel": "chat", "channel_id": "Ada", "thread": "t", "content": f"note number {i} about gardening"}
             for i in range(70)]
    body = api.post("/interactions/batch", {"items": items}).json()
    assert body["created"] == 70
    # Nothing was embedded inside the request: the work waits for a worker.
    assert InteractionIndex.objects.count() == 0
    assert api.get("/status").json()["pending"]["interactions"] == 70
    with start_worker(app, pool="solo", perform_ping_check=False, shutdown_timeout=30):
        assert wait_for(lambda: api.get("/status").json()["pending"]["interactions"] == 0, timeout=120)
    assert InteractionIndex.objects.count() == 70
    assert api.get("/status").json()["idle"] is True
    first = api.get(f"/interactions/{body['results'][0]['id']}").json()
    assert first["processed_at"] >= first["created_at"]
