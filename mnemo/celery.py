"""The Celery app. Broker: CELERY_BROKER_URL, or kombu's filesystem transport under var/
when it is unset (see settings)."""

from __future__ import annotations

import os
from pathlib import Path

from celery import Celery

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "mnemo.settings")

app = Celery("mnemo")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.conf.update(
    task_acks_late=True,
    task_reject_on_worker_lost=True,
    worker_prefetch_multiplier=1,
    task_ignore_result=True,
    broker_connection_retry_on_startup=True,
    timezone="UTC",
)

# Every periodic job is declared here, with the reason for its schedule.
app.conf.beat_schedule = {
    # Lets /api/v1/status tell "nothing pending" apart from "no worker is running":
    # 30 s is frequent enough to notice a dead worker within a minute and costs one upsert.
    "worker-heartbeat": {"task": "core.heartbeat", "schedule": 30.0},
}

app.autodiscover_tasks()


def ensure_broker_dirs() -> None:
    """The filesystem transport needs its folder to exist before anyone publishes."""
    from django.conf import settings

    if settings.CELERY_BROKER_URL.startswith("filesystem://"):
        options = settings.CELERY_BROKER_TRANSPORT_OPTIONS
        for key in ("data_folder_in", "data_folder_out", "control_folder"):
            Path(options[key]).mkdir(parents=True, exist_ok=True)
