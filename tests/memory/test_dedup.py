"""Dedup that stays bounded as a workspace grows (issue 17): a near-duplicate check compares
a few candidates — every open memory of the type only while there are few, otherwise the
nearest the HNSW index offers — and a candidate restating an active episode reinforces it
instead of waiting in the review queue."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import numpy as np
import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from conversations.services import InteractionItem, interactions_log
from memory.models import Memory
from memory.services import Draft, memory_store
from memory.services import memories as memories_module
from memory.services.memories import EPISODE_RULE, Evidence, near_duplicate
from review.models import ReviewItem

pytestmark = pytest.mark.django_db

T0 = datetime(2023, 5, 8, 13, 56, tzinfo=timezone.utc)


def unit(seed: int, near: np.ndarray | None = None, noise: float = 0.0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    v = near + noise * rng.standard_normal(384) if near is not None else rng.standard_normal(384)
    return (v / np.linalg.norm(v)).astype(np.float32)


def fact(text: str) -> Draft:
    return Draft(type="fact", text=text, certainty="extracted", confidence=0.95, source="rule:test", rule="test")


def store_facts(workspace, count: int) -> list[Memory]:
    return [memory_store(workspace_id=workspace.pk, draft=fact(f"Fact number {i} about the garden."),
                         embedding=unit(i)).memory for i in range(count)]


def _hnsw_statements(queries) -> list[str]:
    return [q["sql"] for q in queries if "ORDER BY m.embedding <=>" in q["sql"]]


def test_a_near_duplicate_reinforces_in_a_small_workspace_compared_exactly(workspace):
    stored = store_facts(workspace, 5)
    with CaptureQueriesContext(connection) as queries:
        again = memory_store(workspace_id=workspace.pk, draft=fact("The garden, fact number three, again."),
                             embedding=unit(3, near=unit(3), noise=0.01))
    assert again.outcome == "reinforced" and again.memory.pk == stored[3].pk
    assert Memory.objects.get(pk=stored[3].pk).reinforcement_count == 1
    # Five rows: compared one by one, never through the graph.
    assert not _hnsw_statements(queries.captured_queries)
    assert any("MATERIALIZED" in q["sql"] for q in queries.captured_queries)


def test_above_the_exact_limit_only_the_index_neighbours_are_compared(workspace, monkeypatch):
    stored = store_facts(workspace, 8)
    monkeypatch.setattr(memories_module, "NEAR_EXACT_MAX_ROWS", 3)
    with CaptureQueriesContext(connection) as queries:
        found = near_duplicate(workspace_id=workspace.pk, type_="fact", embedding=unit(6, near=unit(6), noise=0.01))
        different = near_duplicate(workspace_id=workspace.pk, type_="fact", embedding=unit(99))
    assert found.pk == stored[6].pk and different is None
    counts = [q["sql"] for q in queries.captured_queries if "count(*)" in q["sql"]]
    assert counts and all("LIMIT 4" in sql for sql in counts)  # counting stops past the limit
    [statement, _] = _hnsw_statements(queries.captured_queries)
    assert f"LIMIT {memories_module.NEAR_CANDIDATES}" in statement
    assert not any("MATERIALIZED" in q["sql"] for q in queries.captured_queries)
    with connection.cursor() as cursor:
        # On eight rows the planner rightly prefers sorting them all; forbidden to sort (as
        # sorting every open memory is what a large workspace must not do), it answers the
        # statement from the HNSW graph: ordered by distance, stopped by the LIMIT.
        cursor.execute("SET LOCAL enable_sort = off")
        cursor.execute("EXPLAIN " + statement)
        plan = "\n".join(row[0] for row in cursor.fetchall())
    assert "Limit" in plan and "memory_embedding_hnsw" in plan, plan


def test_the_check_skips_itself_and_other_types(workspace, monkeypatch):
    [memory] = store_facts(workspace, 1)
    for limit in (2_000, 0):  # exact, then through the index
        monkeypatch.setattr(memories_module, "NEAR_EXACT_MAX_ROWS", limit)
        assert near_duplicate(workspace_id=workspace.pk, type_="fact", embedding=unit(0)).pk == memory.pk
        assert near_duplicate(workspace_id=workspace.pk, type_="fact", embedding=unit(0), exclude_id=memory.pk) is None
        assert near_duplicate(workspace_id=workspace.pk, type_="preference", embedding=unit(0)) is None


def test_a_neighbour_stating_other_numbers_or_the_opposite_is_skipped_for_the_next(workspace, monkeypatch):
    near = unit(7)
    other = memory_store(workspace_id=workspace.pk, draft=fact("The pump runs at 4 bar."), embedding=near).memory
    same = memory_store(workspace_id=workspace.pk, draft=fact("Pump pressure is four bar."),
                        embedding=unit(8, near=near, noise=0.02), dedup_near=False).memory
    negated = memory_store(workspace_id=workspace.pk, draft=fact("The pump does not run at 4 bar."),
                           embedding=unit(9, near=near, noise=0.01), dedup_near=False).memory
    for limit in (2_000, 0):  # exact, then through the index
        monkeypatch.setattr(memories_module, "NEAR_EXACT_MAX_ROWS", limit)
        # Nearest is `other` (same vector), but it says 4 bar where the text says 5 bar.
        assert near_duplicate(workspace_id=workspace.pk, type_="fact", embedding=near, text="The pump runs at 5 bar.") is None
        assert near_duplicate(workspace_id=workspace.pk, type_="fact", embedding=near,
                              text="The pump runs at 4 bar!").pk == other.pk
        # Excluding `other`, the closest left is the negated one: skipped for `same`.
        assert near_duplicate(workspace_id=workspace.pk, type_="fact", embedding=near, exclude_id=other.pk,
                              text="The pump runs at four bar.").pk == same.pk
        assert near_duplicate(workspace_id=workspace.pk, type_="fact", embedding=near, exclude_id=other.pk,
                              text="The pump never runs at 4 bar.").pk == negated.pk


def test_values_differ_reads_numbers_and_negation():
    from memory.rules import values_differ

    assert values_differ("listens on port 9991", "listens on port 9992")
    assert values_differ("Ana has two cats.", "Ana has three cats.")
    assert values_differ("Ana likes jazz.", "Ana doesn't like jazz.")
    assert values_differ("Ana likes jazz.", "Ana doesn’t like jazz.")  # a typographic apostrophe
    assert not values_differ("Fact number 3 about the garden.", "The garden, fact number three, again.")
    assert not values_differ("Ana never eats meat.", "Ana does not eat meat.")
    assert not values_differ("Pressure is 1,5 bar.", "Pressure is 1.5 bar.")
    assert not values_differ("Deploys go out on Fridays.", "Deploys go out every Friday.")


# --- restatements of an active episode ------------------------------------------------------

def log(workspace, *lines, thread="t1") -> list[int]:
    items = [InteractionItem(channel="chat", channel_id="caroline", sender_name="Caroline", content=line,
                             thread=thread, occurred_at=T0 + timedelta(seconds=10 * i)) for i, line in enumerate(lines)]
    return [r.id for r in interactions_log(workspace=workspace, items=items)]


def conversation_of(interaction_id: int) -> int:
    from conversations.models import Interaction

    return Interaction.objects.get(pk=interaction_id).conversation_id


LINES = ("Hi Mel!", "I went to the LGBTQ support group yesterday.", "It was really powerful.")


def episode_draft(ids: list[int]) -> Draft:
    return Draft(type="episodic", text="On 8 May 2023 Caroline went to the LGBTQ support group the day before.",
                 certainty="extracted", confidence=0.9, source=f"rule:{EPISODE_RULE}", rule=EPISODE_RULE,
                 conversation_id=conversation_of(ids[0]),
                 evidence=[Evidence(i, LINES[n]) for n, i in enumerate(ids) if n])


def event_draft(interaction_id: int, text: str = "Caroline went to the LGBTQ support group on 7 May 2023.") -> Draft:
    return Draft(type="episodic", text=text, certainty="extracted", confidence=0.75, source="rule:episodic.event",
                 rule="episodic.event", conversation_id=conversation_of(interaction_id),
                 evidence=[Evidence(interaction_id, "I went to the LGBTQ support group yesterday.")])


def pending_items(workspace) -> list[ReviewItem]:
    return list(ReviewItem.objects.filter(workspace=workspace, status="pending"))


def test_an_event_the_active_episode_already_tells_reinforces_it_instead_of_being_queued(workspace):
    ids = log(workspace, *LINES)
    episode = memory_store(workspace_id=workspace.pk, draft=episode_draft(ids)).memory
    assert episode.status == "active"
    stored = memory_store(workspace_id=workspace.pk, draft=event_draft(ids[1]))
    assert stored.outcome == "reinforced" and stored.memory.pk == episode.pk
    episode.refresh_from_db()
    assert episode.reinforcement_count == 1 and episode.last_confirmed_at is not None
    assert not Memory.objects.filter(rule="episodic.event").exists()
    assert pending_items(workspace) == []


def test_a_waiting_event_is_folded_into_the_episode_stored_after_it(workspace):
    ids = log(workspace, *LINES)
    event = memory_store(workspace_id=workspace.pk, draft=event_draft(ids[1])).memory
    assert event.status == "candidate" and [i.target_id for i in pending_items(workspace)] == [event.pk]
    episode = memory_store(workspace_id=workspace.pk, draft=episode_draft(ids)).memory
    event.refresh_from_db()
    episode.refresh_from_db()
    assert event.status == "archived" and event.duplicate_of_id == episode.pk
    assert episode.reinforcement_count == 1 and episode.last_confirmed_at is not None
    assert set(episode.evidence.values_list("interaction_id", flat=True)) == set(ids[1:])
    assert pending_items(workspace) == []
    assert ReviewItem.objects.get(target_id=event.pk, kind="memory").status == "withdrawn"


def test_an_event_from_a_turn_the_episode_does_not_cite_is_still_queued(workspace):
    ids = log(workspace, *LINES, "We also adopted a puppy last week!")
    memory_store(workspace_id=workspace.pk, draft=episode_draft(ids[:3]))
    outside = memory_store(workspace_id=workspace.pk, draft=event_draft(
        ids[3], "Caroline adopted a puppy in the week of 1 May 2023."))
    greeting = memory_store(workspace_id=workspace.pk, draft=event_draft(ids[0], "Caroline greeted Mel on 8 May 2023."))
    assert outside.outcome == greeting.outcome == "created"
    assert {i.target_id for i in pending_items(workspace)} == {outside.memory.pk, greeting.memory.pk}


def test_an_episode_of_another_conversation_is_no_restatement(workspace):
    ids = log(workspace, *LINES)
    other = log(workspace, *LINES, thread="t2")
    assert conversation_of(other[0]) != conversation_of(ids[0])
    memory_store(workspace_id=workspace.pk, draft=episode_draft(other))
    event = memory_store(workspace_id=workspace.pk, draft=event_draft(ids[1]))
    assert event.outcome == "created" and event.memory.status == "candidate"
