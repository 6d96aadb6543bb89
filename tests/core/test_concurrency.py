"""Issue 16: many writers at once — batches, single messages, memories, procedures,
decisions, review decisions and erasure through the API, with a real Celery worker
processing what they log — answer no 5xx, leave no deadlock in PostgreSQL's log, and lose
or duplicate nothing."""

from __future__ import annotations

import random
import threading
from collections import Counter, defaultdict
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from celery.contrib.testing.worker import start_worker
from django.db import OperationalError, connection, transaction

from core import concurrency
from conversations.models import Interaction, InteractionBacklog, InteractionIndex
from entities.models import DecisionRecord, Entity
from memory.models import Memory
from mnemo.celery import app
from review.models import ReviewItem
from tests.helpers import ApiClient, assert_error, closing_connections, deadlock_error, wait_for

pytestmark = pytest.mark.django_db(transaction=True)

ROUNDS = 12
# Messages the extractors turn into candidates (profile values, relationships to a shared
# organisation, preferences): the worker then writes entities, memories and review items
# while the requests write theirs.
TALK = [
    "I work at Acme Corp.", "I live in Berlin", "I prefer detailed explanations with examples",
    "I work at Globex", "I live in The Hague", "my name is Ada Lovelace.", "we met for lunch today",
]


def _postgres_log() -> Path:
    with connection.cursor() as cursor:
        cursor.execute("SHOW data_directory")
        return Path(cursor.fetchone()[0]) / "log"


class _Run:
    """What every thread saw: status codes per endpoint and what the API said it stored."""

    def __init__(self):
        self.lock = threading.Lock()
        self.statuses: dict[str, Counter] = defaultdict(Counter)
        self.server_errors: list[tuple[str, int, bytes]] = []
        self.interactions: dict[int, str] = {}  # id -> sender handle
        self.erased_handles: set[str] = set()
        self.memories: set[int] = set()
        self.decisions: set[int] = set()

    def record(self, name: str, response):
        with self.lock:
            self.statuses[name][response.status_code] += 1
            if response.status_code >= 500:
                self.server_errors.append((name, response.status_code, response.content[:500]))
        return response

    def logged(self, results, handles):
        with self.lock:
            for result, handle in zip(results, handles):
                if result["status"] == "created":
                    self.interactions[result["id"]] = handle


