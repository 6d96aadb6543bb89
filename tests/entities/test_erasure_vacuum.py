"""After an erasure commits, a real worker behind a real broker vacuums every table the
erasure wrote (issue 16): the deleted rows must not wait in the table files for autovacuum.
With MNEMO_ERASURE_VACUUM_FULL the table files are rewritten and no longer hold the text."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone as dt_timezone
from pathlib import Path

import pytest
from celery.contrib.testing.worker import start_worker
from django.db import connection

from conversations import services as conversation_services
from conversations.models import Interaction
from conversations.services import InteractionItem
from core.models import AuditEvent
from entities import services
from entities.models import Entity
from mnemo.celery import app
from tests.helpers import wait_for

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.celery_worker]

T0 = datetime(2024, 3, 1, 9, 0, tzinfo=dt_timezone.utc)
MARKER = "quokkazebrafish"


def log(workspace, handle: str, name: str, text: str, at: datetime):
    [result] = conversation_services.interactions_log(workspace=workspace, items=[InteractionItem(
        channel="chat", channel_id=handle, sender_name=name, content=text, occurred_at=at, thread="lab")])
    return result


@pytest.fixture
def ada(workspace):
    for i in range(5):
        log(workspace, "ada", "Ada Lovelace", f"My {MARKER}{i} notes are ready, page {i}", T0 + timedelta(minutes=i))
    log(workspace, "grace", "Grace Hopper", "Morning all, the compiler runs", T0 + timedelta(minutes=9))
    ada = Entity.objects.get(identities__channel_id="ada")
    services.profile_set(entity=ada, key="employer", value="Acme")
    return ada


def vacuum_counts(tables) -> dict[str, int]:
    with connection.cursor() as cursor:
        cursor.execute("SELECT relname, vacuum_count FROM pg_stat_user_tables WHERE relname = ANY(%s)", [list(tables)])
        return dict(cursor.fetchall())


def erase_and_let_the_worker_vacuum(ada) -> AuditEvent:
    services.entity_erase(entity=ada)
    # Nothing vacuums inside the request: the work waits for a worker.
    assert not AuditEvent.objects.filter(verb="entity.erase.vacuum").exists()
    with start_worker(app, pool="solo", perform_ping_check=False, shutdown_timeout=30):
        assert wait_for(lambda: AuditEvent.objects.filter(verb="entity.erase.vacuum").exists(), timeout=120)
    return AuditEvent.objects.get(verb="entity.erase.vacuum")


def test_the_worker_vacuums_every_table_the_erasure_wrote(broker, workspace, ada):
    everything = connection.introspection.table_names()
    before = vacuum_counts(everything)

    event = erase_and_let_the_worker_vacuum(ada)

    tables = set(event.data["tables"])
    erasure = AuditEvent.objects.get(verb="entity.erase")
    assert event.data["erasure"] == erasure.data["erasure"] and event.data["full"] is False
    # The rows deleted (messages, the person, the profile) and the rows overwritten (the
    # conversation re-counted, earlier audit events scrubbed) all leave dead versions.
    assert {"conversations_interaction", "conversations_conversation", "entities_entity", "entities_identity",
            "entities_profilevalue", "core_auditevent"} <= tables
    assert "core_workspace" not in tables and "auth_user" not in tables
    after = vacuum_counts(tables)
    assert {table: after[table] - before[table] for table in tables} == {table: 1 for table in tables}
    assert not Interaction.objects.filter(content__contains=MARKER).exists()


def _relation_files(table: str) -> list[Path]:
    """The files of a table, its TOAST table and every index of either."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT current_setting('data_directory')")
        data_directory = Path(cursor.fetchone()[0])
        cursor.execute(
            """
            WITH rel AS (SELECT oid, reltoastrelid FROM pg_class WHERE oid = %s::regclass),
                 own AS (SELECT oid FROM rel UNION SELECT reltoastrelid FROM rel WHERE reltoastrelid <> 0)
            SELECT pg_relation_filepath(oid) FROM own
            UNION SELECT pg_relation_filepath(indexrelid) FROM pg_index WHERE indrelid IN (SELECT oid FROM own)
            """,
            [table],
        )
        paths = [data_directory / path for (path,) in cursor.fetchall()]
    return [segment for path in paths for segment in sorted(path.parent.glob(path.name + "*"))
            if segment.name == path.name or segment.name[len(path.name):].lstrip(".").isdigit()]


def marker_bytes_on_disk(table: str) -> int:
    with connection.cursor() as cursor:
        cursor.execute("CHECKPOINT")  # the pages reach the files
    return sum(path.read_bytes().count(MARKER.encode()) for path in _relation_files(table))


def test_with_vacuum_full_the_table_files_no_longer_hold_the_erased_text(broker, workspace, ada, settings):
    settings.MNEMO_ERASURE_VACUUM_FULL = True
    with connection.cursor() as cursor:
        cursor.execute("SELECT rolsuper FROM pg_roles WHERE rolname = current_user")
        if not cursor.fetchone()[0]:
            pytest.skip("reading the table files needs the embedded PostgreSQL's superuser")
    # The check can see the text where it is: in the row, its search vector and the index.
    assert marker_bytes_on_disk("conversations_interaction") >= 5

    event = erase_and_let_the_worker_vacuum(ada)

    assert event.data["full"] is True and "conversations_interaction" in event.data["tables"]
    assert marker_bytes_on_disk("conversations_interaction") == 0
    assert Interaction.objects.filter(sender_name="Grace Hopper").count() == 1


def test_an_erasure_stands_and_the_failure_is_logged_when_the_broker_is_down(ada, admin_api, broker_down, caplog):
    response = admin_api.post(f"/entities/{ada.pk}/erase")

    assert response.status_code == 200, response.content
    assert response.json()["receipt"]["interactions"] == 5
    assert not Entity.objects.filter(pk=ada.pk).exists()
    assert not Interaction.objects.filter(content__contains=MARKER).exists()
    assert any(record.levelname == "ERROR" and "on_commit" in record.getMessage() for record in caplog.records)
