"""An import the API started, whose worker is killed mid-way (kill -9 of a real process
running the task's body), is resumed without the command: beat finds it `running` with
nobody running it (its run's lock is free) and carries it on from its last committed
batch to a workspace equal to the source; a live run is never started twice. An admin can
resume one too (POST /import/{id}/resume): scopes, outsiders 404, bad ids 422, and 409
for one that is running, finished or has nothing to resume. Abandoning it with the command
fails the job, so nothing resumes it."""

from __future__ import annotations

import io
import os
import signal
import subprocess
import sys

import pytest
from django.core.management import call_command
from django.db import transaction
from django.test import Client

from conversations.models import Interaction
from core.archive.jobs import archive_jobs_resume_stale, import_lock_free
from core.archive.writing import workspace_export
from core.models import ArchiveJob, ImportProgress
from core.services import workspace_create
from core.tasks import archive_resume_stale
from mnemo.celery import app
from tests.core.test_archive import LINES, ROOT, _import_lock_held, _waiting_on_a_lock, normalised, seed
from tests.helpers import assert_error, database_url, wait_for

pytestmark = pytest.mark.django_db(transaction=True)  # batches commit; a process of its own reads them


def _worker(job_id: str, tmp_path) -> subprocess.Popen:
    """The import task's body (core.tasks.archive_import) in a process of its own, one line
    a transaction, as a Celery worker runs it."""
    env = {**os.environ, "DATABASE_URL": database_url(), "DJANGO_SETTINGS_MODULE": "mnemo.settings",
           "MNEMO_VAR_DIR": str(tmp_path / "var"), "MNEMO_ARCHIVE_IMPORT_BATCH": "1"}
    code = f"from core.archive.jobs import archive_job_run; archive_job_run(job_id={job_id!r})"
    return subprocess.Popen([sys.executable, "manage.py", "shell", "-c", code], cwd=ROOT, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def _upload(client: Client, path) -> str:
    with open(path, "rb") as upload:
        answer = client.post("/api/v1/import", {"archive": upload})
    assert answer.status_code == 202, answer.content
    return answer.json()["id"]


def _killed_mid_way(job_id: str, copy, tmp_path, during) -> None:
    """Run the job in a worker process and kill -9 it inside a batch; `during()` runs while
    it is alive, blocked on the progress row this test locks."""
    worker = _worker(job_id, tmp_path)
    try:
        loaded = wait_for(lambda: "interactions" in (ImportProgress.objects.filter(workspace=copy)
                                                     .values_list("tables_done", flat=True).first() or []),
                          timeout=300, interval=0.05)
        assert loaded, worker.stderr.read() if worker.poll() is not None else "no progress"
        with transaction.atomic():
            ImportProgress.objects.select_for_update().get(workspace=copy)
            assert wait_for(_waiting_on_a_lock, timeout=60, interval=0.05)
            during()
            worker.send_signal(signal.SIGKILL)
            worker.wait(timeout=30)
    finally:
        if worker.poll() is None:
            worker.kill()
    assert wait_for(lambda: not _import_lock_held(copy.pk) and import_lock_free(job_id), timeout=60)


def _interrupted(workspace, make_key, tmp_path, settings, during=lambda admin, job_id: None):
    """The workspace exported, uploaded into a new one through the API by an admin key, and
    its import killed mid-way in a worker process. Returns (admin client, copy, job id, archive)."""
    settings.MNEMO_ARCHIVE_DIR = str(tmp_path / "archives")
    seed(workspace)
    source = tmp_path / "a.zip"
    workspace_export(workspace=workspace, path=source)
    copy = workspace_create(name="Copy", slug="copy")
    admin = Client(HTTP_AUTHORIZATION=f"Bearer {make_key(copy, scopes='admin', name='importer')[1]}")
    # The upload's task is the worker process, not this one; what is enqueued later runs here.
    app.conf.task_always_eager = settings.CELERY_TASK_ALWAYS_EAGER = False
    job_id = _upload(admin, source)
    app.conf.task_always_eager = settings.CELERY_TASK_ALWAYS_EAGER = True
    _killed_mid_way(job_id, copy, tmp_path, lambda: during(admin, job_id))
    return admin, copy, job_id, source


def _while_alive(admin, job_id):
    # A live run is never started a second time, by beat or by a person.
    assert archive_jobs_resume_stale() == []
    assert_error(admin.post(f"/api/v1/import/{job_id}/resume"), 409, "not_resumable")


def test_an_api_import_killed_with_its_worker_is_resumed_by_beat(workspace, make_key, tmp_path, settings,
                                                                  eager_tasks):
    admin, copy, job_id, source = _interrupted(workspace, make_key, tmp_path, settings, during=_while_alive)
    assert admin.get(f"/api/v1/import/{job_id}").json()["status"] == "running"
    assert 0 < Interaction.objects.filter(workspace=copy).count()
    assert ImportProgress.objects.filter(workspace=copy).exists()

    assert archive_resume_stale() == [job_id]  # the beat task; its resume task runs here (eager)

    state = admin.get(f"/api/v1/import/{job_id}").json()
    assert state["status"] == "ok" and state["report"]["resumed"] is True, state
    assert not ImportProgress.objects.exists()
    assert archive_resume_stale() == []
    copied = tmp_path / "b.zip"
    workspace_export(workspace=copy, path=copied)
    resumed = normalised(copied)
    # what the API did in the copy before its audit table loaded is not the import's
    resumed["audit"] = [r for r in resumed["audit"] if r["verb"] not in ("api_key.create", "workspace.import_requested")]
    assert normalised(source) == resumed
    assert_error(admin.post(f"/api/v1/import/{job_id}/resume"), 409, "not_resumable")  # finished


def test_an_admin_resumes_an_import_and_others_cannot(workspace, make_key, tmp_path, settings, eager_tasks,
                                                      outsider_api):
    admin, copy, job_id, _ = _interrupted(workspace, make_key, tmp_path, settings)
    member = Client(HTTP_AUTHORIZATION=f"Bearer {make_key(copy, scopes='read,write', name='writer')[1]}")
    # A worker error that kept the progress: failed, and beat leaves it to a person.
    ArchiveJob.objects.filter(pk=job_id).update(status="failed", report={"error": "OperationalError: the job failed"})
    assert archive_jobs_resume_stale() == []

    assert_error(member.post(f"/api/v1/import/{job_id}/resume"), 403)  # admin business
    assert_error(outsider_api.post(f"/import/{job_id}/resume"), 404)
    assert_error(admin.post("/api/v1/import/not-a-uuid/resume"), 422)
    assert_error(admin.post("/api/v1/import/00000000-0000-0000-0000-000000000000/resume"), 404)
    assert ArchiveJob.objects.get(pk=job_id).status == "failed"

    answer = admin.post(f"/api/v1/import/{job_id}/resume")
    assert answer.status_code == 202, answer.content
    state = admin.get(f"/api/v1/import/{job_id}").json()
    assert state["status"] == "ok" and state["report"]["resumed"] is True, state
    assert Interaction.objects.filter(workspace=copy).count() == len(LINES)
    assert member.get("/api/v1/status").status_code == 200  # usable again


def test_abandoning_with_the_command_fails_the_job_so_nothing_resumes_it(workspace, make_key, tmp_path, settings,
                                                                        eager_tasks):
    admin, copy, job_id, _ = _interrupted(workspace, make_key, tmp_path, settings)

    call_command("import_workspace", "--into", "copy", "--abandon", stderr=io.StringIO())

    job = ArchiveJob.objects.get(pk=job_id)
    assert job.status == "failed" and "abandoned" in job.report["error"]
    assert archive_resume_stale() == [] and not Interaction.objects.filter(workspace=copy).exists()
    assert_error(admin.post(f"/api/v1/import/{job_id}/resume"), 409, "not_resumable")
