"""The dedup scan (issue 19 part 3): near-duplicate active memories found through the index,
a slice per run past a cursor, proposed as `duplicate` items in the review queue; approve
merges the pair, reject remembers "not duplicates"; every run leaves a JobRun row."""

from __future__ import annotations

import numpy as np
import pytest

from core.models import AuditEvent, JobRun
from memory import tasks
from memory.models import DuplicatePair, Memory, ScanCursor
from memory.services import Draft, memories_dedup_scan, memory_store
from review.models import ReviewItem
from tests.helpers import assert_error

pytestmark = pytest.mark.django_db


def unit(seed: int, near: np.ndarray | None = None, noise: float = 0.0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    v = near + noise * rng.standard_normal(384) if near is not None else rng.standard_normal(384)
    return (v / np.linalg.norm(v)).astype(np.float32)


def active(workspace, text: str, vector, type_: str = "fact") -> Memory:
    """An active memory with its embedding, stored past the write-time fold (as one the
    index missed, or remembered before its twin was embedded, would be)."""
    memory = memory_store(workspace_id=workspace.pk, draft=Draft(type=type_, text=text, certainty="verbatim"),
                          dedup_near=False).memory
    Memory.objects.filter(pk=memory.pk).update(embedding=vector)
    return Memory.objects.get(pk=memory.pk)


@pytest.fixture
def pair(workspace):
    base = unit(1)
    # Cosine ≈ 0.87 apart: below the fold-on-write threshold (0.9), above the scan's (0.85).
    first = active(workspace, "Ada's favourite editor is Helix.", base)
    second = active(workspace, "Helix is the editor Ada likes best.", unit(2, near=base, noise=0.03))
    others = [active(workspace, f"Unrelated fact number {i}.", unit(100 + i)) for i in range(3)]
    return first, second, others


def _similarity(a: Memory, b: Memory) -> float:
    return float(np.dot(a.embedding, b.embedding))


def test_a_near_duplicate_pair_is_proposed_once_in_the_queue(workspace, pair):
    first, second, _ = pair
    assert 0.85 <= _similarity(first, second) < 0.9
    counts = memories_dedup_scan(batch=100)
    assert counts["scanned"] == 5 and counts["proposed"] == 1 and counts["wrapped"]
    found = DuplicatePair.objects.get()
    assert (found.keep_id, found.drop_id, found.status) == (first.pk, second.pk, "pending")
    item = ReviewItem.objects.get(kind="duplicate")
    assert item.target_id == found.pk and item.status == "pending" and item.rule == "dedup.scan"
    assert item.proposal["keep_id"] == first.pk and item.proposal["drop_id"] == second.pk
    # Idempotent: the next lap finds the pair again and proposes nothing new.
    assert memories_dedup_scan(batch=100)["proposed"] == 0
    assert ReviewItem.objects.filter(kind="duplicate").count() == 1 and DuplicatePair.objects.count() == 1


def test_approving_merges_the_newer_into_the_older(api, workspace, pair):
    first, second, _ = pair
    memories_dedup_scan(batch=100)
    item = ReviewItem.objects.get(kind="duplicate")
    body = api.post(f"/candidates/{item.pk}/promote", {"note": "same thing"}).json()
    assert body["status"] == "approved" and body["result"]["memory"] == first.pk
    second.refresh_from_db()
    first.refresh_from_db()
    assert second.status == "archived" and second.duplicate_of_id == first.pk
    assert first.status == "active" and first.reinforcement_count == 1
    assert DuplicatePair.objects.get().status == "merged"
    assert AuditEvent.objects.filter(verb="memory.duplicate_merge").count() == 1


def test_not_duplicates_is_remembered_and_never_proposed_again(api, workspace, pair):
    memories_dedup_scan(batch=100)
    item = ReviewItem.objects.get(kind="duplicate")
    assert api.post(f"/candidates/{item.pk}/reject", {"note": "different claims"}).json()["status"] == "rejected"
    assert DuplicatePair.objects.get().status == "not_duplicates"
    memories_dedup_scan(batch=100)
    assert ReviewItem.objects.filter(kind="duplicate").count() == 1  # the rejected one, nothing new
    assert not ReviewItem.objects.filter(kind="duplicate", status="pending").exists()


def test_each_run_covers_the_next_slice_and_wraps_around(workspace, pair):
    first, second, others = pair
    counts = memories_dedup_scan(batch=2)
    assert counts["scanned"] == 2 and not counts["wrapped"]
    assert ScanCursor.objects.get(name="dedup").position == second.pk
    counts = memories_dedup_scan(batch=2)
    assert counts["from_id"] == second.pk and counts["scanned"] == 2
    counts = memories_dedup_scan(batch=2)
    assert counts["scanned"] == 1 and counts["wrapped"]
    assert ScanCursor.objects.get(name="dedup").position == 0


def test_episodes_other_types_and_other_workspaces_are_not_paired(workspace, other_workspace):
    base = unit(7)
    active(workspace, "We hiked the ridge on Sunday.", base, type_="episodic")
    active(workspace, "We hiked the ridge on Sunday morning.", unit(8, near=base, noise=0.01), type_="episodic")
    active(workspace, "Ada prefers the ridge trail.", unit(9, near=base, noise=0.01), type_="preference")
    active(other_workspace, "Ada prefers the ridge trail, always.", unit(10, near=base, noise=0.01), type_="preference")
    assert memories_dedup_scan(batch=100)["proposed"] == 0


def test_a_run_stops_at_its_proposal_cap_and_the_next_goes_on_from_there(workspace):
    bases = [unit(200 + i) for i in range(3)]
    twins = [(active(workspace, f"Claim {i}, said once.", base),
              active(workspace, f"Claim {i}, said again.", unit(300 + i, near=base, noise=0.01)))
             for i, base in enumerate(bases)]
    counts = memories_dedup_scan(batch=100, max_proposals=1)
    assert counts["proposed"] == 1 and counts["capped"] and not counts["wrapped"]
    # Stopped at the first memory that reached the cap: its twin's pair is already known.
    assert ScanCursor.objects.get(name="dedup").position == twins[0][0].pk
    assert DuplicatePair.objects.count() == 1 and ReviewItem.objects.filter(kind="duplicate").count() == 1
    second = memories_dedup_scan(batch=100, max_proposals=1)
    assert second["from_id"] == twins[0][0].pk and second["proposed"] == 1
    memories_dedup_scan(batch=100, max_proposals=10)
    assert DuplicatePair.objects.count() == 3  # every pair proposed once, over the runs


def test_a_workspace_being_imported_is_left_alone(workspace, pair):
    from core.models import ImportProgress

    ImportProgress.objects.create(workspace=workspace, archive_digest="0" * 64)
    counts = memories_dedup_scan(batch=100)
    assert counts["scanned"] == 0 and counts["proposed"] == 0 and not DuplicatePair.objects.exists()


def test_a_merge_withdraws_the_other_pending_pairs_of_the_archived_memory(api, workspace):
    base = unit(11)
    a = active(workspace, "The office is on the third floor.", base)
    b = active(workspace, "Our office sits on floor three.", unit(12, near=base, noise=0.02))
    c = active(workspace, "The office: third floor.", unit(13, near=base, noise=0.02))
    memories_dedup_scan(batch=100)
    assert DuplicatePair.objects.count() == 3
    item = ReviewItem.objects.get(kind="duplicate", target_id=DuplicatePair.objects.get(keep=a, drop=b).pk)
    api.post(f"/candidates/{item.pk}/promote", {})
    # b is archived: its pair with c has nothing left to decide; a with c still waits.
    assert DuplicatePair.objects.get(keep=b, drop=c).status == "gone"
    assert ReviewItem.objects.get(target_id=DuplicatePair.objects.get(keep=b, drop=c).pk).status == "withdrawn"
    assert DuplicatePair.objects.get(keep=a, drop=c).status == "pending"


def test_an_outsider_cannot_see_or_decide_a_duplicate(outsider_api, workspace, pair):
    memories_dedup_scan(batch=100)
    item = ReviewItem.objects.get(kind="duplicate")
    assert_error(outsider_api.get(f"/candidates/{item.pk}"), 404)
    assert_error(outsider_api.post(f"/candidates/{item.pk}/promote", {}), 404)
    assert_error(outsider_api.post(f"/candidates/{item.pk}/reject", {}), 404)
    assert DuplicatePair.objects.get().status == "pending"


def test_a_merge_into_a_memory_of_another_workspace_is_refused(api, other_workspace, workspace, pair):
    stranger = active(other_workspace, "Ada's favourite editor is Helix, they say.", unit(1))
    memories_dedup_scan(batch=100)
    item = ReviewItem.objects.get(kind="duplicate")
    assert_error(api.post(f"/candidates/{item.pk}/promote", {"merge_into": stranger.pk}), 404)
    assert DuplicatePair.objects.get().status == "pending"
    assert Memory.objects.filter(workspace=workspace, status="archived").count() == 0


def test_the_queue_shows_the_kept_memory_as_the_similar_item(client, teammate, workspace, pair):
    first, _, _ = pair
    memories_dedup_scan(batch=100)
    item = ReviewItem.objects.get(kind="duplicate")
    client.force_login(teammate)
    page = client.get("/w/acme/review/").content.decode()
    assert "Duplicates" in page and "Not duplicates" in page and "Merge them" in page
    similar = client.get(f"/w/acme/review/{item.pk}/similar/", headers={"HX-Request": "true"}).content.decode()
    assert f"#{first.pk}</a>" in similar and "One memory stays" in similar


@pytest.mark.django_db(transaction=True)  # job_run writes outside any transaction
def test_the_task_records_its_run(workspace, pair):
    counts = tasks.dedup_scan()
    run = JobRun.objects.get(name="memory.dedup_scan")
    assert run.status == "ok" and run.finished_at is not None
    assert run.counts["scanned"] == 5 and run.counts["proposed"] == 1 == counts["proposed"]


@pytest.mark.django_db(transaction=True)
def test_a_failing_run_is_recorded_as_failed(workspace, pair, monkeypatch):
    from memory.services import dedup

    def broken(*args, **kwargs):
        raise RuntimeError("index unavailable")

    monkeypatch.setattr(dedup, "_neighbours", broken)
    with pytest.raises(RuntimeError):
        tasks.dedup_scan()
    run = JobRun.objects.get(name="memory.dedup_scan")
    assert run.status == "failed" and "index unavailable" in run.error
    assert not DuplicatePair.objects.exists()
