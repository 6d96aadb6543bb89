"""The Celery app. Broker: CELERY_BROKER_URL, or kombu's filesystem transport under var/
when it is unset (see settings)."""

from __future__ import annotations

import os
from pathlib import Path

from celery import Celery
from celery.schedules import crontab
from celery.signals import before_task_publish, task_prerun

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "mnemo.settings")

from mnemo import broker  # noqa: E402

broker.install()  # the filesystem transport, writing messages atomically

app = Celery("mnemo")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.conf.update(
    task_acks_late=True,
    task_reject_on_worker_lost=True,
    worker_prefetch_multiplier=1,
    task_ignore_result=True,
    broker_connection_retry_on_startup=True,
    timezone="UTC",
    # Keep Django's LOGGING (JSON lines with the request id) in worker and beat too.
    worker_hijack_root_logger=False,
)

# Every periodic job is declared here, with the reason for its schedule.
app.conf.beat_schedule = {
    # Lets /api/v1/status tell "nothing pending" apart from "no worker is running":
    # 30 s is frequent enough to notice a dead worker within a minute and costs one upsert.
    "worker-heartbeat": {"task": "core.heartbeat", "schedule": 30.0},
    # Idle detection is by each conversation's own rhythm with a floor of minutes, so
    # looking once a minute notices a pause soon enough without busy polling.
    "conversations-sweep": {"task": "conversations.sweep", "schedule": 60.0},
    # Every new interaction has its own task; this catches the ones whose task was lost
    # (a killed worker, a broker restart) within about a minute and a half.
    "conversations-drain-backlog": {"task": "conversations.drain_backlog", "schedule": 60.0},
    # A rebuild keeps its workspace's new messages waiting until it is done: one whose runner
    # died (a killed worker) must not hold them for long, nor be restarted while it still
    # runs (a batch takes seconds; 10 minutes without one means nobody is running it).
    "conversations-rebuild-resume-stale": {"task": "conversations.rebuild_resume_stale", "schedule": 5 * 60.0},
    # An API import whose worker was killed stays `running`, its workspace hidden: resumed
    # within minutes (a stale job is one whose run's lock is free, so a live one is never
    # started twice); 5 minutes like the rebuild's, as an import is minutes long too.
    "core-archive-resume-stale": {"task": "core.archive_resume_stale", "schedule": 5 * 60.0},
    # An import whose vectors came from another model enqueues the embedding of its log; this
    # catches the ones whose task was lost (a killed worker). Finding them reads the whole log
    # against its index and backlog (one anti-join), so not every minute: every 10 minutes,
    # at most 20 batches (~1,300 interactions) a run, so a lost import's log is embedded over
    # the next runs without one run holding the worker for long.
    "conversations-index-missing": {"task": "conversations.index_missing", "schedule": 10 * 60.0,
                                    "kwargs": {"max_batches": 20}},
    # An install upgraded past the kinds of things messages name (issue 22) has a processed
    # log without them, which only `manage.py index_kinds` derived: this does it in the
    # background. The same anti-join as above over the index, so every 10 minutes, at most
    # 20 batches of 500 a run (10,000 interactions, ~13 s at 1 M interactions); once every
    # row has its kinds a run reads the anti-join (~1–1.7 s at 1 M) and stops.
    "conversations-kinds-missing": {"task": "conversations.kinds_missing", "schedule": 10 * 60.0,
                                    "kwargs": {"max_batches": 20}},
    # New handles arrive all day, but a person reviews suggestions at human pace: every
    # 15 minutes keeps the list fresh; the scan blocks on names so it stays cheap.
    "conversations-suggest-identity-links": {"task": "conversations.suggest_identity_links", "schedule": 15 * 60.0},
    # Each new memory has an embedding task; this catches lost ones, like the drain above.
    "memory-embed-pending": {"task": "memory.embed_pending", "schedule": 60.0},
    # Entities and relationships made or renamed outside the worker's processing (API,
    # dashboard, merges): searchable by meaning within about a minute.
    "entities-embed-pending": {"task": "entities.embed_pending", "schedule": 60.0},
    # Gaps reported by agents are matched by their words at once; by meaning once embedded.
    # A minute keeps "the same need in other words" folded soon without polling for nothing.
    "gaps-embed-pending": {"task": "gaps.embed_gaps", "schedule": 60.0},
    # Failed outcomes are reported by agents at human pace; a TODO after three of them need
    # not appear within seconds, and five minutes keeps the audit-log read rare.
    "gaps-scan-failures": {"task": "gaps.scan_failures", "schedule": 300.0},
    # Episode tails wait until a conversation has been quiet for minutes (settings), so
    # looking every two minutes writes them soon after without polling for nothing.
    "memory-flush-episodes": {"task": "memory.flush_episodes", "schedule": 120.0},
    # Each webhook delivery has its own task (and its retries their own); this sends the
    # ones whose task was lost, once they are a minute late: a receiver hears of an event
    # within about two minutes even then, and the sweep is one indexed query.
    "webhooks-requeue-lost": {"task": "webhooks.requeue_lost", "schedule": 60.0},
    # Half-lives are counted in days (seed 004), so once a day is fine-grained enough; every
    # run steps strength to midnight UTC, so a late or repeated run changes nothing more, and
    # 03:15 UTC is the quietest hour for most teams (it writes every memory of a workspace).
    "memory-decay": {"task": "memory.decay", "schedule": crontab(hour=3, minute=15)},
    # Concept links decay like memories (90-day half-life), half an hour later so the two
    # long writes do not share the night's minutes.
    "context-decay-concept-links": {"task": "context.decay_concept_links", "schedule": crontab(hour=3, minute=45)},
    # Consolidation (issue 19 part 1): a pattern needs several occurrences, which accrue over
    # hours and days, and a closing conversation already triggers its own run; hourly keeps
    # each bounded run (≤ 2,000 seeds a workspace) small and a whole workspace covered in a day or two.
    "memory-consolidate": {"task": "memory.consolidate", "schedule": 3600.0},
    # A near duplicate waits for a person anyway: every 15 minutes, 2,000 memories a run
    # (seconds of index lookups), a workspace of 100k memories is covered about twice a day.
    "memory-dedup-scan": {"task": "memory.dedup_scan", "schedule": 15 * 60.0},
    # Failed decisions and episodes are reported at human pace, like gaps-scan-failures:
    # a censor to review within five minutes is soon enough, and the audit-log read stays rare.
    "memory-learn-from-failures": {"task": "memory.learn_from_failures", "schedule": 300.0},
}

app.autodiscover_tasks()


# A task carries the id of the request that enqueued it, so one id follows the work from
# the API into the worker's log lines.
@before_task_publish.connect
def _attach_request_id(headers=None, **_kwargs) -> None:
    from core.logging import request_id_var

    if headers is not None and request_id_var.get() != "-":
        headers.setdefault("request_id", request_id_var.get())


@task_prerun.connect
def _adopt_request_id(task=None, **_kwargs) -> None:
    from core.logging import request_id_var

    if task is not None:
        request_id_var.set(getattr(task.request, "request_id", None) or f"task:{task.request.id}")


def ensure_celery_dirs() -> None:
    """Beat's schedule file needs its folder, and the filesystem transport needs its
    folders to exist before anyone publishes."""
    from django.conf import settings

    Path(settings.CELERY_BEAT_SCHEDULE_FILE).parent.mkdir(parents=True, exist_ok=True)
    if settings.CELERY_BROKER_URL.startswith("filesystem://"):
        options = settings.CELERY_BROKER_TRANSPORT_OPTIONS
        for key in ("data_folder_in", "data_folder_out", "control_folder"):
            Path(options[key]).mkdir(parents=True, exist_ok=True)
