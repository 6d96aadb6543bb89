"""Workspace archives against the real database: a round trip gives an equal workspace
(export A, import as B, export B: the same rows once ids are replaced by positions), the
importer only inserts into the insert-only log, secrets and damaged archives are refused
with nothing imported, and the commands."""

from __future__ import annotations

import io
import json
import os
import signal
import subprocess
import sys
import zipfile
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from django.db import connection, transaction
from django.test import Client

from conversations.models import Conversation, Interaction, InteractionBacklog, InteractionIndex, InteractionKinds
from conversations.services import (
    InteractionItem,
    conversation_summarise,
    interactions_backlog_drain,
    interactions_index,
    interactions_log,
)
from core.archive.loading import LOCK_CLASS, workspace_import
from core.archive.reading import ArchiveError
from core.archive.tables import KIND_PLAIN, KIND_REF, KIND_WORKSPACE, ByColumn, archive_tables, columns, review_targets
from core.archive.writing import workspace_export
from core.models import AuditEvent, ImportDeferred, ImportIdMap, ImportProgress, JobRun, Workspace
from core.services import membership_set, workspace_create
from memory.models import Memory
from memory.services import Draft, memory_store
from review.models import ReviewItem
from tests.helpers import database_url, wait_for

pytestmark = pytest.mark.django_db
ROOT = Path(__file__).resolve().parents[2]

T0 = datetime(2023, 5, 8, 13, 56, tzinfo=timezone.utc)
LINES = [
    "Honestly, I love hiking in the mountains.",
    "My email is caroline@example.com and I work at Initech.",
    "We decided to use PostgreSQL instead of MySQL for the new service.",
    "Never deploy on Fridays without a rollback plan.",
    "Sorry, I can't export spreadsheets to PDF, I don't have that ability.",
    "Can you export this spreadsheet to PDF for me?",
]


def seed(workspace):
    items = [InteractionItem(channel="chat", channel_id=sender, sender_name=sender.title(), content=line,
                             thread="t1", occurred_at=T0 + timedelta(seconds=10 * i), external_id=f"ext-{i}")
             for i, (sender, line) in enumerate(zip(["caroline", "caroline", "mel", "mel", "bot", "caroline"], LINES))]
    ids = [r.id for r in interactions_log(workspace=workspace, items=items)]
    interactions_index(interaction_ids=ids, batch_size=64)
    conversation_summarise(conversation_id=Conversation.objects.get(workspace=workspace).pk)
    memory_store(workspace_id=workspace.pk, draft=Draft(type="fact", certainty="verbatim", text="The build takes 4 minutes.",
                                                        source="api", confidence=1.0))
    return ids


def test_a_round_trip_gives_an_equal_workspace(workspace, tmp_path):
    seed(workspace)
    assert ReviewItem.objects.filter(workspace=workspace).exists() and Memory.objects.filter(workspace=workspace).exists()
    first = tmp_path / "a.zip"
    workspace_export(workspace=workspace, path=first)
    copy = workspace_create(name="Copy", slug="copy")
    report = workspace_import(path=first, workspace=copy)
    assert report.carried_vectors and report.counts["interactions"] == len(LINES)
    second = tmp_path / "b.zip"
    workspace_export(workspace=copy, path=second)
    assert normalised(first) == normalised(second)
    assert not set(Interaction.objects.filter(workspace=copy).values_list("pk", flat=True)) & set(
        Interaction.objects.filter(workspace=workspace).values_list("pk", flat=True))
    # processed in the source: not derived again, and their vectors came along
    assert not InteractionBacklog.objects.filter(workspace=copy).exists()
    assert InteractionIndex.objects.filter(workspace=copy).count() == len(LINES)
    # and so did the kinds of things they name (core.kinds), which recall searches too

    def kinds(ws):
        return sorted(InteractionKinds.objects.filter(workspace=ws).values_list("interaction__external_id", "kinds"))

    assert kinds(copy) == kinds(workspace) and len(kinds(workspace)) == len(LINES) and any(k for _, k in kinds(workspace))


def test_an_archive_with_a_secret_is_refused_and_nothing_is_imported(workspace, tmp_path):
    seed(workspace)
    path = tmp_path / "a.zip"
    workspace_export(workspace=workspace, path=path)
    tampered = tmp_path / "t.zip"
    rewrite(path, tampered, "interactions.jsonl",
            lambda row: {**row, "content": "key AKIAIOSFODNN7EXAMPLE secret wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"}
            if row["external_id"] == "ext-3" else row)
    copy = workspace_create(name="Copy", slug="copy")
    with pytest.raises(ArchiveError) as refused:
        workspace_import(path=tampered, workspace=copy)
    [problem] = refused.value.problems
    assert problem["table"] == "interactions" and problem["line"] == 4 and problem["field"] == "content"
    assert "AKIA" not in json.dumps(refused.value.problems) and "nothing was imported" in str(refused.value)
    assert not Interaction.objects.filter(workspace=copy).exists()


