"""The bridge (issue 22 part 1, context.multihop.bridge): a question that refers to a person
without naming one is answered for the one person its best result is about — against the
real database and the bundled model."""

from __future__ import annotations

from datetime import timedelta

import pytest

from context import multihop
from tests.context.test_api import T0, log_chat

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
    assert outsider_api.post("/recall", {"query": QUESTION}).json() == {"results": []}



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
