"""Workspace archives against the real database: a round trip gives an equal workspace
(export A, import as B, export B: the same rows once ids are replaced by positions), the
importer only inserts into the insert-only log, secrets and damaged archives are refused
with nothing imported, and the commands."""

from __future__ import annotations

import io
import json
import zipfile
from datetime import datetime, timedelta, timezone

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from conversations.models import Conversation, Interaction, InteractionBacklog, InteractionIndex
from conversations.services import InteractionItem, conversation_summarise, interactions_index, interactions_log
from core.archive.loading import workspace_import
from core.archive.reading import ArchiveError
from core.archive.tables import KIND_PLAIN, KIND_REF, KIND_WORKSPACE, ByColumn, archive_tables, columns, review_targets
from core.archive.writing import workspace_export
from core.models import AuditEvent, JobRun
from core.services import workspace_create
from memory.models import Memory
from memory.services import Draft, memory_store
from review.models import ReviewItem

pytestmark = pytest.mark.django_db

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