def test_an_edited_archive_fails_its_checksum_and_nothing_is_imported(workspace, tmp_path):
    seed(workspace)
    path = tmp_path / "a.zip"
    workspace_export(workspace=workspace, path=path)
    tampered = tmp_path / "t.zip"
    rewrite(path, tampered, "memories.jsonl", lambda row: {**row, "text": row["text"] + "!"}, fix_manifest=False)
    copy = workspace_create(name="Copy", slug="copy")
    with pytest.raises(ArchiveError, match="does not match the manifest"):
        workspace_import(path=tampered, workspace=copy)
    assert not Interaction.objects.filter(workspace=copy).exists()


@pytest.mark.parametrize("content, message", [
    (b"not a zip at all", "not a zip archive"),
    (None, "no manifest.json"),
    ("bomb", "zip bomb"),
    ("version", "format version 99 is not supported"),
    ("stranger", "tables this Mnemo does not know"),
])
def test_a_bad_archive_is_refused_with_a_clear_message(workspace, tmp_path, content, message):
    path = tmp_path / "bad.zip"
    if isinstance(content, bytes):
        path.write_bytes(content)
    else:
        with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as zf:
            if content == "bomb":
                zf.writestr("interactions.jsonl", b"\n" * (50 * 1024 * 1024))
                zf.writestr("manifest.json", json.dumps(manifest()))
            elif content == "version":
                zf.writestr("manifest.json", json.dumps({**manifest(), "format_version": 99}))
            elif content == "stranger":
                zf.writestr("manifest.json", json.dumps({**manifest(), "tables": {"spells": {"rows": 0}}}))
            else:
                zf.writestr("readme.txt", "hello")
    with pytest.raises(ArchiveError, match=message):
        workspace_import(path=path, workspace=workspace)


def test_it_imports_only_into_an_empty_workspace(workspace, tmp_path):
    seed(workspace)
    path = tmp_path / "a.zip"
    workspace_export(workspace=workspace, path=path)
    with pytest.raises(ArchiveError, match="empty workspace"):
        workspace_import(path=path, workspace=workspace)


@pytest.mark.django_db(transaction=True)  # job_run refuses to run inside a transaction
def test_the_commands_export_and_import_and_record_their_runs(workspace, tmp_path):
    seed(workspace)
    path = tmp_path / "a.zip"
    err = io.StringIO()
    call_command("export_workspace", "acme", str(path), stderr=err)
    assert "Exported" in err.getvalue() and "interactions" in err.getvalue()
    call_command("import_workspace", str(path), "--into", "fresh", stderr=io.StringIO())
    assert Interaction.objects.filter(workspace__slug="fresh").count() == len(LINES)
    assert set(JobRun.objects.values_list("name", "status")) == {("archive.export", "ok"), ("archive.import", "ok")}
    assert AuditEvent.objects.filter(workspace__slug="fresh", verb="workspace.import").exists()
    with pytest.raises(CommandError, match="empty workspace"):
        call_command("import_workspace", str(path), "--into", "fresh", stderr=io.StringIO())


def test_every_archived_table_can_be_keyed_and_ordered():
    # A field added to an archived model must be serialisable without code here: a
    # non-null foreign key to a table that is not archived is the one thing that is not.
    tables = archive_tables()
    for table in tables:
        assert [c for c in columns(table, tables) if c.primary_key]


# --- helpers --------------------------------------------------------------------------------

def manifest() -> dict:
    return {"format": "mnemo-workspace", "format_version": 1, "tables": {}}


def rewrite(source, target, member: str, change, fix_manifest: bool = True) -> None:
    import hashlib

    with zipfile.ZipFile(source) as zin, zipfile.ZipFile(target, "w", zipfile.ZIP_DEFLATED) as zout:
        meta = json.loads(zin.read("manifest.json"))
        for info in zin.infolist():
            if info.filename == "manifest.json":
                continue
            data = zin.read(info)
            if info.filename == member:
                data = b"".join(json.dumps(change(json.loads(line)), separators=(",", ":")).encode() + b"\n"
                                for line in data.splitlines())
                if fix_manifest:
                    name = member.removesuffix(".jsonl")
                    meta["tables"][name]["sha256"] = hashlib.sha256(data).hexdigest()
            zout.writestr(info.filename, data)
        zout.writestr("manifest.json", json.dumps(meta))


