"""Decay seen from the read side (issue 19 part 2): archived memories leave recall and packs
unless `include_archived` asks for them (never duplicates), and concept links decay in the
nightly job so recall expands queries through the decayed weights."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest

from context import concepts, services
from context.models import ConceptLink
from context.tasks import decay_concept_links
from core.models import JobRun
from memory.models import Memory
from tests.helpers import assert_error

pytestmark = pytest.mark.django_db

AS_OF = datetime(2026, 6, 1, tzinfo=timezone.utc)


def remember(api, text) -> int:
    response = api.post("/memories", {"text": text, "type": "fact"})
    assert response.status_code == 201, response.json()
    return response.json()["memory"]["id"]


def recalled(api, query, **extra) -> set[int]:
    response = api.post("/recall", {"query": query, "types": ["fact"], **extra})
    assert response.status_code == 200, response.json()
    return {r["id"] for r in response.json()["results"] if r["kind"] == "memory"}


def packed(api, query, **extra) -> set[int]:
    response = api.post("/context", {"query": query, **extra})
    assert response.status_code == 200, response.json()
    return {item["id"] for section in response.json()["sections"] for item in section["items"]
            if item["kind"] == "memory"}


def test_an_archived_memory_is_served_only_when_asked_for(api):
    kept = remember(api, "The harbour ferry leaves at seven.")
    faded = remember(api, "The harbour ferry used the north pier.")
    folded = remember(api, "The harbour ferry has a blue hull.")
    Memory.objects.filter(pk=faded).update(status="archived", archived_reason="decay", strength=0.01)
    Memory.objects.filter(pk=folded).update(status="archived", archived_reason="duplicate", duplicate_of=kept)
    assert recalled(api, "harbour ferry") == {kept}
    assert packed(api, "harbour ferry") == {kept}
    assert recalled(api, "harbour ferry", include_archived=True) == {kept, faded}
    assert packed(api, "harbour ferry", include_archived=True) == {kept, faded}
    statuses = {r["id"]: r["status"] for r in api.post("/recall", {"query": "harbour ferry", "include_archived": True})
                .json()["results"]}
    assert statuses[faded] == "archived"  # the agent can tell


@pytest.mark.parametrize("value", ["maybe", 2, None, [True]])
def test_include_archived_must_be_a_boolean(api, value):
    assert_error(api.post("/recall", {"query": "ferry", "include_archived": value}), 422)
    assert_error(api.post("/context", {"query": "ferry", "include_archived": value}), 422)


def test_the_job_decays_concept_links_once_a_night_and_recall_reads_the_decayed_weights(workspace, other_workspace):
    seen = AS_OF - timedelta(days=180)
    link = ConceptLink.objects.create(workspace=workspace, a="ferry", b="harbour", weight=0.5, count=5, updated_at=seen)
    fresh = ConceptLink.objects.create(workspace=workspace, a="ferry", b="pier", weight=0.5, count=5,
                                       updated_at=AS_OF - timedelta(days=1))
    theirs = ConceptLink.objects.create(workspace=other_workspace, a="ferry", b="harbour", weight=0.5, count=5,
                                        updated_at=seen)
    assert ("ferry", "harbour") in services._links(workspace.pk, frozenset({"ferry"}))
    counts = services.concept_links_decay(workspace_id=workspace.pk, as_of=AS_OF, half_life_days=90)
    assert counts["links_decayed"] == 2
    link.refresh_from_db()
    fresh.refresh_from_db()
    theirs.refresh_from_db()
    assert link.weight == pytest.approx(concepts.decay(0.5, days=180, half_life_days=90)) == pytest.approx(0.125)
    assert fresh.weight == pytest.approx(concepts.decay(0.5, days=1, half_life_days=90))
    assert theirs.weight == 0.5 and theirs.decayed_at is None
    # Under recall's 0.2 floor now: no longer expands a query; the fresh link still does.
    assert set(services._links(workspace.pk, frozenset({"ferry"}))) == {("ferry", "pier")}
    again = services.concept_links_decay(workspace_id=workspace.pk, as_of=AS_OF, half_life_days=90)
    link.refresh_from_db()
    assert again["links_decayed"] == 0 and link.weight == pytest.approx(0.125)


@pytest.mark.django_db(transaction=True)
def test_the_link_task_records_its_run(workspace):
    ConceptLink.objects.create(workspace=workspace, a="ferry", b="harbour", weight=0.5, count=5,
                               updated_at=datetime.now(timezone.utc) - timedelta(days=400))
    decay_concept_links.apply(kwargs={"workspace_id": workspace.pk, "trigger": "manual"})
    run = JobRun.objects.get()
    assert (run.name, run.status, run.trigger, run.counts["links_decayed"]) == \
        ("context.decay_concept_links", "ok", "manual", 1)
    assert ConceptLink.objects.get().weight < 0.05
