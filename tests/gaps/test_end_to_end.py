"""Issue 18's "done when", end to end through the public API and a real Celery worker:
three people on Slack, email and the CLI ask in their own words for the same missing
capability and the agent declines → one gap at frequency 3, a TODO in the list, a signed
webhook delivered to a real receiver and an issue opened in a (local) GitHub; an idiom and
a fulfilled request create nothing."""

from __future__ import annotations

from datetime import timedelta

import pytest
from celery.contrib.testing.worker import start_worker

from core.services import SYSTEM
from gaps.models import CapabilityGap
from mnemo.celery import app
from tests.gaps.test_api import ASKED_THREE_WAYS, T0, log_exchange
from tests.helpers import wait_for
from tests.trackers.tracker_server import GITHUB_PROJECT, TOKEN, TrackerServer
from tests.webhooks.receiver import Receiver
from webhooks import services as webhook_services
from webhooks.models import DeliveryStatus, WebhookDelivery

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.celery_worker]


def test_three_askers_one_gap_a_todo_a_signed_webhook_and_an_issue(broker, api, workspace, settings):
    tracker = TrackerServer()
    settings.MNEMO_TRACKER_KIND, settings.MNEMO_TRACKER_URL = "github", tracker.url
    settings.MNEMO_TRACKER_PROJECT, settings.MNEMO_TRACKER_TOKEN = GITHUB_PROJECT, TOKEN
    try:
        with Receiver([200]) as receiver:
            endpoint = webhook_services.webhook_create(workspace=workspace, url=receiver.url,
                                                       events=["gap.todo_created"], actor=SYSTEM)
            receiver.secret = endpoint.secret
            with start_worker(app, pool="solo", perform_ping_check=False, shutdown_timeout=30):
                for n, (channel, person, request, answer) in enumerate(ASKED_THREE_WAYS):
                    log_exchange(api, channel, person, request, answer, thread=f"t{n}", at=T0 + timedelta(days=n))
                log_exchange(api, "slack", "ana", "Can you book the usual room for Friday?",
                             "Done — I've booked room 4B for Friday 10:00.", thread="ok", at=T0)
                log_exchange(api, "email", "ben@example.org", "Thanks for sorting the refund!",
                             "I can't wait to hear how the launch goes!", thread="idiom", at=T0)
                assert wait_for(lambda: api.get("/status").json()["pending"]["interactions"] == 0, timeout=120)
                assert wait_for(lambda: CapabilityGap.objects.filter(issue_number__isnull=False).exists(), timeout=60)
                assert wait_for(lambda: WebhookDelivery.objects.filter(status=DeliveryStatus.DELIVERED).exists(),
                                timeout=60)
        [gap] = CapabilityGap.objects.filter(workspace=workspace)
        assert gap.frequency == 3 and gap.status == "todo_created"
        assert [g["id"] for g in api.get("/gaps/todo").json()["items"]] == [gap.pk]
        [request] = receiver.requests
        assert request["signature_valid"] and request["headers"]["X-Mnemo-Event"] == "gap.todo_created"
        assert request["json"]["data"]["gap"] == gap.pk and request["json"]["data"]["frequency"] == 3
        [issue] = tracker.github.values()
        assert gap.todo_ref == f"https://github.com/{GITHUB_PROJECT}/issues/1" and "PDF" in issue.title
    finally:
        tracker.close()
