"""Issue 20 part 4, attribution: every write knows the API key that made it and, when the
key is bound to an agent entity, that agent. The review queue, the memory page and the
audit log say "proposed by triage-bot (key …)" with a link; recall and packs narrow to what
one agent logged (`agent`) or to messages whose metadata contains an object (`metadata`)."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest

from conversations.services import interactions_index
from core.models import ApiKey, AuditEvent
from entities.models import Entity
from entities.services import entity_merge, entity_split
from memory.models import Memory
from review.models import ReviewItem
from tests.helpers import ApiClient, assert_error

pytestmark = pytest.mark.django_db

T0 = datetime(2026, 11, 2, 9, 0, tzinfo=timezone.utc)


@pytest.fixture
def agents(workspace, make_key, admin_api):
    """Two agents' keys: triage-bot's bound to its entity, the nightly job's unbound."""
    bot = Entity.objects.create(workspace=workspace, kind="agent", name="triage-bot")
    triage_row, triage_key = make_key(workspace, scopes="read,write", name="triage")
    nightly_row, nightly_key = make_key(workspace, scopes="read,write", name="nightly")
    bound = admin_api.put(f"/keys/{triage_row.pk}/agent", {"agent": bot.pk})
    assert bound.status_code == 200, bound.json()
    assert bound.json()["agent_id"] == bot.pk
    return {"bot": bot, "triage": ApiClient(triage_key), "triage_row": triage_row, "nightly": ApiClient(nightly_key),
            "nightly_row": nightly_row}


def log(client, content, *, thread, run, at=T0, direction="inbound"):
    response = client.post("/interactions/batch", {"items": [{
        "channel": "slack", "channel_id": "priya", "sender_name": "Priya", "direction": direction,
        "content": content, "thread": thread, "external_id": f"{thread}:{run}:{direction}", "occurred_at": at.isoformat(),
        "metadata": {"run_id": run, "team": "support"}}]})
    assert response.status_code == 200, response.json()
    ids = [r["id"] for r in response.json()["results"]]
    interactions_index(interaction_ids=ids, batch_size=64)
    return ids[0]


@pytest.fixture
def logged(agents):
    """The same subject told to each agent, in its own run."""
    mine = log(agents["triage"], "The Helsinki office printer jams every Monday morning.", thread="t1", run="r-1")
    theirs = log(agents["nightly"], "The Helsinki office printer needs new toner cartridges.", thread="t2", run="r-2")
    return {"triage": mine, "nightly": theirs}


def _interaction_ids(answer) -> set[int]:
    return {r["id"] for r in answer["results"] if r["kind"] == "interaction"}


def test_recall_narrows_to_what_one_agent_logged(api, agents, logged):
    query = {"query": "Helsinki office printer", "types": ["interaction"]}
    assert _interaction_ids(api.post("/recall", query).json()) == {logged["triage"], logged["nightly"]}
    assert _interaction_ids(api.post("/recall", {**query, "agent": agents["bot"].pk}).json()) == {logged["triage"]}
    # An agent no key writes for has logged nothing.
    idle = Entity.objects.create(workspace=agents["bot"].workspace, kind="agent", name="idle-bot")
    assert api.post("/recall", {**query, "agent": idle.pk}).json()["results"] == []


def test_recall_and_packs_narrow_to_messages_whose_metadata_contains_an_object(api, agents, logged):
    query = {"query": "Helsinki office printer", "types": ["interaction"]}
    assert _interaction_ids(api.post("/recall", {**query, "metadata": {"run_id": "r-2"}}).json()) == {logged["nightly"]}
    both = api.post("/recall", {**query, "metadata": {"team": "support"}}).json()
    assert _interaction_ids(both) == {logged["triage"], logged["nightly"]}
    assert api.post("/recall", {**query, "metadata": {"run_id": "r-3"}}).json()["results"] == []
    pack = api.post("/context", {"query": "Helsinki office printer", "metadata": {"run_id": "r-1"},
                                 "agent": agents["bot"].pk, "budget_tokens": 500})
    assert pack.status_code == 200, pack.json()
    assert "jams every Monday" in pack.json()["text"] and "toner" not in pack.json()["text"]


def test_memories_narrow_by_the_messages_they_cite(api, agents, logged):
    cited = api.post("/memories", {"type": "fact", "text": "The Helsinki printer jams on Mondays.",
                                   "interaction": logged["triage"]})
    assert cited.status_code in (200, 201), cited.json()
    uncited = api.post("/memories", {"type": "fact", "text": "The Helsinki printer is out of toner."})
    assert uncited.status_code in (200, 201), uncited.json()
    answer = api.post("/recall", {"query": "Helsinki printer", "types": ["fact"], "agent": agents["bot"].pk,
                                  "include_candidates": True}).json()
    texts = {r["text"] for r in answer["results"]}
    assert "The Helsinki printer jams on Mondays." in texts and "The Helsinki printer is out of toner." not in texts


def test_filters_refuse_bad_input_and_other_workspaces_entities(api, agents, other_workspace):
    theirs = Entity.objects.create(workspace=other_workspace, kind="agent", name="their-bot")
    assert_error(api.post("/recall", {"query": "printer", "agent": theirs.pk}), 404)
    assert_error(api.post("/context", {"query": "printer", "agent": theirs.pk}), 404)
    for bad in ({"agent": 0}, {"agent": "bot"}, {"metadata": ["run_id"]}, {"metadata": "run_id=r-1"},
                {"metadata": {"blob": "x" * 3000}},
                {"metadata": {"token": "ghp_aB3dE5gH7jK9mN1pQ3sT5vW7yZ9bC1dF3hJ5"}}):
        assert_error(api.post("/recall", {"query": "printer", **bad}), 422)


