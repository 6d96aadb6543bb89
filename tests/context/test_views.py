"""The inspector page: a query builds the pack with its sections, score bars and dropped
items; the htmx partial; members only."""

from __future__ import annotations

from datetime import datetime, timezone

import pytest

from context.models import PackLog
from conversations.services import InteractionItem, interactions_index, interactions_log

pytestmark = pytest.mark.django_db


@pytest.fixture
def chat(workspace):
    results = interactions_log(workspace=workspace, items=[
        InteractionItem(channel="chat", channel_id=who, sender_name=who, content=text, thread="t",
                        occurred_at=datetime(2023, 5, 8, 14, i, tzinfo=timezone.utc))
        for i, (who, text) in enumerate([("Caroline", "I went to the support group yesterday."),
                                         ("Melanie", "I painted a lake sunrise."), ("Caroline", "I love hiking."),
                                         *[("Melanie", f"Support group note {n}: we talked about families, books, "
                                                       "camping trips and the long road to acceptance together.")
                                           for n in range(6)]])])
    interactions_index(interaction_ids=[r.id for r in results])


def test_the_inspector_shows_sections_bars_and_drops(client, viewer, chat):
    client.force_login(viewer)
    html = client.get("/w/acme/inspector/", {"q": "What did Caroline do at the support group?", "budget": 100}).content.decode()
    assert "Retrieval" in html and 'class="bars"' in html and "similarity" in html
    assert "dropped" in html and "support group" in html
    pack = PackLog.objects.get()
    assert pack.actor_label == "user:vera" or pack.actor_label.startswith("user:")
    assert str(pack.pk) in html


def test_the_partial_and_errors(client, viewer, chat):
    client.force_login(viewer)
    partial = client.get("/w/acme/inspector/", {"q": "hiking"}, headers={"HX-Request": "true"}).content.decode()
    assert partial.lstrip().startswith('<div id="pack">') and "hiking" in partial
    bad = client.get("/w/acme/inspector/", {"q": "hiking", "budget": 5}).content.decode()
    assert "budget lies between" in bad
    assert "not found" in client.get("/w/acme/inspector/", {"q": "hiking", "entity": 999999}).content.decode()
    assert "Recent packs" in client.get("/w/acme/inspector/").content.decode()


def test_outsiders_get_404(client, outsider, chat):
    client.force_login(outsider)
    assert client.get("/w/acme/inspector/", {"q": "hiking"}).status_code == 404
    assert not PackLog.objects.exists()
