"""A whole LoCoMo conversation ingests through the batch API (skipped where the shared
benchmark data is absent)."""

from __future__ import annotations

import pytest

from bench import locomo_data
from conversations.models import Conversation, Interaction

pytestmark = [
    pytest.mark.django_db,
    pytest.mark.skipif(not locomo_data.available(), reason="../shared/bench/locomo is not here"),
]


def test_a_whole_locomo_conversation_ingests_through_the_batch_api(api):
    sample = locomo_data.load()[0]
    items = locomo_data.interactions(sample)
    assert len(items) > 300
    results = []
    for start in range(0, len(items), 200):  # several batches, as a real client would send
        body = api.post("/interactions/batch", {"items": items[start:start + 200]}).json()
        results += body["results"]
    assert [r["status"] for r in results] == ["created"] * len(items), [r for r in results if r["status"] != "created"][:3]
    assert Interaction.objects.count() == len(items)
    # Every session is days apart from the last: one conversation per session, all but the
    # newest closed when the next began.
    sessions = {item["external_id"].split(":")[0] for item in items}
    assert Conversation.objects.count() == len(sessions)
    assert Conversation.objects.filter(status="closed").count() == len(sessions) - 1
    by_session = {}
    for item, result in zip(items, results):
        by_session.setdefault(item["external_id"].split(":")[0], set()).add(result["conversation_id"])
    assert all(len(ids) == 1 for ids in by_session.values())
    for conversation in Conversation.objects.all():
        rows = Interaction.objects.filter(conversation=conversation)
        assert conversation.interaction_count == rows.count() > 0
        assert conversation.last_interaction_pk == max(rows.values_list("pk", flat=True))
    # Retried: everything is a duplicate with its original id.
    again = api.post("/interactions/batch", {"items": items}).json()
    assert again["duplicate"] == len(items) and [r["id"] for r in again["results"]] == [r["id"] for r in results]
