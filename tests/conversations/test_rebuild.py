"""Rebuilding a workspace's layers from its log (issue 19 part 5, conversations.rebuild):
a rebuild equals the first derivation and a second one changes nothing; people's
decisions hold (a rejected memory and relationship are not proposed again, an edit stays,
a merge stays); --layer touches only its layer; a `manage.py rebuild` killed -9 mid-way
finishes when run again, equal to an uninterrupted run; messages logged during a rebuild
wait and are derived once, after it; an erasure during a rebuild leaves nothing of the
erased; the admin API."""

from __future__ import annotations

import functools
import json
import os
import re
import signal
import subprocess
import sys
from datetime import datetime, timedelta, timezone
from pathlib import Path
from urllib.parse import quote

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from django.db import connection

from context.models import ConceptLink
from conversations import services as conversation_services
from conversations.models import (Conversation, ConversationSummary, Interaction, InteractionBacklog, InteractionIndex,
                                  InteractionKinds, RebuildJob)
from conversations.rebuild import rebuild_run, rebuild_start
from conversations.tasks import rebuild_resume_stale
from conversations.services import (
    InteractionItem,
    conversation_summarise,
    interactions_index,
    interactions_index_missing,
    interactions_log,
)
from conversations.summarise import summarise
from core.services import Actor
from entities.models import Entity, ProfileValue, Relationship
from entities.services import entity_erase, entity_merge
from memory.models import EpisodeCursor, Memory, MemoryStatus
from review.models import ReviewItem
from review.services import review_decide
from tests.helpers import wait_for
from tests.openai_server import OpenAIServer

# The rebuild commits batch by batch and records a JobRun outside any transaction.
pytestmark = pytest.mark.django_db(transaction=True)

T0 = datetime(2023, 5, 8, 13, 56, tzinfo=timezone.utc)
REPO = Path(__file__).resolve().parents[2]

CAROLINE = ["I love hiking in the mountains.", "I work at Acme Corp.", "I live in Berlin",
            "I prefer detailed explanations with examples", "we met for lunch today",
            "Yesterday I went to the LGBTQ support group and it was powerful.",
            "I'm planning to go camping next month with my kids."]
MEL = ["I work at Initech.", "My favourite food is ramen.", "I painted a sunrise last week.",
       "We decided to use PostgreSQL instead of MySQL.", "I moved to Lisbon in 2021.",
       "Never deploy on Fridays without a rollback plan."]


def log(workspace, lines, sender="caroline", channel="chat", start=0):
    items = [InteractionItem(channel=channel, channel_id=sender, sender_name=sender.split("@")[0].title(),
                             content=line, thread="t1", occurred_at=T0 + timedelta(minutes=start + i))
             for i, line in enumerate(lines)]
    return [r.id for r in interactions_log(workspace=workspace, items=items)]


def seed(workspace) -> list[int]:
    ids = []
    for round_ in range(2):
        ids += log(workspace, CAROLINE, start=20 * round_)
        ids += log(workspace, MEL, sender="mel", start=20 * round_ + 10)
    ids += log(workspace, ["I work at Acme Corp.", "I love hiking in the mountains."], sender="caroline@example.com",
               channel="email", start=100)
    while interactions_index(interaction_ids=ids, batch_size=8):
        pass
    return ids


def snapshot(workspace) -> dict:
    """The derived rows as a user sees them: ids of rows a rebuild re-creates left out."""
    memories = sorted(
        (m.type, m.text, m.status, m.certainty, m.rule, m.subject_id, m.reinforcement_count, m.conversation_id,
         tuple(sorted(m.evidence.values_list("interaction_id", flat=True))))
        for m in Memory.objects.filter(workspace=workspace))
    return {
        "memories": memories,
        "profile": sorted(ProfileValue.objects.filter(workspace=workspace).values_list(
            "entity_id", "key", "value", "status", "evidence_id")),
        "relationships": sorted(Relationship.objects.filter(workspace=workspace).values_list(
            "subject_id", "predicate", "object_id", "status", "evidence_id")),
        "review": sorted(ReviewItem.objects.filter(workspace=workspace).values_list("kind", "text", "status")),
        "concepts": sorted((a, b, n, round(w, 9)) for a, b, n, w in ConceptLink.objects.filter(
            workspace=workspace).values_list("a", "b", "count", "weight")),
        "indexed": sorted(InteractionIndex.objects.filter(workspace=workspace).values_list("interaction_id", flat=True)),
        "kinds": sorted(InteractionKinds.objects.filter(workspace=workspace).values_list("interaction_id", "kinds")),
        "episode_cursors": sorted(EpisodeCursor.objects.filter(conversation__workspace=workspace)
                                  .values_list("conversation_id", "last_interaction_id")),
    }


