"""The bridge (issue 22 part 1, context.multihop.bridge): a question that refers to a person
without naming one is answered for the one person its best result is about — against the
real database and the bundled model."""

from __future__ import annotations

import json
from datetime import timedelta

import pytest
from django.test import Client

from context import multihop
from context.models import PackLog
from context.schemas import PackOut
from entities.models import Entity
from entities.services import entity_erase
from memory.services import Draft, Evidence, memories_embed, memory_store
from tests.context.test_api import T0, log_chat
from tests.helpers import assert_error

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize("text, refers", [
    ("What did the person who adopted a puppy do in June?", True),
    ("Where does she work now?", True),
    ("Whose car broke down?", True),
    ("What is the wifi password?", False),
    ("When does the Q3 report close?", False),
    ("Otherwise the theme park", False),  # "the", "other": no cue inside a word
])
def test_a_question_refers_to_a_person(text, refers):
    assert multihop.refers_to_a_person(text) is refers


def test_a_bridge_is_one_entity():
    assert multihop.bridge({7}) == 7
    assert multihop.bridge({7, 8}) is None  # a conversation between two people
    assert multihop.bridge(set()) is None


# Several people say what they did in June; one of them adopted a puppy months before. Said
# in more words about June than her, the others' June turns come first unless the question
# is scored for the person who adopted the puppy.
LINES = [
    ("Caroline", "I adopted a puppy from the shelter this spring, her name is Biscuit."),
    ("Caroline", "In June I ran my first half marathon by the lake."),
    ("Jon", "In June I spent every June weekend repainting the garage, all of June."),
    ("Gina", "June was busy: in June I opened my clothing store, the June launch went well."),
    ("Dave", "In June I took a June road trip along the coast in early June."),
]
QUESTION = "What did the person who adopted a puppy do in June?"


def _logged(workspace):
    ids = {}
    for n, (who, text) in enumerate(LINES):
        # A day apart each, in June but for the adoption (spring); each its own conversation.
        at = T0 + timedelta(days=n) if n else T0 - timedelta(days=60)
        [ids[text]] = log_chat(workspace, [(who, text)], start=at, thread=f"t{n}")
    return ids


def _ranked(api, settings, *, bridge: bool, query: str = QUESTION, **extra):
    settings.MNEMO_RECALL_BRIDGE = bridge
    settings.MNEMO_RECALL_MULTIHOP = False  # the bridge alone
    response = api.post("/recall", {"query": query, "types": ["interaction"], "limit": 5, **extra})
    assert response.status_code == 200, response.json()
    return response.json()["results"]


def test_the_person_the_best_result_is_about_is_followed(api, workspace, settings):
    ids = _logged(workspace)
    adopted, ran = ids[LINES[0][1]], ids[LINES[1][1]]
    without = [r["id"] for r in _ranked(api, settings, bridge=False)]
    assert without[0] == adopted  # the first hop: who adopted a puppy
    assert without.index(ran) > 1  # the others' June turns come before her run
    results = _ranked(api, settings, bridge=True)
    assert [r["id"] for r in results][:2] == [adopted, ran]
    assert results[1]["score_breakdown"]["entity"] > 0
    assert abs(sum(results[1]["score_breakdown"].values()) - results[1]["score"]) < 1e-3


def test_no_bridge_when_the_question_names_someone_or_no_person(api, workspace, settings):
    _logged(workspace)
    for query in ("What did Jon do in June?", "What happened in June after the puppy adoption"):
        assert _ranked(api, settings, bridge=True, query=query) == _ranked(api, settings, bridge=False, query=query)


def test_the_bridge_keeps_the_requests_filters_and_workspace(api, outsider_api, workspace, settings):
    ids = _logged(workspace)
    results = _ranked(api, settings, bridge=True, conversation=None)
    assert {r["id"] for r in results} <= set(ids.values())
    settings.MNEMO_RECALL_BRIDGE = True
    assert outsider_api.post("/recall", {"query": QUESTION}).json() == {"results": [], "followed": None}