# The import itself: the target workspace was created, then imported into.
IMPORT_VERBS = {"workspace.create", "workspace.import", "workspace.import_requested"}


def normalised(path) -> dict:
    """Each table's rows with every id replaced by its row's position in its table (both
    archives list rows in id order, and the import keeps that order), the workspace left
    out, and the audit rows of the import itself dropped."""
    tables = archive_tables()
    targets = review_targets(tables)
    with zipfile.ZipFile(path) as zf:
        raw = {t.name: [json.loads(line) for line in zf.read(t.member).splitlines()] for t in tables}
    by_label = {t.label: t for t in tables}
    position: dict[str, dict] = {}
    for t in tables:
        pk = next(c for c in columns(t, tables) if c.primary_key)
        position[t.label] = {row[pk.name]: i for i, row in enumerate(raw[t.name])}

    def ref(label, value):
        if value in (None, "") or label not in by_label:
            return None
        return position[label].get(int(value))

    out = {}
    for t in tables:
        rows = []
        for row in raw[t.name]:
            if t.name == "audit" and row["verb"] in IMPORT_VERBS:
                continue
            line = {}
            for c in columns(t, tables):
                value = row.get(c.name)
                if c.kind == KIND_WORKSPACE or c.primary_key and c.kind == KIND_PLAIN:
                    continue
                if c.kind == KIND_REF:
                    label = c.target
                    if isinstance(label, ByColumn):
                        label = targets.get(row[label.column]) if label.review_kind else row[label.column]
                    value = ref(label, value)
                line[c.name] = value
            rows.append(line)
        out[t.name] = rows
    return out


# --- the API ----------------------------------------------------------------------------------

@pytest.mark.django_db(transaction=True)
def test_the_api_exports_in_the_background_and_the_link_works_once(workspace, admin_api, outsider_api, anon_api,
                                                                    api, eager_tasks):
    seed(workspace)
    assert api.post("/export").status_code == 403
    started = admin_api.post("/export")
    assert started.status_code == 202
    job = started.json()
    state = admin_api.get(f"/export/{job['id']}").json()
    assert state["status"] == "ok" and state["report"]["tables"]["interactions"] == len(LINES)
    assert outsider_api.get(f"/export/{job['id']}").status_code == 404
    assert outsider_api.get(f"/export/{job['id']}/download").status_code == 404
    assert anon_api.get(f"/export/{job['id']}/download").status_code == 401
    assert anon_api.get(f"/export/{job['id']}/download", token="guess").status_code == 404
    with_key = admin_api.get(f"/export/{job['id']}/download")
    assert with_key.status_code == 200 and b"".join(with_key.streaming_content)[:2] == b"PK"
    link = job["download_url"].removeprefix("/api/v1")
    path, _, token = link.partition("?token=")
    once = anon_api.get(path, token=token)
    assert once.status_code == 200 and b"".join(once.streaming_content)[:2] == b"PK"
    assert anon_api.get(path, token=token).status_code == 404


@pytest.mark.django_db(transaction=True)
def test_the_api_imports_an_upload_in_the_background(workspace, other_workspace, make_key, tmp_path, eager_tasks,
                                                     outsider_api):
    seed(workspace)
    path = tmp_path / "a.zip"
    workspace_export(workspace=workspace, path=path)
    _, key = make_key(other_workspace, scopes="admin", name="importer")
    from django.test import Client

    client = Client(HTTP_AUTHORIZATION=f"Bearer {key}")
    with open(path, "rb") as upload:
        answer = client.post("/api/v1/import", {"archive": upload})
    assert answer.status_code == 202, answer.content
    job = answer.json()
    state = client.get(f"/api/v1/import/{job['id']}").json()
    assert state["status"] == "ok", state
    assert Interaction.objects.filter(workspace=other_workspace).count() == len(LINES)
    with open(path, "rb") as upload:
        again = client.post("/api/v1/import", {"archive": upload})
    assert again.status_code == 409 and again.json()["error"]["code"] == "workspace_not_empty"