def rebuild(workspace, layers=None) -> RebuildJob:
    job = rebuild_start(workspace=workspace, layer_names=layers)
    return rebuild_run(job_id=job.pk, batch_size=8)


def test_a_rebuild_equals_the_first_derivation_and_a_second_changes_nothing(workspace):
    seed(workspace)
    first = snapshot(workspace)
    assert first["memories"] and first["profile"] and first["relationships"] and first["concepts"]
    job = rebuild(workspace)
    assert job.status == "ok" and job.phase == "done" and job.done == job.total == len(first["indexed"])
    assert job.report["forgotten"]["memories"] > 0 and job.report["forgotten"]["concept links"] > 0
    assert snapshot(workspace) == first
    rebuild(workspace)
    assert snapshot(workspace) == first


def _candidate(workspace, **filters) -> Memory:
    return Memory.objects.filter(workspace=workspace, status=MemoryStatus.CANDIDATE, **filters).order_by("id").first()


def test_peoples_decisions_survive_a_rebuild(workspace, owner):
    seed(workspace)
    person = Actor.for_user(owner)
    rejected = _candidate(workspace)
    edited = _candidate(workspace, type="episodic") if _candidate(workspace, type="episodic") != rejected else None
    edited = edited or Memory.objects.filter(workspace=workspace, status=MemoryStatus.CANDIDATE).exclude(
        pk=rejected.pk).order_by("id").first()
    assert rejected and edited, "the seed must leave two memory candidates"
    review_decide(item=ReviewItem.objects.get(kind="memory", target_id=rejected.pk, status="pending"), actor=person,
                  action="reject")
    review_decide(item=ReviewItem.objects.get(kind="memory", target_id=edited.pk, status="pending"), actor=person,
                  action="approve", changes={"text": "Caroline and Mel had lunch together (edited by a person)."})
    edit = Memory.objects.get(supersedes=edited)
    assert edit.status == MemoryStatus.ACTIVE
    relationship = Relationship.objects.filter(workspace=workspace, status="candidate").order_by("id").first()
    review_decide(item=ReviewItem.objects.get(kind="relationship", target_id=relationship.pk, status="pending"),
                  actor=person, action="reject")
    chat = Entity.objects.get(workspace=workspace, identities__channel_id="caroline")
    email = Entity.objects.get(workspace=workspace, identities__channel_id="caroline@example.com")
    merge = entity_merge(source=email, target=chat, actor=person)
    decided = snapshot(workspace)

    rebuild(workspace)

    after = snapshot(workspace)
    # The rejected relationship's claim came from the first "I work at Acme Corp."; the same
    # words said again later are a claim of their own, still pending (it was before the
    # rebuild too, from the merged-in address), and now cite the first later message.
    for state in (after, decided):
        state["relationships"] = sorted(row[:4] for row in state.pop("relationships"))
    assert after == decided
    rejected.refresh_from_db()
    assert rejected.status == MemoryStatus.INVALID and rejected.decided_by == owner
    edit.refresh_from_db()
    assert edit.status == MemoryStatus.ACTIVE and edit.text.endswith("(edited by a person).")
    for text in (rejected.text, edited.text):
        assert not Memory.objects.filter(workspace=workspace, text=text,
                                         status__in=[MemoryStatus.CANDIDATE, MemoryStatus.ACTIVE]).exists()
        assert not ReviewItem.objects.filter(workspace=workspace, text=text, status="pending").exists()
    relationship.refresh_from_db()
    assert relationship.status == "invalid"
    assert Relationship.objects.filter(subject=relationship.subject, predicate=relationship.predicate,
                                       object=relationship.object, evidence=relationship.evidence).count() == 1
    email.refresh_from_db()
    assert email.merged_into_id == chat.pk and merge.pk
    assert not Interaction.objects.filter(entity=email).exists()


