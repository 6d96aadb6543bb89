"""The client's administration methods against a live server: a rebuild from the log
started and followed (rebuild, get_rebuild), an export started and followed, an import's
state and resume; for an admin key only (PermissionDenied otherwise), another workspace's
jobs NotFound, bad layers InvalidRequest, a second rebuild while one waits a Conflict."""

from __future__ import annotations

import uuid

import pytest

from conversations.models import RebuildJob
from mnemo_client import Conflict, InvalidRequest, Mnemo, NotFound, PermissionDenied
from mnemo_client import models as m
from tests.client.conftest import NO_RETRY, process

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def admin(server, workspace, make_key):
    with Mnemo(server, make_key(workspace, scopes="admin", name="admin")[1], retry=NO_RETRY) as client:
        yield client


def test_a_rebuild_is_started_and_followed_to_its_end(admin, mnemo, eager_tasks):
    mnemo.log("I work at Acme Corp.", channel="chat", channel_id="caroline")
    process()
    started = admin.rebuild(["concepts", "entities"])
    assert isinstance(started, m.RebuildOut) and started.layers == ["entities", "concepts"]
    done = admin.get_rebuild(str(started.id))  # the eager task ran it already
    assert (done.status, done.phase, done.done, done.total) == ("ok", "done", 1, 1)
    assert "profile values" in done.report["forgotten"] and done.finished_at is not None
    assert admin.rebuild().layers == ["interactions", "entities", "memories", "concepts", "gaps"]


def test_rebuild_refusals(admin, mnemo, outsider, workspace):
    waiting = admin.rebuild(["concepts"])  # no worker: it stays queued
    with pytest.raises(Conflict) as caught:
        admin.rebuild()
    assert caught.value.details["rebuild_id"] == str(waiting.id)
    with pytest.raises(PermissionDenied):
        mnemo.rebuild()
    with pytest.raises(PermissionDenied):
        mnemo.get_rebuild(str(waiting.id))
    with pytest.raises(NotFound):
        outsider.get_rebuild(str(waiting.id))
    with pytest.raises(InvalidRequest):
        admin.get_rebuild("not-a-uuid")
    RebuildJob.objects.filter(pk=waiting.id).update(status="ok")
    for layers in (["Memories!"], ["webhooks"], []):
        with pytest.raises(InvalidRequest):
            admin.rebuild(layers)
    assert RebuildJob.objects.filter(workspace=workspace).count() == 1


def test_an_export_and_an_imports_state(admin, outsider, eager_tasks):
    started = admin.export_workspace()
    assert isinstance(started, m.ExportStartedOut) and started.download_url.startswith("/api/v1/export/")
    finished = admin.get_export(str(started.id))
    assert finished.status == "ok" and finished.kind == "export" and finished.size > 0
    with pytest.raises(NotFound):
        outsider.get_export(str(started.id))
    with pytest.raises(NotFound):  # an export is no import
        admin.get_import(str(started.id))
    with pytest.raises(NotFound):
        admin.resume_import(str(uuid.uuid4()))
    with pytest.raises(InvalidRequest):
        admin.resume_import("not-a-uuid")
