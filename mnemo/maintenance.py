"""The maintenance page (issue 19 part 7): every job of the beat schedule (mnemo/celery.py)
with its reason and schedule, its last runs as core.jobs recorded them, the next run, and
"Run now" for the jobs that run for one workspace; a chart of the workspace's memories by
status and type over time, from the snapshot the decay job records. In the top package
because it reads the schedule of every app (the import contracts' layers)."""

from __future__ import annotations

import inspect
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

from celery.schedules import crontab, maybe_schedule
from celery.schedules import schedule as celery_schedule
from django.contrib import messages
from django.http import Http404
from django.shortcuts import redirect, render
from django.utils import timezone
from django.views.decorators.http import require_POST
from kombu.exceptions import KombuError

from core.decorators import workspace_view
from core.jobs import job_runs_latest
from core.models import JobRun, Role
from core.services import Actor, audit_record
from memory.charts import memory_growth_charts
from mnemo.celery import app
from mnemo.schedule import schedule_reasons

RUNS_SHOWN = 5
CHART_DAYS = 90
_CELERY_SOURCE = Path(__file__).with_name("celery.py")


@dataclass
class Job:
    entry: str
    task: str
    reason: str
    schedule: str
    records_runs: bool
    runs: list[JobRun] = field(default_factory=list)
    next_run: datetime | None = None


def _records_runs(task_name: str) -> bool:
    """A job that runs for one workspace and says who started it (core.jobs.job_run_per_workspace)
    records its runs, and can be run now for this workspace alone."""
    app.loader.import_default_modules()  # every app's tasks module, as a worker imports them (once)
    task = app.tasks.get(task_name)
    if task is None:
        return False
    parameters = inspect.signature(task.run).parameters
    return "workspace_id" in parameters and "trigger" in parameters


def _describe(schedule) -> str:
    if isinstance(schedule, crontab):
        return f"cron {schedule._orig_minute} {schedule._orig_hour} {schedule._orig_day_of_month} " \
               f"{schedule._orig_month_of_year} {schedule._orig_day_of_week} (UTC)"
    if isinstance(schedule, celery_schedule):
        seconds = schedule.run_every.total_seconds()
        return f"every {seconds / 60:g} min" if seconds >= 60 else f"every {seconds:g} s"
    return str(schedule)  # a solar or custom schedule describes itself


def _next_run(schedule, runs: list[JobRun], now: datetime) -> datetime | None:
    """Cron jobs: the next time the clock matches. Interval jobs: an interval after the last
    scheduled run, when one was recorded (beat keeps its own clock otherwise)."""
    if isinstance(schedule, crontab):
        return now + schedule.remaining_estimate(now)
    if not isinstance(schedule, celery_schedule):
        return None
    last = next((r for r in runs if r.trigger == "schedule"), None)
    return last.started_at + schedule.run_every if last else None


def scheduled_jobs(*, workspace_id: int) -> list[Job]:
    reasons = schedule_reasons(_CELERY_SOURCE.read_text())
    now = timezone.now()
    jobs = []
    for entry, spec in app.conf.beat_schedule.items():
        schedule = maybe_schedule(spec["schedule"])
        jobs.append(Job(entry=entry, task=spec["task"], reason=reasons.get(entry, ""), schedule=_describe(schedule),
                        records_runs=_records_runs(spec["task"])))
    runs = job_runs_latest(names=[j.task for j in jobs if j.records_runs], per_job=RUNS_SHOWN,
                           workspace_id=workspace_id)
    for job in jobs:
        job.runs = runs.get(job.task, [])
        job.next_run = _next_run(maybe_schedule(app.conf.beat_schedule[job.entry]["schedule"]), job.runs, now)
    return jobs


@workspace_view(Role.ADMIN)
def maintenance(request):
    context = {"jobs": scheduled_jobs(workspace_id=request.workspace.pk),
               "charts": memory_growth_charts(workspace_id=request.workspace.pk, days=CHART_DAYS)}
    return render(request, "mnemo/maintenance.html#jobs" if request.htmx else "mnemo/maintenance.html", context)


@require_POST
@workspace_view(Role.ADMIN)
def maintenance_run(request, entry: str):
    """Enqueue the job for this workspace alone, marked as started by hand; audited."""
    spec = app.conf.beat_schedule.get(entry)
    if spec is None or not _records_runs(spec["task"]):
        raise Http404("No such job to run for one workspace.")
    try:
        app.tasks[spec["task"]].apply_async(kwargs={"workspace_id": request.workspace.pk, "trigger": "manual"})
    except (KombuError, OSError):
        messages.error(request, "The job could not be queued: the broker is not reachable. Try again shortly.")
    else:
        audit_record(workspace=request.workspace, actor=Actor.for_user(request.user), verb="job.run_now",
                     data={"job": entry, "task": spec["task"]})
        messages.success(request, f"{entry} queued; its run appears below once a worker takes it.")
    return redirect("maintenance", slug=request.workspace.slug)