def test_memories_rebuilt_alone_equal_the_first_derivation_and_keep_the_embeddings(workspace):
    seed(workspace)
    before = snapshot(workspace)
    index_times = dict(InteractionIndex.objects.filter(workspace=workspace).values_list("interaction_id", "processed_at"))
    job = rebuild(workspace, layers=["memories"])
    assert job.report["forgotten"]["memories"] > 0 and "concept links" not in job.report["forgotten"]
    # Episodes are cut as the log is read again, though every message kept its embedding.
    assert snapshot(workspace) == before
    assert dict(InteractionIndex.objects.filter(workspace=workspace)
                .values_list("interaction_id", "processed_at")) == index_times


def test_a_layer_named_is_the_only_one_touched(workspace):
    seed(workspace)
    before = snapshot(workspace)
    memory_ids = set(Memory.objects.filter(workspace=workspace).values_list("pk", flat=True))
    index_times = dict(InteractionIndex.objects.filter(workspace=workspace).values_list("interaction_id", "processed_at"))
    ConceptLink.objects.filter(workspace=workspace).update(weight=0.5)
    job = rebuild(workspace, layers=["concepts"])
    assert job.layers == ["concepts"] and set(job.report["forgotten"]) == {"concept links"}
    assert snapshot(workspace) == before
    assert set(Memory.objects.filter(workspace=workspace).values_list("pk", flat=True)) == memory_ids
    assert dict(InteractionIndex.objects.filter(workspace=workspace)
                .values_list("interaction_id", "processed_at")) == index_times


def test_new_messages_wait_for_the_rebuild_and_are_derived_once_after_it(workspace):
    seed(workspace)
    job = rebuild_start(workspace=workspace, layer_names=None)
    late = log(workspace, ["I work at Globex."], sender="ada", start=200)
    # The worker leaves them waiting while the rebuild is unfinished.
    assert interactions_index(interaction_ids=late) == 0
    unembedded_left_alone = []

    def progress(done, total):
        # Mid-way most of the log has no embedding: the import's embed-missing task must not
        # embed it out of order.
        if not unembedded_left_alone:
            assert InteractionIndex.objects.filter(workspace=workspace).count() < total
            unembedded_left_alone.append(interactions_index_missing(workspace_id=workspace.pk) == 0)

    rebuild_run(job_id=job.pk, batch_size=8, progress=progress)
    assert unembedded_left_alone == [True]
    assert InteractionBacklog.objects.filter(interaction_id__in=late).exists()
    assert interactions_index(interaction_ids=late) == 1
    assert InteractionIndex.objects.filter(interaction_id__in=late).count() == 1
    assert ProfileValue.objects.filter(workspace=workspace, value="Globex").count() == 1


def test_an_erasure_during_a_rebuild_leaves_nothing_of_the_erased(workspace, settings):
    seed(workspace)
    mel = Entity.objects.get(workspace=workspace, identities__channel_id="mel")
    job = rebuild_start(workspace=workspace, layer_names=None)
    runs = iter(range(100))

    def progress(done, total):
        if next(runs) == 1:  # after the second batch, a person is erased
            entity_erase(entity=mel)

    job = rebuild_run(job_id=job.pk, batch_size=4, progress=progress)
    assert job.status == "ok"
    assert not Interaction.objects.filter(workspace=workspace, sender_name="Mel").exists()
    assert not Memory.objects.filter(workspace=workspace, text__icontains="Mel").exists()
    assert not Memory.objects.filter(workspace=workspace, text__icontains="ramen").exists()
    assert not ProfileValue.objects.filter(workspace=workspace, value="Initech").exists()
    assert Memory.objects.filter(workspace=workspace, text__icontains="Caroline").exists()


def test_a_second_rebuild_while_one_is_unfinished_is_refused(workspace):
    seed(workspace)
    first = rebuild_start(workspace=workspace, layer_names=None)
    with pytest.raises(CommandError, match="unfinished"):
        call_command("rebuild", workspace=workspace.slug, layers=["concepts"])
    RebuildJob.objects.filter(pk=first.pk).update(status="failed")
    call_command("rebuild", workspace=workspace.slug)
    first.refresh_from_db()
    assert first.status == "ok"


def test_the_command_dry_run_changes_nothing_and_bad_input_is_refused(workspace, capsys):
    seed(workspace)
    before = snapshot(workspace)
    call_command("rebuild", workspace=workspace.slug, dry_run=True)
    out = capsys.readouterr().out
    assert f"would rebuild interactions, entities, memories, concepts, gaps from {len(before['indexed'])} interactions" in out
    assert snapshot(workspace) == before and not RebuildJob.objects.exists()
    with pytest.raises(CommandError, match="no workspace"):
        call_command("rebuild", workspace="nope")
    with pytest.raises(CommandError, match="Unknown layer 'webhooks'"):
        call_command("rebuild", workspace=workspace.slug, layers=["webhooks"])
    assert not RebuildJob.objects.exists()