def test_the_bridge_adds_no_statement(workspace, settings):
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    from context import services

    _logged(workspace)
    settings.MNEMO_RECALL_PARALLEL = False  # every statement on this connection
    counts = {}
    for bridge in (False, True):
        settings.MNEMO_RECALL_BRIDGE = bridge
        services.recall(services.RecallRequest(query=QUESTION, workspace_id=workspace.pk, limit=5))  # warm
        with CaptureQueriesContext(connection) as queries:
            results = services.recall(services.RecallRequest(query=QUESTION, workspace_id=workspace.pk, limit=5))
        counts[bridge] = (len(queries), results[1].score_breakdown.get("entity", 0) > 0)
    assert counts == {False: (counts[False][0], False), True: (counts[False][0], True)}


# --- where the bridge shows: recall's and the pack's `followed`, the pack log, its page ---------

def _caroline(workspace) -> Entity:
    return Entity.objects.get(workspace=workspace, name="Caroline")


def _recall(api, settings, *, bridge: bool = True, query: str = QUESTION, **extra) -> dict:
    settings.MNEMO_RECALL_BRIDGE = bridge
    response = api.post("/recall", {"query": query, "types": ["interaction"], "limit": 5, **extra})
    assert response.status_code == 200, response.json()
    return response.json()


def test_recall_says_whom_it_followed_and_why(api, workspace, settings):
    _logged(workspace)
    answer = _recall(api, settings)
    assert answer["followed"] == {"entity_id": _caroline(workspace).pk, "entity_name": "Caroline", "reason": "bridge"}
    assert answer["results"][1]["score_breakdown"]["entity"] > 0  # the credit it explains


def test_recall_follows_nobody_when_the_question_names_someone_or_the_bridge_is_off(api, workspace, settings):
    _logged(workspace)
    assert _recall(api, settings)["followed"]["entity_name"] == "Caroline"  # the same data does follow her
    assert _recall(api, settings, query="What did Jon do in June?")["followed"] is None
    assert _recall(api, settings, entity=_caroline(workspace).pk)["followed"] is None  # asked for, not followed
    assert _recall(api, settings, bridge=False)["followed"] is None


@pytest.mark.parametrize("cited, followed", [(("Caroline",), "Caroline"), (("Caroline", "Jon"), None)])
def test_a_best_result_about_two_people_follows_neither(api, workspace, settings, cited, followed):
    ids = _logged(workspace)
    turns = {"Caroline": ids[LINES[0][1]], "Jon": ids[LINES[2][1]]}  # the adoption; Jon's June
    draft = Draft(type="fact", text="The person who adopted a puppy from the shelter named her Biscuit.",
                  certainty="extracted", confidence=0.9, evidence=[Evidence(turns[who]) for who in cited])
    memory = memory_store(workspace_id=workspace.pk, draft=draft).memory
    memories_embed()
    answer = _recall(api, settings, types=["fact"], include_candidates=True)
    assert answer["results"][0]["id"] == memory.pk  # the best result cites the people above
    assert (answer["followed"] or {}).get("entity_name") == followed


def _pack(api, settings, *, bridge: bool = True, **extra) -> dict:
    settings.MNEMO_RECALL_BRIDGE = bridge
    response = api.post("/context", {"query": QUESTION, "budget_tokens": 400, **extra})
    assert response.status_code == 200, response.json()
    return response.json()


def test_the_pack_and_its_log_say_whom_it_followed(api, workspace, settings):
    _logged(workspace)
    caroline = _caroline(workspace)
    served = _pack(api, settings)
    said = {"entity_id": caroline.pk, "entity_name": "Caroline", "reason": "bridge"}
    assert served["followed"] == said
    PackOut.model_validate(served)
    assert PackLog.objects.get(pk=served["pack_id"]).followed_entity_id == caroline.pk
    assert api.get(f"/packs/{served['pack_id']}").json()["followed"] == said
    unbridged = _pack(api, settings, bridge=False)
    assert unbridged["followed"] is None and PackLog.objects.get(pk=unbridged["pack_id"]).followed_entity_id is None


