"""The maintenance page (issue 19 part 7): every job of the beat schedule with its reason
(the comment above it in mnemo/celery.py), schedule, last runs of this workspace and next
run; "Run now" for jobs that run per workspace (admin, POST with CSRF, audited, the task
enqueued with trigger "manual"); a chart of memories by status and type; admins only,
outsiders 404."""

from __future__ import annotations

import hashlib
from datetime import timedelta

import pytest
from django.test import Client
from django.utils import timezone

from core.jobs import job_run
from core.models import AuditEvent, JobRun
from memory.models import Memory
from mnemo.celery import app
from core.charts import counts_chart
from mnemo.schedule import schedule_reasons

URL = "/w/acme/maintenance/"


def make_memory(workspace, text, days_old=2000):
    # A fact unused for ~5.5 of its 365-day half-lives: decay archives it (an episode no
    # pattern keeps would only weaken: memory.decay.KEPT_UNTIL_CONSOLIDATED).
    return Memory.objects.create(workspace=workspace, type="fact", certainty="extracted", status="active",
                                 text=text, text_hash=hashlib.sha256(text.encode()).hexdigest(), source="test",
                                 created_at=timezone.now() - timedelta(days=days_old))


def test_every_scheduled_job_has_a_reason_written_above_it():
    reasons = schedule_reasons(open("mnemo/celery.py").read())
    assert set(reasons) == set(app.conf.beat_schedule)
    assert all(len(reason) > 20 for reason in reasons.values()), reasons


def test_the_reasons_parser_reads_entries_at_the_dicts_own_indentation():
    source = '''app.conf.beat_schedule = {
    # Often, because.
    "a": {"task": "x.a",
          "schedule": 1.0},

    # Orphan comment, then a blank line.

    "b": {"task": "x.b", "schedule": 2.0},
}
"c": 1
'''
    assert schedule_reasons(source) == {"a": "Often, because.", "b": ""}


@pytest.mark.django_db(transaction=True)
def test_admins_see_every_job_its_runs_and_the_chart(client, owner, workspace, other_workspace):
    make_memory(workspace, "Ana and Bo talked about the race.")
    with job_run("memory.decay", workspace_id=workspace.pk) as counts:
        counts.update({"decayed": 7, "archived": 2, "memories": {"active": {"fact": 3}, "archived": {"episodic": 2}}})
    with job_run("memory.decay", workspace_id=other_workspace.pk) as counts:
        counts.update({"decayed": 999, "archived": 555})
    client.force_login(owner)
    response = client.get(URL)
    assert response.status_code == 200
    page = response.content.decode()
    for entry in app.conf.beat_schedule:
        assert f'id="job-{entry}"' in page
    assert "Half-lives are counted in days" in page  # the decay job's reason
    assert "cron 15 3 * * * (UTC)" in page and "every 30 s" in page
    assert "decayed 7" in page and "archived 2" in page
    # another workspace's run is not shown (its counts as they would read: a bare "555" can be a
    # timestamp's microseconds, which failed this test once in CI)
    assert "decayed 999" not in page and "archived 555" not in page
    assert "Does not record runs." in page  # the heartbeat, the sweeps…
    assert page.count("Run now") == 3  # memory-decay, context-decay-concept-links, memory-consolidate
    assert '<svg class="chart"' in page and "Memories by status" in page and "Active memories by type" in page


@pytest.mark.django_db
def test_the_htmx_refresh_returns_only_the_jobs(client, owner):
    client.force_login(owner)
    response = client.get(URL, headers={"HX-Request": "true"})
    page = response.content.decode()
    assert response.status_code == 200 and page.lstrip().startswith('<section id="jobs"') and "<html" not in page


@pytest.mark.django_db
def test_only_admins_see_it_and_outsiders_get_404(client, teammate, viewer, outsider):
    for user, status in ((viewer, 403), (teammate, 403), (outsider, 404)):
        client.force_login(user)
        assert client.get(URL).status_code == status
        assert client.post(f"{URL}memory-decay/run/").status_code == status
    assert not AuditEvent.objects.filter(verb="job.run_now").exists()
    client.logout()
    assert client.get(URL).status_code == 302  # to the login page


@pytest.mark.django_db(transaction=True)
def test_run_now_runs_the_job_for_this_workspace_alone_marked_manual_and_audited(eager_tasks, owner, workspace,
                                                                                 other_workspace):
    make_memory(workspace, "Ana and Bo talked about the race.")
    theirs = make_memory(other_workspace, "Globex shipped on a Friday.")
    client = Client(enforce_csrf_checks=True)
    client.force_login(owner)
    assert client.post(f"{URL}memory-decay/run/").status_code == 403  # no CSRF token
    assert not JobRun.objects.exists()
    client.get(URL)
    response = client.post(f"{URL}memory-decay/run/", {"csrfmiddlewaretoken": client.cookies["csrftoken"].value})
    assert response.status_code == 302 and response["Location"] == URL
    run = JobRun.objects.get()
    assert (run.name, run.workspace_id, run.trigger, run.status) == ("memory.decay", workspace.pk, "manual", "ok")
    assert run.counts["archived"] == 1
    theirs.refresh_from_db()
    assert theirs.status == "active" and theirs.strength_at is None
    event = AuditEvent.objects.get(verb="job.run_now")
    assert event.workspace == workspace and event.actor_user == owner and event.data["job"] == "memory-decay"
    page = client.get(URL).content.decode()
    assert "manual" in page and "archived 1" in page


@pytest.mark.django_db
@pytest.mark.parametrize("entry", ["worker-heartbeat", "no-such-job", "..", "memory-decay%00"])
def test_jobs_that_do_not_run_per_workspace_or_do_not_exist_are_4xx(client, owner, entry):
    client.force_login(owner)
    assert client.post(f"{URL}{entry}/run/").status_code in (400, 404)  # a NUL byte is refused before the view
    assert client.get(f"{URL}memory-decay/run/").status_code == 405
    assert not AuditEvent.objects.filter(verb="job.run_now").exists()


@pytest.mark.django_db
def test_an_unreachable_broker_is_a_message_not_a_500(client, owner, broker_down):
    client.force_login(owner)
    response = client.post(f"{URL}memory-decay/run/", follow=True)
    assert response.status_code == 200 and "could not be queued" in response.content.decode()
    assert not AuditEvent.objects.filter(verb="job.run_now").exists()


def test_the_chart_draws_one_line_per_series_and_escapes_names():
    svg = counts_chart(["2026-06-01", "2026-06-02"], {"active": [3, 5], "<b>": [0, 1]}, label="Memories")
    assert svg.count("<polyline") == 2 and "&lt;b&gt;" in svg and "<b>" not in svg
    assert counts_chart([], {}, label="x") == ""
    assert counts_chart(["2026-06-01"], {"active": [0]}, label="x").count("<circle") == 1