# --- summaries and identity links -------------------------------------------------------------

def summaries(workspace) -> dict[int, tuple]:
    return {s.pk: (s.conversation_id, s.text, s.source_first_id, s.source_last_id, s.source_count, s.revision,
                   s.supersedes_id) for s in ConversationSummary.objects.filter(workspace=workspace)}


def test_a_rebuild_supersedes_a_summary_only_where_the_summariser_now_differs(workspace, settings, monkeypatch):
    seed(workspace)
    summarised = [c.pk for c in Conversation.objects.filter(workspace=workspace)
                  if conversation_summarise(conversation_id=c.pk)]
    worker = summaries(workspace)
    assert len(summarised) >= 2 and len(worker) == len(summarised)

    job = rebuild(workspace)  # the same summariser: the same summaries, no new version
    assert job.report["rederived"] == {"conversation summaries": len(summarised), "summaries superseded": 0}
    assert summaries(workspace) == worker

    # The summariser's rules change (a shorter summary): every summary longer than that is
    # superseded by a new version of the same range; the old ones stay as they were.
    monkeypatch.setattr(conversation_services, "summarise", functools.partial(summarise, max_chars=120))
    job = rebuild(workspace, layers=["interactions"])
    after = summaries(workspace)
    assert {pk: row for pk, row in after.items() if pk in worker} == worker
    changed = 0
    for conversation in Conversation.objects.filter(pk__in=summarised).select_related("current_summary"):
        current = conversation.current_summary
        if current.revision == 0:
            assert len(current.text) <= 120  # short enough already: not superseded
            continue
        changed += 1
        old = ConversationSummary.objects.get(pk=current.supersedes_id)
        assert (current.revision, len(current.text) <= 120) == (old.revision + 1, True)
        assert (current.source_first_id, current.source_last_id, current.source_count) == (
            old.source_first_id, old.source_last_id, old.source_count)
    assert changed >= 1 and job.report["rederived"]["summaries superseded"] == changed == len(after) - len(worker)
    rebuild(workspace, layers=["interactions"])
    assert summaries(workspace) == after


def test_the_identity_link_scan_runs_for_the_workspace_after_a_rebuild(workspace, other_workspace, eager_tasks,
                                                                       monkeypatch):
    seed(workspace)
    scanned = []
    monkeypatch.setattr(conversation_services, "identity_links_suggest",
                        lambda *, workspace: scanned.append(workspace.pk) or 0)
    rebuild(workspace, layers=["concepts"])
    assert scanned == [workspace.pk]  # the periodic scan's task, for this workspace only


# --- kill -9 of a real `manage.py rebuild` -----------------------------------------------------

def _database_url() -> str:
    db = connection.settings_dict
    return f"postgres://{quote(db['USER'] or '', safe='')}@{quote(db['HOST'], safe='')}:{db['PORT']}/{db['NAME']}"