def test_review_items_name_the_agent_that_proposed_them(agents, logged, client, teammate):
    reported = agents["triage"].post("/gaps", {"description": "Order printer toner automatically"})
    assert reported.status_code == 201, reported.json()
    unbound = agents["nightly"].post("/gaps", {"description": "Book meeting rooms"})
    items = {i["target_id"]: i for i in agents["triage"].get("/candidates", kind="gap").json()["items"]}
    mine = items[reported.json()["id"]]["proposed_by"]
    assert mine["agent"] == "triage-bot" and mine["agent_id"] == agents["bot"].pk
    assert mine["key_name"] == "triage" and mine["label"].startswith("triage-bot (key triage, mn_")
    assert "hash" not in mine and not any(str(v).startswith("mn_") and len(str(v)) > 20 for v in mine.values())
    theirs = items[unbound.json()["id"]]["proposed_by"]
    assert theirs["agent"] is None and theirs["label"].startswith("key nightly (mn_")

    client.force_login(teammate)
    html = client.get("/w/acme/review/?kind=gap").content.decode()
    assert f'href="/w/acme/entities/{agents["bot"].pk}/">triage-bot</a> (key triage' in html
    assert "key nightly (mn_" in html


def test_items_derived_from_a_message_name_the_agent_that_logged_it(agents):
    asked = log(agents["triage"], "Can you export the October invoices as PDF?", thread="t3", run="r-9")
    declined = log(agents["triage"], "Sorry, I can't export invoices as PDF yet.", thread="t3", run="r-9",
                   at=T0 + timedelta(seconds=20), direction="outbound")
    interactions_index(interaction_ids=[asked, declined], batch_size=64)
    item = ReviewItem.objects.get(kind="gap", source_interaction_id=declined)
    assert item.api_key_id is None  # the worker proposed it ...
    assert item.proposer_key.name == "triage" and item.proposer_key.agent.name == "triage-bot"  # ... from its message
    answer = agents["triage"].get(f"/candidates/{item.pk}").json()
    assert answer["proposed_by"]["agent"] == "triage-bot"


def test_the_audit_log_and_the_memory_page_link_the_agent(agents, logged, client, viewer):
    stored = agents["triage"].post("/memories", {"type": "fact", "text": "The Helsinki printer jams on Mondays.",
                                                 "interaction": logged["triage"]}).json()
    event = AuditEvent.objects.filter(actor_api_key=agents["triage_row"]).exclude(verb="api_key.bind").first()
    assert event is not None and event.actor_label.startswith("agent:triage-bot via key:triage")
    client.force_login(viewer)
    memory = Memory.objects.get(text="The Helsinki printer jams on Mondays.")
    assert stored["memory"]["id"] == memory.pk
    page = client.get(f"/w/acme/memories/{memory.pk}/").content.decode()
    link = f'<a href="/w/acme/entities/{agents["bot"].pk}/">triage-bot</a> (key triage'
    assert link in page  # in the history (who wrote it) and beside the evidence (who logged it)
    assert "logged by" in page
    assert link in client.get("/w/acme/").content.decode()


def test_binding_keys_is_admin_business_checked_and_audited(api, admin_api, outsider_api, agents, other_workspace):
    row = agents["nightly_row"]
    assert_error(api.put(f"/keys/{row.pk}/agent", {"agent": agents["bot"].pk}), 403)
    assert_error(outsider_api.put(f"/keys/{row.pk}/agent", {"agent": None}), 404)
    theirs = Entity.objects.create(workspace=other_workspace, kind="agent", name="their-bot")
    assert_error(admin_api.put(f"/keys/{row.pk}/agent", {"agent": theirs.pk}), 404)
    for bad in ({}, {"agent": "x"}, {"agent": 0}, {"agent": 1, "extra": True}):
        assert_error(admin_api.put(f"/keys/{row.pk}/agent", bad), 422)
    assert ApiKey.objects.get(pk=row.pk).agent_id is None
    created = admin_api.post("/keys", {"name": "sorter", "scopes": ["read"], "agent": theirs.pk})
    assert_error(created, 404)
    assert not ApiKey.objects.filter(name="sorter").exists()  # nothing half-stored
    created = admin_api.post("/keys", {"name": "sorter", "scopes": ["read"], "agent": agents["bot"].pk})
    assert created.status_code == 201 and created.json()["agent_id"] == agents["bot"].pk
    unbound = admin_api.put(f"/keys/{agents['triage_row'].pk}/agent", {"agent": None}).json()
    assert unbound["agent_id"] is None
    verbs = list(AuditEvent.objects.filter(verb="api_key.bind").values_list("data", flat=True))
    assert {"agent": None, "agent_name": ""} in verbs and any(v["agent_name"] == "triage-bot" for v in verbs)


def test_merging_the_agent_entity_moves_its_keys_and_a_split_moves_them_back(agents):
    twin = Entity.objects.create(workspace=agents["bot"].workspace, kind="agent", name="Triage Bot")
    merge = entity_merge(source=agents["bot"], target=twin)
    assert ApiKey.objects.get(pk=agents["triage_row"].pk).agent_id == twin.pk
    entity_split(merge=merge)
    assert ApiKey.objects.get(pk=agents["triage_row"].pk).agent_id == agents["bot"].pk