def test_the_followed_name_is_redacted_on_request(api, workspace, settings):
    _logged(workspace)
    caroline = _caroline(workspace).pk
    Entity.objects.filter(pk=caroline).update(name="caroline@example.com")  # a name can be an address
    assert _recall(api, settings)["followed"]["entity_name"] == "caroline@example.com"
    for answer in (_recall(api, settings, redact=True), _pack(api, settings, redact=True)):
        assert answer["followed"]["entity_id"] == caroline
        assert "caroline@example.com" not in answer["followed"]["entity_name"]


def test_an_outsider_gets_404_for_a_pack_that_followed_someone(api, outsider_api, client, outsider, workspace,
                                                                 settings):
    _logged(workspace)
    pack_id = _pack(api, settings)["pack_id"]
    assert api.get(f"/packs/{pack_id}").json()["followed"]["entity_name"] == "Caroline"
    assert_error(outsider_api.get(f"/packs/{pack_id}"), 404)
    client.force_login(outsider)
    assert client.get(f"/w/acme/inspector/packs/{pack_id}/").status_code == 404
    assert client.get(f"/w/globex/inspector/packs/{pack_id}/").status_code == 404


def test_the_served_pack_page_says_whom_it_followed(api, client, viewer, workspace, settings):
    _logged(workspace)
    caroline = _caroline(workspace)
    followed, plain = _pack(api, settings)["pack_id"], _pack(api, settings, bridge=False)["pack_id"]
    client.force_login(viewer)
    html = client.get(f"/w/acme/inspector/packs/{followed}/").content.decode()
    assert (f'Followed: <a href="/w/acme/entities/{caroline.pk}/">Caroline</a> — the question named nobody; '
            "its best result was about them") in html
    assert "Followed:" not in client.get(f"/w/acme/inspector/packs/{plain}/").content.decode()
    settings.MNEMO_RECALL_BRIDGE = True
    for headers in ({}, {"HX-Request": "true"}):  # the inspector's page and its partial
        inspected = client.get("/w/acme/inspector/", {"q": QUESTION}, headers=headers).content.decode()
        assert f'Followed: <a href="/w/acme/entities/{caroline.pk}/">Caroline</a>' in inspected


def test_a_followed_entity_that_is_gone_is_said_by_its_id(api, client, viewer, workspace):
    gone = PackLog.objects.create(workspace=workspace, query=QUESTION, budget_tokens=100, tokens_used=0,
                                  followed_entity_id=987654)
    assert api.get(f"/packs/{gone.pk}").json()["followed"] == {"entity_id": 987654, "entity_name": None,
                                                               "reason": "bridge"}
    client.force_login(viewer)
    html = client.get(f"/w/acme/inspector/packs/{gone.pk}/").content.decode()
    assert "Followed: entity 987654 (no longer exists)" in html


def test_erasing_the_followed_person_erases_the_packs_that_followed_them(workspace):
    _logged(workspace)
    caroline = _caroline(workspace)
    # No section cites her messages: only the followed entity ties these packs to her.
    followed = PackLog.objects.create(workspace=workspace, query=QUESTION, budget_tokens=100, tokens_used=0,
                                      followed_entity_id=caroline.pk)
    other = PackLog.objects.create(workspace=workspace, query=QUESTION, budget_tokens=100, tokens_used=0)
    entity_erase(entity=caroline)
    assert set(PackLog.objects.values_list("pk", flat=True)) == {other.pk}
    assert not PackLog.objects.filter(pk=followed.pk).exists()


def test_the_mcp_tools_say_whom_they_followed(workspace, make_key, settings):
    _logged(workspace)
    settings.MNEMO_RECALL_BRIDGE = True
    _, key = make_key(workspace, scopes="read")
    said = {"entity_id": _caroline(workspace).pk, "entity_name": "Caroline", "reason": "bridge"}
    for tool in ("recall", "get_context_pack"):
        answer = Client().post("/mcp", json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                                                   "params": {"name": tool, "arguments": {"query": QUESTION}}}),
                               content_type="application/json",
                               headers={"Authorization": f"Bearer {key}", "Accept": "application/json, text/event-stream"})
        assert answer.json()["result"]["structuredContent"]["followed"] == said, tool