@pytest.mark.django_db(transaction=True)
def test_the_api_refuses_a_bad_upload_with_4xx(workspace, make_key, tmp_path, eager_tasks):
    from django.core.files.uploadedfile import SimpleUploadedFile
    from django.test import Client

    _, key = make_key(workspace, scopes="admin", name="importer")
    client = Client(HTTP_AUTHORIZATION=f"Bearer {key}")
    answer = client.post("/api/v1/import", {"archive": SimpleUploadedFile("x.zip", b"hello, not a zip" * 4)})
    assert answer.status_code == 422 and answer.json()["error"]["code"] == "not_an_archive"
    bomb = tmp_path / "bomb.zip"
    with zipfile.ZipFile(bomb, "w", zipfile.ZIP_DEFLATED) as zf:
        zf.writestr("interactions.jsonl", b"\n" * (50 * 1024 * 1024))
        zf.writestr("manifest.json", json.dumps(manifest()))
    with open(bomb, "rb") as upload:
        answer = client.post("/api/v1/import", {"archive": upload})
    assert answer.status_code == 202
    state = client.get(f"/api/v1/import/{answer.json()['id']}").json()
    assert state["status"] == "failed" and "zip bomb" in state["report"]["error"]


def test_vectors_of_another_model_are_left_for_the_embedding_tasks(workspace, tmp_path, monkeypatch):
    from conversations.services import interactions_index_missing
    from core.archive import loading

    seed(workspace)
    path = tmp_path / "a.zip"
    workspace_export(workspace=workspace, path=path)
    monkeypatch.setattr(loading, "embedding_signature", lambda: {"model": "another-model", "dimensions": 384})
    copy = workspace_create(name="Copy", slug="copy")
    report = workspace_import(path=path, workspace=copy)
    assert not report.carried_vectors and report.skipped == {"interaction_embeddings": len(LINES)}
    assert not Memory.objects.filter(workspace=copy, embedding__isnull=False).exists()
    # processed in the source: not derived again, only embedded again
    assert not InteractionBacklog.objects.filter(workspace=copy).exists()
    assert interactions_index_missing(workspace_id=copy.pk) == len(LINES)
    assert InteractionIndex.objects.filter(workspace=copy).count() == len(LINES)


# --- bounded transactions: a killed import resumes, a refused one keeps nothing ---------------