def _command(slug: str, llm_url: str, tmp_path: Path) -> subprocess.Popen:
    env = {**os.environ, "DATABASE_URL": _database_url(), "DJANGO_SETTINGS_MODULE": "mnemo.settings",
           "MNEMO_LLM_URL": llm_url, "MNEMO_LLM_MODEL": "test-model", "MNEMO_LLM_RETRIES": "0",
           "MNEMO_LLM_TIMEOUT": "120", "MNEMO_VAR_DIR": str(tmp_path)}
    return subprocess.Popen([sys.executable, "manage.py", "rebuild", "--workspace", slug, "--batch-size", "4"],
                            cwd=REPO, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def test_a_rebuild_killed_mid_way_finishes_when_run_again_equal_to_an_uninterrupted_one(workspace, tmp_path):
    seed(workspace)
    uninterrupted = snapshot(workspace)  # a rebuild equals the first derivation (above)
    server = OpenAIServer()
    try:
        # The LLM extractor finds nothing, so the rules alone decide; the fourth batch's call
        # never answers: the command is killed inside it, three batches written.
        for _ in range(3):
            server.chat(json.dumps({"memories": []}))
        server.chat(json.dumps({"memories": []}), delay=600)
        first = _command(workspace.slug, server.url, tmp_path)
        assert wait_for(lambda: len(server.requests) >= 4 or first.poll() is not None, timeout=180), "no 4th batch"
        assert first.poll() is None, first.stderr.read()
        os.kill(first.pid, signal.SIGKILL)
        first.wait(timeout=30)
        job = RebuildJob.objects.get(workspace=workspace)
        assert (job.status, job.phase, job.done) == ("running", "derive", 12) and job.total > job.done
        assert snapshot(workspace) != uninterrupted  # mid-way: a third of the log derived again

        for _ in range(100):
            server.chat(json.dumps({"memories": []}))
        second = _command(workspace.slug, server.url, tmp_path)
        out, err = second.communicate(timeout=300)
        assert second.returncode == 0, err
        assert f"Resuming rebuild {job.pk}" in err
        assert re.search(rf"\d+ / {job.total} interactions \(\d+%\)", err), err  # the progress line
        assert "Rebuilt" in out
    finally:
        server.close()
    job.refresh_from_db()
    assert (job.status, job.done) == ("ok", job.total)
    assert snapshot(workspace) == uninterrupted


# --- the admin API ---------------------------------------------------------------------------

def test_the_api_rebuilds_in_the_background_for_admins_only(workspace, api, admin_api, outsider_api, anon_api,
                                                             make_key, eager_tasks):
    seed(workspace)
    before = snapshot(workspace)
    _, read_only = make_key(workspace, scopes="read", name="reader")
    from tests.helpers import ApiClient

    for refused in (api, ApiClient(read_only)):
        assert refused.post("/rebuild").status_code == 403
    assert anon_api.post("/rebuild").status_code == 401
    assert not RebuildJob.objects.exists()

    started = admin_api.post("/rebuild", {"layers": ["concepts", "entities"]})
    assert started.status_code == 202, started.content
    job = started.json()
    assert job["layers"] == ["entities", "concepts"]  # pipeline order
    state = admin_api.get(f"/rebuild/{job['id']}").json()  # the eager task ran it already
    assert (state["status"], state["phase"], state["done"]) == ("ok", "done", state["total"])
    assert state["report"]["forgotten"]["profile values"] > 0
    assert snapshot(workspace) == before
    assert outsider_api.get(f"/rebuild/{job['id']}").status_code == 404
    assert api.get(f"/rebuild/{job['id']}").status_code == 403
    assert admin_api.get("/rebuild/00000000-0000-0000-0000-000000000000").status_code == 404
    assert admin_api.get("/rebuild/not-a-uuid").status_code == 422


@pytest.mark.parametrize("body", [{"layers": ["webhooks"]}, {"layers": []}, {"layers": "memories"}, {"layers": [7]},
                                  {"layers": ["x" * 41]}])
def test_a_bad_rebuild_request_is_refused_and_starts_nothing(workspace, admin_api, body):
    answer = admin_api.post("/rebuild", body)
    assert answer.status_code == 422, answer.content
    assert "error" in answer.json()
    assert not RebuildJob.objects.exists()


def test_a_rebuild_already_running_is_a_conflict(workspace, admin_api, other_workspace):
    running = rebuild_start(workspace=workspace, layer_names=None)
    RebuildJob.objects.filter(pk=running.pk).update(status="running")
    answer = admin_api.post("/rebuild", {})
    assert answer.status_code == 409 and answer.json()["error"]["details"]["rebuild_id"] == str(running.pk)
    # Another workspace's rebuild is no obstacle.
    assert rebuild_start(workspace=other_workspace, layer_names=None).workspace_id == other_workspace.pk


def test_beat_restarts_a_rebuild_left_running_and_leaves_a_failed_one_to_a_person(workspace, other_workspace,
                                                                                   eager_tasks):
    seed(workspace)
    before = snapshot(workspace)
    stalled = rebuild_start(workspace=workspace, layer_names=["concepts"])
    failed = rebuild_start(workspace=other_workspace, layer_names=["concepts"])
    RebuildJob.objects.filter(pk=failed.pk).update(status="failed", updated_at=T0)
    RebuildJob.objects.filter(pk=stalled.pk).update(status="running", updated_at=T0)
    fresh = RebuildJob.objects.get(pk=stalled.pk)
    assert rebuild_resume_stale() == [str(stalled.pk)]
    stalled.refresh_from_db()
    assert stalled.status == "ok" and snapshot(workspace) == before and fresh.status == "running"
    assert RebuildJob.objects.get(pk=failed.pk).status == "failed"
    assert rebuild_resume_stale() == []
