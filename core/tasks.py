from __future__ import annotations

import socket

from celery import shared_task

from core.services import worker_heartbeat_record


@shared_task(name="core.heartbeat", ignore_result=True)
def heartbeat() -> None:
    """Beat sends this every 30 s; whichever worker runs it records that it is alive."""
    worker_heartbeat_record(hostname=socket.gethostname())
