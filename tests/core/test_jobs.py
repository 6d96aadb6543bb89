"""core.jobs.job_run: every run of a maintenance job leaves a row — ok with its counts,
failed with the error (secrets masked) — even when the job's own work rolls back."""

from __future__ import annotations

import pytest
from django.db import transaction

from core.jobs import job_run, job_runs_latest
from core.models import JobRun, Workspace

pytestmark = pytest.mark.django_db(transaction=True)


def test_a_run_records_its_counts_and_its_end():
    with job_run("memory.decay") as counts:
        assert JobRun.objects.get().status == "running"
        counts["archived"] = 3
    run = JobRun.objects.get()
    assert run.status == "ok" and run.counts == {"archived": 3} and run.seconds is not None and run.seconds >= 0


def test_a_failed_run_keeps_the_error_without_secrets_and_outlives_the_rolled_back_work():
    with pytest.raises(RuntimeError), job_run("memory.dedup_scan", trigger="manual") as counts:
        with transaction.atomic():
            Workspace.objects.create(name="Doomed", slug="doomed")
            counts["seen"] = 1
            raise RuntimeError("tracker said no to ghp_aB3dE5gH7jK9mN1pQ3sT5vW7yZ9bC1dF3hJ5")
    run = JobRun.objects.get()
    assert run.status == "failed" and run.trigger == "manual" and run.counts == {"seen": 1}
    assert "RuntimeError: tracker said no to [secret:" in run.error and "ghp_" not in run.error
    assert not Workspace.objects.filter(slug="doomed").exists()


def test_a_run_inside_a_transaction_is_refused_and_the_latest_runs_are_listed_per_job():
    with pytest.raises(RuntimeError), transaction.atomic(), job_run("memory.decay"):
        pass
    assert not JobRun.objects.exists()
    for _ in range(3):
        with job_run("memory.decay"):
            pass
    latest = job_runs_latest(names=["memory.decay", "never.ran"], per_job=2)
    assert len(latest["memory.decay"]) == 2 and latest["never.ran"] == []
    assert latest["memory.decay"][0].started_at >= latest["memory.decay"][1].started_at
