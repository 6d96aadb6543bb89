"""The served packs log: every pack served, newest first, filtered by who was served and
by the query; one pack as served (sections, dropped items and why, warnings, text); replay
through the inspector now or as of then; members only, outsiders 404, bad input no 500."""

from __future__ import annotations

import uuid
from datetime import datetime, timezone

import pytest

from context import services
from context.models import PackLog
from conversations.services import InteractionItem, interactions_index, interactions_log
from core.services import Actor
from entities.models import Entity

pytestmark = pytest.mark.django_db


@pytest.fixture
def packs(workspace, make_key):
    results = interactions_log(workspace=workspace, items=[
        InteractionItem(channel="chat", channel_id="caroline", sender_name="Caroline", content=text, thread="t",
                        occurred_at=datetime(2023, 5, 8, 14, i, tzinfo=timezone.utc))
        for i, text in enumerate(["I went to the support group yesterday.", "I love hiking in the hills.",
                                  *[f"Support group note {n}: families, books, camping trips and the long road "
                                    "to acceptance together." for n in range(6)]])])
    interactions_index(interaction_ids=[r.id for r in results])
    key, _ = make_key(workspace, name="ingest")
    key.agent = Entity.objects.create(workspace=workspace, kind="agent", name="triage-bot")
    key.save()
    by_agent = services.context_pack(services.PackRequest(query="What did Caroline do at the support group?",
                                                          workspace_id=workspace.pk, budget_tokens=120),
                                     actor=Actor.for_api_key(key))
    by_system = services.context_pack(services.PackRequest(query="hiking", workspace_id=workspace.pk),
                                      actor=Actor(label="user:someone"))
    return {"agent": by_agent, "system": by_system, "key": key}


def test_the_log_lists_packs_newest_first_with_who_was_served(client, viewer, packs):
    client.force_login(viewer)
    html = client.get("/w/acme/inspector/packs/").content.decode()
    assert html.index(f'id="pack-{packs["system"].pk}"') < html.index(f'id="pack-{packs["agent"].pk}"')
    assert "triage-bot" in html and "(key ingest)" in html
    assert f"{packs['agent'].tokens_used} / 120" in html


def test_filters_by_actor_and_query_combine(client, viewer, packs):
    client.force_login(viewer)
    actor = packs["agent"].actor_label
    by_actor = client.get("/w/acme/inspector/packs/", {"actor": actor}).content.decode()
    assert f'id="pack-{packs["agent"].pk}"' in by_actor and f'id="pack-{packs["system"].pk}"' not in by_actor
    none = client.get("/w/acme/inspector/packs/", {"actor": actor, "q": "hiking"}).content.decode()
    assert 'id="pack-' not in none and "clear the filters" in none
    partial = client.get("/w/acme/inspector/packs/", {"q": "hik"}, headers={"HX-Request": "true"}).content.decode()
    assert partial.lstrip().startswith('<div id="rows">') and f'id="pack-{packs["system"].pk}"' in partial


def test_a_pack_as_served_with_what_was_dropped_and_why(client, viewer, packs):
    client.force_login(viewer)
    pack = packs["agent"]
    html = client.get(f"/w/acme/inspector/packs/{pack.pk}/").content.decode()
    assert "What did Caroline do at the support group?" in html and "triage-bot" in html
    assert "Retrieval" in html and 'class="bars"' in html
    dropped = [d for s in pack.sections for d in s["dropped"]]
    assert dropped, "the fixture's budget is meant to drop something"
    assert "dropped</summary>" in html and '<span class="badge">budget</span>' in html
    assert f"?replay={pack.pk}&amp;when=then" in html


def test_replay_now_and_as_of_then(client, viewer, packs):
    client.force_login(viewer)
    original = packs["agent"]
    now = client.get("/w/acme/inspector/", {"replay": str(original.pk), "when": "now"}).content.decode()
    assert "Replay of" in now and "with what Mnemo knows now" in now
    replay = PackLog.objects.exclude(pk__in=[packs["agent"].pk, packs["system"].pk]).get()
    assert replay.query == original.query and replay.budget_tokens == 120 and replay.as_of is None
    then = client.get("/w/acme/inspector/", {"replay": str(original.pk), "when": "then"}).content.decode()
    assert "as of" in then
    assert PackLog.objects.filter(as_of=original.created_at, query=original.query).count() == 1


@pytest.mark.parametrize("query", [{"replay": "not-a-uuid"}, {"replay": str(uuid.uuid4())}, {"replay": "", "q": ""}])
def test_replaying_no_pack_is_said_not_a_500(client, viewer, packs, query):
    client.force_login(viewer)
    response = client.get("/w/acme/inspector/", query)
    assert response.status_code == 200
    if query["replay"]:
        assert "No such pack to replay" in response.content.decode()


def test_bad_parameters_never_500(client, viewer, packs):
    client.force_login(viewer)
    for query in ({"page": "x"}, {"page": "10**9"}, {"actor": "<b>nobody</b>"}, {"q": "x" * 5000}):
        assert client.get("/w/acme/inspector/packs/", query).status_code == 200
    assert client.get(f"/w/acme/inspector/packs/{uuid.uuid4()}/").status_code == 404
    assert client.get("/w/acme/inspector/packs/not-a-uuid/").status_code == 404


def test_outsiders_get_404_even_for_their_own_workspaces_url(client, outsider, packs):
    client.force_login(outsider)
    assert client.get("/w/acme/inspector/packs/").status_code == 404
    assert client.get(f"/w/acme/inspector/packs/{packs['agent'].pk}/").status_code == 404
    assert client.get(f"/w/globex/inspector/packs/{packs['agent'].pk}/").status_code == 404
    before = PackLog.objects.count()
    assert "No such pack" in client.get("/w/globex/inspector/", {"replay": str(packs["agent"].pk)}).content.decode()
    assert PackLog.objects.count() == before