def _import_process(path, slug: str, tmp_path) -> subprocess.Popen:
    """`manage.py import_workspace` in a process of its own, one line a transaction."""
    env = {**os.environ, "DATABASE_URL": database_url(), "DJANGO_SETTINGS_MODULE": "mnemo.settings",
           "MNEMO_VAR_DIR": str(tmp_path / "var"), "MNEMO_ARCHIVE_IMPORT_BATCH": "1"}
    return subprocess.Popen([sys.executable, "manage.py", "import_workspace", str(path), "--into", slug],
                            cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def _import_lock_held(workspace_id: int) -> bool:
    with connection.cursor() as cursor:
        cursor.execute("SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND classid = %s AND objid = %s",
                       [LOCK_CLASS, workspace_id])
        return cursor.fetchone()[0] > 0


def _waiting_on_a_lock() -> bool:
    with connection.cursor() as cursor:
        cursor.execute("SELECT count(*) FROM pg_locks WHERE NOT granted")
        return cursor.fetchone()[0] > 0


@pytest.mark.django_db(transaction=True)
def test_an_import_killed_mid_way_stays_hidden_and_resumes_to_an_equal_workspace(workspace, owner, make_key,
                                                                                 tmp_path):
    seed(workspace)
    first = tmp_path / "a.zip"
    workspace_export(workspace=workspace, path=first)
    copy = workspace_create(name="Copy", slug="copy")
    process = _import_process(first, "copy", tmp_path)
    try:
        loaded = wait_for(lambda: "interactions" in (ImportProgress.objects.filter(workspace=copy)
                                                     .values_list("tables_done", flat=True).first() or []),
                          timeout=300, interval=0.05)
        assert loaded, process.stderr.read() if process.poll() is not None else "no progress"
        with transaction.atomic():
            # Its next batch waits on the progress row: killed inside an open transaction.
            ImportProgress.objects.select_for_update().get(workspace=copy)
            assert wait_for(_waiting_on_a_lock, timeout=60, interval=0.05)
            process.send_signal(signal.SIGKILL)
            process.wait(timeout=30)
    finally:
        if process.poll() is None:
            process.kill()
    assert wait_for(lambda: not _import_lock_held(copy.pk), timeout=60)  # its session is gone

    # Half loaded, and nothing of it usable: refused to agents and the dashboard, left alone by jobs.
    assert Interaction.objects.filter(workspace=copy).count() == len(LINES)
    assert InteractionBacklog.objects.filter(workspace=copy).count() == len(LINES)
    assert interactions_backlog_drain(older_than_seconds=0) == 0
    _, key = make_key(copy, scopes="read,write")
    refused = Client().get("/api/v1/status", HTTP_AUTHORIZATION=f"Bearer {key}")
    assert refused.status_code == 409 and refused.json()["error"]["code"] == "workspace_importing"
    membership_set(workspace=copy, user=owner, role="admin")
    browser = Client()
    browser.force_login(owner)
    assert browser.get("/w/copy/review/").status_code == 409
    with pytest.raises(CommandError, match="was interrupted"):
        call_command("import_workspace", str(first), "--into", "copy", stderr=io.StringIO())

    call_command("import_workspace", str(first), "--into", "copy", "--resume", stderr=io.StringIO())
    second = tmp_path / "b.zip"
    workspace_export(workspace=copy, path=second)
    resumed = normalised(second)
    # what this test did to the copy meanwhile (a key, a member: before the audit table loaded) is not the import's
    for verb in ("api_key.create", "membership.add"):
        resumed["audit"].remove(next(r for r in resumed["audit"] if r["verb"] == verb))
    assert normalised(first) == resumed
    assert not InteractionBacklog.objects.filter(workspace=copy).exists()
    assert not (ImportProgress.objects.exists() or ImportIdMap.objects.exists() or ImportDeferred.objects.exists())
    assert Client().get("/api/v1/status", HTTP_AUTHORIZATION=f"Bearer {key}").status_code == 200
    assert browser.get("/w/copy/review/").status_code == 200


@pytest.mark.django_db(transaction=True)
def test_an_import_refused_mid_way_keeps_nothing_and_the_workspace_takes_an_import_again(workspace, tmp_path,
                                                                                          settings):
    settings.MNEMO_ARCHIVE_IMPORT_BATCH = 1
    seed(workspace)
    path = tmp_path / "a.zip"
    workspace_export(workspace=workspace, path=path)
    bad = tmp_path / "bad.zip"
    rewrite(path, bad, "memory_evidence.jsonl", lambda row: {**row, "interaction": 987654321})
    copy = workspace_create(name="Copy", slug="copy")
    audit_before = AuditEvent.objects.filter(workspace=copy).count()
    with pytest.raises(ArchiveError, match="lacks: nothing was imported"):
        workspace_import(path=bad, workspace=copy)
    for table in archive_tables():
        if table.name != "audit":
            assert not table.model.objects.filter(**{table.scope: copy}).exists(), table.name
    assert AuditEvent.objects.filter(workspace=copy).count() == audit_before
    assert not InteractionBacklog.objects.filter(workspace=copy).exists()
    assert not (ImportProgress.objects.exists() or ImportIdMap.objects.exists() or ImportDeferred.objects.exists())

    workspace_import(path=path, workspace=copy)
    again = tmp_path / "again.zip"
    workspace_export(workspace=copy, path=again)
    assert normalised(path) == normalised(again)


@pytest.mark.django_db(transaction=True)
def test_a_row_the_database_refuses_mid_way_is_reported_and_nothing_is_kept(workspace, tmp_path, settings):
    settings.MNEMO_ARCHIVE_IMPORT_BATCH = 1
    seed(workspace)
    path = tmp_path / "a.zip"
    workspace_export(workspace=workspace, path=path)
    bad = tmp_path / "bad.zip"
    rewrite(path, bad, "memories.jsonl", lambda row: {**row, "status": "nonsense"})
    copy = workspace_create(name="Copy", slug="copy")
    with pytest.raises(ArchiveError, match=r"memories.jsonl lines 1–1: the database refused a row"):
        workspace_import(path=bad, workspace=copy)
    assert not Interaction.objects.filter(workspace=copy).exists()
    assert not ImportProgress.objects.exists()


@pytest.mark.django_db(transaction=True)  # job_run refuses to run inside a transaction
def test_resume_and_abandon_refuse_when_no_import_was_interrupted(workspace, tmp_path):
    seed(workspace)
    path = tmp_path / "a.zip"
    workspace_export(workspace=workspace, path=path)
    workspace_create(name="Copy", slug="copy")
    with pytest.raises(CommandError, match="no interrupted import into 'copy' to resume"):
        call_command("import_workspace", str(path), "--into", "copy", "--resume", stderr=io.StringIO())
    with pytest.raises(CommandError, match="no interrupted import into 'copy'"):
        call_command("import_workspace", "--into", "copy", "--abandon", stderr=io.StringIO())
    with pytest.raises(CommandError, match="no workspace 'nowhere'"):
        call_command("import_workspace", str(path), "--into", "nowhere", "--resume", stderr=io.StringIO())
    assert not Workspace.objects.filter(slug="nowhere").exists()
    assert not Interaction.objects.filter(workspace__slug="copy").exists()
