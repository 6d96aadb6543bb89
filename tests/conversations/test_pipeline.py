"""The derivation pipeline (core.layers, settings.MNEMO_LAYERS; issue 17): layers run in
the listed order, a layer added by one line is called, provider calls hold no lock, and a
worker killed mid-derivation loses and duplicates nothing."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from datetime import datetime, timezone
from pathlib import Path

import pytest
from django.conf import settings as django_settings
from django.db import connection, transaction
from django.utils import timezone as dj_timezone

from conversations.models import Interaction, InteractionBacklog, InteractionIndex
from conversations.services import InteractionItem, interactions_index, interactions_log
from core.concurrency import lock_workspaces
from core.layers import Layer
from entities.models import Entity
from entities.services import entity_erase, entity_merge, entity_split
from memory.models import Memory, MemoryEvidence
from review.models import ReviewItem
from tests.helpers import closing_connections, database_url, wait_for
from tests.openai_server import OpenAIServer, llm_pointed_at

T0 = datetime(2023, 5, 8, 13, 56, tzinfo=timezone.utc)
REPO = Path(__file__).resolve().parents[2]

# Messages the rules turn into memories, profile values, relationships and review items.
TALK = ["I love hiking in the mountains.", "I work at Acme Corp.", "I live in Berlin",
        "I prefer detailed explanations with examples", "we met for lunch today"]


def log(workspace, lines, sender="caroline"):
    items = [InteractionItem(channel="chat", channel_id=sender, sender_name=sender.title(), content=line,
                             thread="t1", occurred_at=T0.replace(second=i)) for i, line in enumerate(lines)]
    return [r.id for r in interactions_log(workspace=workspace, items=items)]


# --- two layers added through settings: they record what they were called with ---------

CALLS: list[tuple] = []


def _recording(name: str) -> Layer:
    def prepare(interactions):
        CALLS.append((name, "prepare", connection.in_atomic_block))
        return [i.pk for i in interactions]

    def write(interactions, drafts):
        # What the layers before it wrote in this transaction is visible: memories of this batch.
        seen = MemoryEvidence.objects.filter(interaction_id__in=drafts).count()
        CALLS.append((name, "write", connection.in_atomic_block, seen))

    def erase(entity, interaction_ids):
        CALLS.append((name, "erase", Interaction.objects.filter(pk__in=interaction_ids).count()))
        return {f"{name} rows": 7}

    def move(source, target):
        CALLS.append((name, "move"))
        return {f"{name} ids": [source.pk]}

    def restore(moved, source):
        CALLS.append((name, "restore", moved.get(f"{name} ids")))

    return Layer(name=name, prepare=prepare, write=write, erase=erase, move=move, restore=restore)


EARLY = _recording("early")
LATE = _recording("late")
DEFAULT_LAYERS = list(django_settings.MNEMO_LAYERS)
HERE = "tests.conversations.test_pipeline"


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("first, second", [("early", "late"), ("late", "early")])
def test_layers_run_in_the_listed_order_and_a_layer_added_by_one_line_is_called(workspace, settings, first, second):
    # One test layer right after the log, one after every other layer: each is called,
    # in the listed order, prepare outside any transaction and write inside the one that
    # also writes the memory layer's rows (visible to the layer listed after it only).
    settings.MNEMO_LAYERS = [DEFAULT_LAYERS[0], f"{HERE}.{first.upper()}", *DEFAULT_LAYERS[1:],
                             f"{HERE}.{second.upper()}"]
    CALLS.clear()
    ids = log(workspace, TALK)
    assert interactions_index(interaction_ids=ids) == len(TALK)
    prepares = [c for c in CALLS if c[1] == "prepare"]
    writes = [c for c in CALLS if c[1] == "write"]
    assert prepares == [(first, "prepare", False), (second, "prepare", False)]
    assert [(c[0], c[2]) for c in writes] == [(first, True), (second, True)]
    assert writes[0][3] == 0 and writes[1][3] > 0  # only the layer after memory sees its memories

    # Erasure runs the layers in reverse, the log last: both still see the messages.
    caroline = Entity.objects.get(identities__channel_id="caroline")
    CALLS.clear()
    receipt = entity_erase(entity=caroline)
    assert [c[:2] for c in CALLS] == [(second, "erase"), (first, "erase")]
    assert [c[2] for c in CALLS] == [len(TALK), len(TALK)]
    assert receipt[f"{first} rows"] == receipt[f"{second} rows"] == 7 and receipt["interactions"] == len(TALK)


@pytest.mark.django_db
def test_a_merge_carries_an_added_layers_rows_and_a_split_brings_them_back(workspace, settings):
    settings.MNEMO_LAYERS = [*DEFAULT_LAYERS, f"{HERE}.LATE"]
    CALLS.clear()
    log(workspace, ["hello"], sender="ada")
    log(workspace, ["hi"], sender="ada2")
    source, target = (Entity.objects.get(identities__channel_id=h) for h in ("ada", "ada2"))
    merge = entity_merge(source=source, target=target)
    assert merge.moved["late ids"] == [source.pk] and len(merge.moved["interactions"]) == 1
    entity_split(merge=merge)
    assert CALLS == [("late", "move"), ("late", "restore", [source.pk])]
    assert Interaction.objects.get(sender_name="Ada").entity_id == source.pk


# --- provider calls outside locks ----------------------------------------------------------

@pytest.fixture
def llm(settings):
    server = OpenAIServer()
    yield from llm_pointed_at(server, settings)
    server.close()


@pytest.mark.django_db(transaction=True)
def test_while_the_llm_is_slow_no_lock_of_the_workspace_or_its_backlog_is_held(workspace, llm):
    ids = log(workspace, TALK)
    llm.chat(json.dumps({"memories": []}), delay=4)
    with ThreadPoolExecutor(1) as pool:
        worker = pool.submit(closing_connections(interactions_index), interaction_ids=ids)
        assert wait_for(lambda: llm.requests, timeout=60)  # the worker is inside the LLM call
        with transaction.atomic():
            with connection.cursor() as cursor:
                cursor.execute("SET LOCAL lock_timeout = '500ms'")
            lock_workspaces("ingest", "memory", workspace_ids=[workspace.pk])
            locked = list(InteractionBacklog.objects.select_for_update(nowait=True).filter(interaction_id__in=ids)
                          .values_list("interaction_id", flat=True))
        still_deriving = not worker.done()
        assert worker.result() == len(TALK)
    assert still_deriving and sorted(locked) == sorted(ids)
    assert InteractionIndex.objects.filter(interaction_id__in=ids).count() == len(TALK)


def _worker(ids: list[int], llm_url: str, tmp_path: Path) -> subprocess.Popen:
    """A worker process of its own: the pipeline over `ids`, as the Celery task runs it."""
    env = {**os.environ, "DATABASE_URL": database_url(), "DJANGO_SETTINGS_MODULE": "mnemo.settings",
           "MNEMO_LLM_URL": llm_url, "MNEMO_LLM_MODEL": "test-model", "MNEMO_LLM_RETRIES": "0",
           "MNEMO_LLM_TIMEOUT": "120", "MNEMO_CLAIM_LEASE_SECONDS": "3", "MNEMO_VAR_DIR": str(tmp_path)}
    code = ("import django, sys; django.setup(); from conversations.services import interactions_index; "
            f"print(interactions_index(interaction_ids={ids!r}))")
    return subprocess.Popen([sys.executable, "-c", code], cwd=REPO, env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)


@pytest.mark.django_db(transaction=True)
def test_a_worker_killed_mid_derivation_loses_and_duplicates_nothing(workspace, tmp_path):
    ids = log(workspace, TALK)
    server = OpenAIServer()
    try:
        server.chat(json.dumps({"memories": []}), delay=600)  # the first worker never gets an answer
        first = _worker(ids, server.url, tmp_path)
        assert wait_for(lambda: server.requests or first.poll() is not None, timeout=120), "no LLM call"
        assert first.poll() is None, first.stderr.read()
        # Inside prepare: the rows are claimed, nothing is written yet.
        assert set(InteractionBacklog.objects.exclude(claimed_by="").values_list("interaction_id", flat=True)) == set(ids)
        assert not InteractionIndex.objects.exists() and not Memory.objects.exists()
        os.kill(first.pid, signal.SIGKILL)
        first.wait(timeout=30)

        # Another worker takes the rows once the dead one's lease has run out (3 s here).
        assert wait_for(lambda: not InteractionBacklog.objects.filter(lease_until__gt=dj_timezone.now()).exists(),
                        timeout=30)
        inferred = {"interaction_id": ids[0], "type": "fact", "text": "Caroline hikes in the mountains.",
                    "confidence": 0.8, "quote": "I love hiking in the mountains."}
        server.chat(json.dumps({"memories": [inferred]}))
        second = _worker(ids, server.url, tmp_path)
        out, err = second.communicate(timeout=180)
        assert second.returncode == 0, err
        assert out.strip() == str(len(TALK))
    finally:
        server.close()

    assert not InteractionBacklog.objects.exists()
    assert Counter(InteractionIndex.objects.values_list("interaction_id", flat=True)) == Counter({pk: 1 for pk in ids})
    assert interactions_index(interaction_ids=ids) == 0
    texts = Counter(Memory.objects.values_list("text", flat=True))
    assert texts and max(texts.values()) == 1, texts
    assert Memory.objects.filter(certainty="inferred", text=inferred["text"]).count() == 1
    evidence = Counter(MemoryEvidence.objects.values_list("memory_id", "interaction_id"))
    assert max(evidence.values()) == 1
    items = Counter(ReviewItem.objects.values_list("kind", "target_id"))
    assert items and max(items.values()) == 1, items


def _erase_caroline(interactions):
    # Another request erases a sender while the worker derives (no lock stops it now).
    entity_erase(entity=Entity.objects.get(identities__channel_id="caroline"))


ERASER = Layer(name="eraser", prepare=_erase_caroline)


@pytest.mark.django_db(transaction=True)
def test_an_erasure_during_prepare_leaves_nothing_derived_from_the_erased_messages(workspace, settings):
    settings.MNEMO_LAYERS = [*DEFAULT_LAYERS, f"{HERE}.ERASER"]
    erased = log(workspace, TALK)
    kept = log(workspace, TALK, sender="ada")
    assert interactions_index(interaction_ids=erased + kept) == len(kept)
    assert set(InteractionIndex.objects.values_list("interaction_id", flat=True)) == set(kept)
    assert not MemoryEvidence.objects.filter(interaction_id__in=erased).exists()
    assert MemoryEvidence.objects.filter(interaction_id__in=kept).exists()
    assert not Memory.objects.filter(text__startswith="Caroline").exists()
    assert not InteractionBacklog.objects.exists()