@closing_connections
def _batches(api: ApiClient, run: _Run, seed: int):
    rng = random.Random(seed)
    for round_ in range(ROUNDS // 3):
        items = []
        for i in range(150):
            handle = f"member-{rng.randrange(12)}"
            items.append({"channel": "chat", "channel_id": handle, "sender_name": handle.title(),
                          "thread": f"room-{rng.randrange(4)}", "content": f"{rng.choice(TALK)} ({seed}.{round_}.{i})"})
        response = run.record("batch", api.post("/interactions/batch", {"items": items}))
        if response.status_code == 200:
            run.logged(response.json()["results"], [item["channel_id"] for item in items])


@closing_connections
def _singles(api: ApiClient, run: _Run, seed: int):
    rng = random.Random(seed)
    for i in range(ROUNDS * 2):
        handle = f"member-{rng.randrange(12)}"
        item = {"channel": "chat", "channel_id": handle, "sender_name": handle.title(),
                "thread": f"room-{rng.randrange(4)}", "content": f"{rng.choice(TALK)} (single {seed}.{i})"}
        response = run.record("single", api.post("/interactions", item))
        if response.status_code in (200, 201):
            run.logged([response.json()], [handle])


@closing_connections
def _memories(api: ApiClient, run: _Run, subject_id: int):
    # Two contradicting values of one attribute, again and again: dedup, contradiction and
    # the review queue all at once.
    for i in range(ROUNDS * 2):
        value = ("Lisbon", "Porto")[i % 2]
        response = run.record("memories", api.post("/memories", {
            "text": f"Ada lives in {value}", "entity": subject_id, "attribute": "location", "value": value,
        }))
        if response.status_code in (200, 201):
            with run.lock:
                run.memories.add(response.json()["memory"]["id"])


@closing_connections
def _procedures(api: ApiClient, run: _Run):
    for i in range(ROUNDS):
        response = run.record("procedures", api.post("/procedures", {
            "name": f"deploy the service {i % 3}", "steps": ["run the tests", "tag the release", f"ship build {i % 3}"],
        }))
        if response.status_code in (200, 201):
            with run.lock:
                run.memories.add(response.json()["memory"]["id"])


@closing_connections
def _decisions(api: ApiClient, run: _Run):
    for i in range(ROUNDS):
        response = run.record("decisions", api.post("/decisions", {
            "description": f"Use queue option {i} for the ingest", "options": ["a", "b"], "chosen": "a",
            "confidence": 0.7,
        }))
        if response.status_code == 201:
            with run.lock:
                run.decisions.add(response.json()["decision"]["id"])


@closing_connections
def _reviews(api: ApiClient, run: _Run, seed: int):
    rng = random.Random(seed)
    for i in range(ROUNDS * 2):
        pending = run.record("review list", api.get("/candidates", status="pending", page_size=20))
        ids = [item["id"] for item in pending.json()["items"]] if pending.status_code == 200 else []
        if not ids:
            continue
        if i % 2:
            run.record("review bulk", api.post("/candidates/" + rng.choice(["promote", "reject"]),
                                               {"ids": rng.sample(ids, min(5, len(ids)))}))
        else:
            run.record("review one", api.post(f"/candidates/{rng.choice(ids)}/reject", {"note": "no"}))


@closing_connections
def _erasures(api: ApiClient, admin: ApiClient, run: _Run):
    # A visitor talks in the shared rooms (their conversations then hold others' messages
    # too) and is erased while everyone else keeps writing.
    for i in range(ROUNDS // 2):
        handle = f"visitor-{i}"
        entity_id = None
        for j in range(4):
            item = {"channel": "chat", "channel_id": handle, "sender_name": f"Visitor {i}", "thread": f"room-{j % 4}",
                    "content": f"{TALK[j]} (visitor {i}.{j})"}
            response = run.record("single", api.post("/interactions", item))
            if response.status_code in (200, 201):
                run.logged([response.json()], [handle])
                entity_id = response.json()["entity_id"]
        if entity_id is not None:
            with run.lock:
                run.erased_handles.add(handle)
            run.record("erase", admin.post(f"/entities/{entity_id}/erase"))


@pytest.mark.celery_worker
@pytest.mark.parametrize("broker", ["filesystem"], indirect=True)
def test_mixed_concurrent_writes_answer_no_5xx_deadlock_nothing_and_lose_nothing(workspace, make_key, broker):
    _, key = make_key(workspace, scopes="read,write")
    _, admin_key = make_key(workspace, scopes="read,write,admin", name="admin")
    api, admin = ApiClient(key), ApiClient(admin_key)
    ada = api.post("/entities", {"kind": "person", "name": "Ada"}).json()["id"]
    log = _postgres_log()
    log_start = log.stat().st_size
    run = _Run()

    # Two worker threads: the worker's own transactions contend with each other too.
    with start_worker(app, pool="threads", concurrency=2, perform_ping_check=False, shutdown_timeout=60):
        with ThreadPoolExecutor(max_workers=10) as pool:
            jobs = [
                pool.submit(_batches, api, run, 1), pool.submit(_batches, api, run, 2),
                pool.submit(_singles, api, run, 3), pool.submit(_singles, api, run, 4),
                pool.submit(_memories, api, run, ada), pool.submit(_procedures, api, run),
                pool.submit(_decisions, api, run), pool.submit(_reviews, api, run, 5),
                pool.submit(_reviews, admin, run, 6), pool.submit(_erasures, api, admin, run),
            ]
            for job in jobs:
                job.result()
        assert wait_for(lambda: not InteractionBacklog.objects.exists(), timeout=300)

    # PostgreSQL logs each deadlock it broke with the statements of both sides.
    with log.open(errors="replace") as file:
        file.seek(log_start)
        lines = file.read().splitlines()
    deadlocks = ["\n".join(lines[n:n + 8]) for n, line in enumerate(lines) if "deadlock detected" in line]
    assert not run.server_errors and not deadlocks, "\n\n".join([repr(e) for e in run.server_errors] + deadlocks)
    assert run.statuses["batch"][200] == 2 * (ROUNDS // 3)
    assert run.statuses["erase"][200] == ROUNDS // 2

    # Every interaction the API said it created is there, unless its sender was erased;
    # each is processed exactly once and no other interaction appeared.
    kept = {pk for pk, handle in run.interactions.items() if handle not in run.erased_handles}
    erased = set(run.interactions) - kept
    assert set(Interaction.objects.values_list("pk", flat=True)) == kept
    assert not Interaction.objects.filter(pk__in=erased).exists()
    assert set(InteractionIndex.objects.values_list("interaction_id", flat=True)) == kept
    assert not Entity.objects.filter(identities__channel_id__in=run.erased_handles).exists()
    # What POST /memories, /procedures and /decisions stored is there (none quoted a visitor).
    assert set(Memory.objects.filter(pk__in=run.memories).values_list("pk", flat=True)) == run.memories
    assert set(DecisionRecord.objects.filter(pk__in=run.decisions).values_list("pk", flat=True)) == run.decisions
    assert len(run.decisions) == ROUNDS
    # The contradicting values never both became current.
    assert Memory.objects.filter(subject_id=ada, attribute="location", status="active").count() <= 1
    # No review item points at a memory that is gone.
    memory_items = ReviewItem.objects.filter(kind__in=["memory", "conflict"], status="pending")
    assert not memory_items.exclude(target_id__in=Memory.objects.values_list("pk", flat=True)).exists()


def test_a_real_deadlock_victim_is_retried_and_both_writers_finish(workspace):
    # Two transactions lock two rows in opposite orders: PostgreSQL aborts one of them as
    # the deadlock's victim, and retry_on_conflict runs that one again from the start.
    first, second = (Entity.objects.create(workspace=workspace, kind="person", name=n) for n in ("A", "B"))
    both_hold_one = threading.Barrier(2)
    attempts = Counter()

    @concurrency.retry_on_conflict
    @transaction.atomic
    def rename(name: str, order: list[int]) -> None:
        attempts[name] += 1
        Entity.objects.select_for_update().get(pk=order[0])
        if attempts[name] == 1:
            both_hold_one.wait(timeout=30)
        Entity.objects.select_for_update().get(pk=order[1])
        Entity.objects.filter(pk__in=order).update(description=name)

    with ThreadPoolExecutor(2) as pool:
        jobs = [pool.submit(closing_connections(rename), "ab", [first.pk, second.pk]),
                pool.submit(closing_connections(rename), "ba", [second.pk, first.pk])]
        for job in jobs:
            job.result()
    assert sorted(attempts.values()) == [1, 2]
    assert Entity.objects.get(pk=first.pk).description == Entity.objects.get(pk=second.pk).description


def test_a_conflict_that_outlasts_the_retries_is_a_503_with_retry_after_and_stores_nothing(api, monkeypatch):
    from memory import api as memory_api
    from memory.services import memory_store

    attempts = []

    def always_deadlocked(**kwargs):
        attempts.append(1)
        memory_store.__wrapped__(**kwargs)  # the real write, rolled back by the conflict below
        raise deadlock_error()

    monkeypatch.setattr(memory_api.services, "memory_store",
                        concurrency.retry_on_conflict(transaction.atomic(always_deadlocked)))
    response = api.post("/memories", {"text": "Ada likes tea"})
    error = assert_error(response, 503, "busy")
    assert response["Retry-After"] == "1"
    assert error["details"] == {"retryable": True}
    assert len(attempts) == concurrency.ATTEMPTS
    assert not Memory.objects.exists()


def test_an_error_that_is_no_conflict_is_not_retried(workspace):
    calls = []

    @concurrency.retry_on_conflict
    def broken():
        calls.append(1)
        raise OperationalError("connection lost")

    with pytest.raises(OperationalError):
        broken()
    assert calls == [1]


def test_inside_an_outer_transaction_the_conflict_goes_to_its_owner(workspace):
    calls = []

    @concurrency.retry_on_conflict
    def deadlocked():
        calls.append(1)
        raise deadlock_error()

    with pytest.raises(OperationalError), transaction.atomic():
        deadlocked()
    assert calls == [1]


def test_logging_a_message_does_not_wait_for_the_worker_embedding_its_sender(api, workspace, monkeypatch):
    # Issue 16's minute-long single POSTs: the worker locked every entity without an
    # embedding (new senders) for its whole transaction, and inserting a message takes a
    # key-share lock on its sender. The worker's row lock must not block that insert.
    from core import providers
    from entities.services.embedding import entities_embed

    message = {"channel": "chat", "channel_id": "ada", "sender_name": "Ada", "content": "hello"}
    assert api.post("/interactions", message).status_code == 201
    embedding, posted = threading.Event(), threading.Event()

    class HeldEmbedder:
        name = "held"

        def embed(self, texts):
            embedding.set()
            posted.wait(timeout=60)
            return [[0.1] * 384 for _ in texts]

    monkeypatch.setattr(providers, "get_embedder", lambda: HeldEmbedder())
    with ThreadPoolExecutor(1) as pool:
        worker = pool.submit(closing_connections(entities_embed), workspace_id=workspace.pk)
        assert embedding.wait(timeout=60)
        response = api.post("/interactions", {**message, "content": "are you there?"})
        worker_still_holding = not worker.done()
        posted.set()
        assert worker.result() >= 1
    assert response.status_code == 201
    assert worker_still_holding
