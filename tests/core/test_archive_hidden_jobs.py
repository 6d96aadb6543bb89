"""A workspace an archive import is loading (core.models.ImportProgress) is left alone by
the background jobs until its last batch commits, like decay, consolidation and the dedup
scan: the embed-pending jobs (memories, entities, gaps, the imported log's
conversations.index_missing) and learning from failures (failed decisions and episodes:
memory.learn_from_failures; failed outcomes: gaps.scan_failures). Another workspace's work
goes on meanwhile, and the imported one's after the import ends; the failures in its
imported audit log are history its source learned from, never learned again."""

from __future__ import annotations

from datetime import datetime, timezone

import pytest

from conversations.models import Interaction, InteractionBacklog, InteractionIndex
from conversations.services import InteractionItem, interactions_index_missing, interactions_log
from core.models import ImportProgress
from core.services import SYSTEM
from entities import decisions
from entities.models import Entity
from entities.services import entities_embed_all, entity_create
from gaps import services as gap_services
from gaps.models import CapabilityGap
from memory.models import Memory
from memory.services import censors_learn_from_decisions, episodes_learn, memories_embed
from tests.memory.test_learning import learned, unit

pytestmark = pytest.mark.django_db

T0 = datetime(2026, 11, 2, 9, 0, tzinfo=timezone.utc)


def unembedded(workspace) -> dict[str, int]:
    return {"memories": Memory.objects.filter(workspace=workspace, embedding__isnull=True).count(),
            "entities": Entity.objects.filter(workspace=workspace, embedding__isnull=True).count(),
            "gaps": CapabilityGap.objects.filter(workspace=workspace, embedding__isnull=True).count(),
            "interactions": Interaction.objects.filter(workspace=workspace).exclude(
                pk__in=InteractionIndex.objects.values("interaction_id")).count()}


def make_work(workspace, api_client) -> None:
    """One of each thing waiting for an embedding, as an import leaves them."""
    assert api_client.post("/memories", {"type": "fact", "text": f"{workspace.name} uses Postgres."}
                           ).status_code == 201
    entity_create(workspace=workspace, kind="project", name=f"{workspace.name} billing", actor=SYSTEM)
    assert api_client.post("/gaps", {"description": f"Export {workspace.name} invoices as PDF"}).status_code == 201
    [logged] = interactions_log(workspace=workspace, items=[InteractionItem(
        channel="chat", channel_id="ana", sender_name="Ana", content="Hello there", thread="t", occurred_at=T0)])
    # Imported rows: derived already (left the backlog), not embedded (another model's vectors).
    InteractionBacklog.objects.filter(interaction_id=logged.id).delete()


def run_embed_jobs(workspace_ids) -> None:
    while memories_embed():
        pass
    entities_embed_all()
    while gap_services.gaps_embed_pending():
        pass
    for workspace_id in workspace_ids:
        while interactions_index_missing(workspace_id=workspace_id):
            pass


def test_the_embed_pending_jobs_leave_a_workspace_being_imported_alone(workspace, other_workspace, api, outsider_api):
    make_work(workspace, api)
    make_work(other_workspace, outsider_api)
    waiting = unembedded(workspace)
    assert all(waiting.values()), waiting
    progress = ImportProgress.objects.create(workspace=workspace, archive_digest="0" * 64)

    run_embed_jobs([workspace.pk, other_workspace.pk])

    assert unembedded(workspace) == waiting
    assert not any(unembedded(other_workspace).values()), unembedded(other_workspace)
    progress.delete()  # the import's last transaction
    run_embed_jobs([workspace.pk])
    assert not any(unembedded(workspace).values()), unembedded(workspace)


def failed_decision(workspace, what: str) -> None:
    record = decisions.decision_record(workspace=workspace, description=what, confidence=0.8)
    decisions.decision_record_outcome(decision=record, outcome="failure", result="it broke")


def test_learning_from_failures_leaves_a_workspace_being_imported_alone(workspace, other_workspace, api):
    censors_learn_from_decisions()  # the first pass starts the cursors
    gap_services.gaps_scan_failures()
    # What the import writes: a failed episode, the source's failures in its audit log.
    response = api.post("/memories", {"type": "episodic", "text": "Deployed billing; it failed.", "outcome": "failure"})
    assert response.status_code == 201, response.json()
    episode = Memory.objects.get(pk=response.json()["memory"]["id"])
    Memory.objects.filter(pk=episode.pk).update(embedding=unit(1))  # as the worker would embed it
    progress = ImportProgress.objects.create(workspace=workspace, archive_digest="0" * 64)
    failed_decision(workspace, "Cache sessions in Redis")
    failed_decision(other_workspace, "Deploy on Fridays")

    counts = censors_learn_from_decisions()
    assert counts["events"] == 2 and counts["censors"] == 1  # read past, learned in the other one only
    assert episodes_learn()["episodes"] == 0
    assert gap_services.gaps_scan_failures() == 2
    assert [m.workspace_id for m in learned("decision")] == [other_workspace.pk]
    assert not CapabilityGap.objects.filter(workspace=workspace).exists()
    assert CapabilityGap.objects.filter(workspace=other_workspace, rule="gap.failed_decision").count() == 1
    episode.refresh_from_db()
    assert "learned" not in episode.metadata

    progress.delete()
    assert censors_learn_from_decisions()["events"] == 0  # history stays history
    assert episodes_learn()["episodes"] == 1  # the episode is learned from once the import ended
    episode.refresh_from_db()
    assert "learned" in episode.metadata
