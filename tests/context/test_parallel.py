"""Recall searching memories on a second connection (MNEMO_RECALL_PARALLEL): committed data,
so both connections see it. The same answers as the sequential search, in the snapshot the
request's transaction exported; sequential when the caller's transaction holds writes of
its own; a helper's error reaches the request."""

from __future__ import annotations

import pytest
from django.db import connection, transaction
from django.test.utils import CaptureQueriesContext

from context import services
from core import search
from memory import search as memory_search
from tests.context.test_api import log_chat

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture(autouse=True)
def _close_helpers():
    yield
    search.close_helper_connections()  # the test database is dropped or flushed next


def _answers(api, settings, parallel: bool) -> list:
    settings.MNEMO_RECALL_PARALLEL = parallel
    with CaptureQueriesContext(connection) as captured:
        recall = api.post("/recall", {"query": "support group painting race", "limit": 20}).json()["results"]
        pack = api.post("/context", {"query": "support group painting race", "budget_tokens": 400}).json()
    exported = any("pg_export_snapshot" in q["sql"] for q in captured.captured_queries)
    memory_sql = any("memory_memory" in q["sql"] for q in captured.captured_queries if "@@" in q["sql"])
    items = [(i["kind"], i["id"], i["score"], i["sources"]) for s in pack["sections"] for i in s["items"]]
    return [(r["kind"], r["id"], r["score"], r["sources"]) for r in recall], items, exported, memory_sql


def test_the_parallel_search_answers_as_the_sequential_one(api, workspace, settings):
    log_chat(workspace)
    sequential = _answers(api, settings, parallel=False)
    parallel = _answers(api, settings, parallel=True)
    assert any(kind == "memory" for kind, *_ in parallel[0])  # memories came from the helper
    assert parallel[:2] == sequential[:2]
    # In parallel, this connection exported its snapshot and searched no memories itself.
    assert parallel[2:] == (True, False) and sequential[2:] == (False, True)


def test_a_caller_with_its_own_writes_searches_on_its_own_connection(workspace, settings):
    settings.MNEMO_RECALL_PARALLEL = True
    log_chat(workspace)
    from memory.models import Memory

    with transaction.atomic():
        memory = Memory.objects.filter(workspace=workspace, status="active").first()
        Memory.objects.filter(pk=memory.pk).update(text="Melanie keeps bees on the roof of the studio.")
        with CaptureQueriesContext(connection) as captured:
            found = services.recall(services.RecallRequest(query="bees roof studio", workspace_id=workspace.pk))
        # Its own, uncommitted text: a helper's connection would have read the committed one.
        assert any(i.kind == "memory" and i.id == memory.pk and i.text.startswith("Melanie keeps bees") for i in found)
        assert not any("pg_export_snapshot" in q["sql"] for q in captured.captured_queries)
        transaction.set_rollback(True)


def test_a_helper_error_fails_the_request_and_leaves_the_connection_usable(api, workspace, settings, monkeypatch):
    settings.MNEMO_RECALL_PARALLEL = True
    log_chat(workspace)

    def broken(cursor, ids):
        raise RuntimeError("memory rows unreadable")

    broken_memories = search.SearchKind("memory_memory", "m", memory_search.memory_filters, broken)
    monkeypatch.setitem(memory_search.SEARCH_KINDS, "memory", broken_memories)  # what the memory layer offers
    with pytest.raises(RuntimeError, match="memory rows unreadable"):
        services.recall(services.RecallRequest(query="support group", workspace_id=workspace.pk))
    monkeypatch.undo()
    assert services.recall(services.RecallRequest(query="support group", workspace_id=workspace.pk))
