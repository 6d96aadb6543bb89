"""Multi-hop recall (issue 22 part 1): the pure seed and hop rules, and the second round
against the real database and the bundled model: an answer that shares no word with the
question is found next to the turn that does, within the request's filters and workspace."""

from __future__ import annotations

from datetime import timedelta

import pytest

from context import multihop
from tests.context.test_api import T0, log_chat


def test_seeds_are_the_turns_the_best_pointed_results_cite():
    ranked = [("interaction", [1, 2], 0.9), ("summary", list(range(10, 20)), 0.85), ("memory", [2, 3], 0.8),
              ("memory", [], 0.7), ("interaction", [4], 0.6), ("interaction", [5], 0.5)]
    # The ten-turn result is a range (skipped, not counted); the empty one points nowhere.
    assert multihop.seed_turns(ranked, seeds=3) == {1: 0.9, 2: 0.9, 3: 0.8, 4: 0.6}


def test_a_relationship_or_an_entity_card_is_no_seed():
    # They cite the messages that support them, not a place where the answer is said.
    ranked = [("relationship", [7], 0.95), ("entity", [8, 9], 0.9), ("interaction", [1], 0.8),
              ("memory", [2, 3], 0.7)]
    assert multihop.seed_turns(ranked, seeds=2) == {1: 0.8, 2: 0.7, 3: 0.7}


def test_no_seed_without_results_or_seeds():
    assert multihop.seed_turns([]) == {}
    assert multihop.seed_turns([("interaction", [1], 0.9)], seeds=0) == {}


def test_a_neighbour_ranks_at_most_its_share_of_the_seed():
    assert multihop.hop_score(0.2, 0.8, hop=0.5) == 0.4
    assert multihop.hop_score(0.7, 0.8, hop=0.5) == 0.7  # its own score is better
    assert multihop.hop_score(0.0, 1.0) == multihop.HOP


# The answer ("They loved it…") shares no word with the question; the turn before it does.
# Another conversation says more about pottery and kids than the question's turn, so without
# a second round those turns fill the results.
ASKED = [
    ("Caroline", "Melanie, did your kids enjoy the pottery workshop on Saturday?"),
    ("Melanie", "They loved it, they did not want to leave and asked to go back next week!"),
    ("Caroline", "I am glad to hear that."),
]
ELSEWHERE = [
    ("Jon", f"The pottery workshop for kids {detail}.") for detail in (
        "opens on Saturday at the community centre", "teaches children to throw pots on a wheel",
        "costs twenty dollars per child", "is run by a retired art teacher", "lets kids glaze their own mugs",
        "fills up quickly on weekends", "has a waiting list for the spring term", "uses air-dry clay for kids",
        "ends with a small exhibition of pottery", "welcomes kids from six years old")]
QUESTION = "What did Melanie's kids think of the pottery workshop?"


def _turns(api, settings, *, multihop_on: bool, **filters):
    settings.MNEMO_RECALL_MULTIHOP = multihop_on
    response = api.post("/recall", {"query": QUESTION, "types": ["interaction"], "limit": 5, **filters})
    assert response.status_code == 200, response.json()
    return response.json()["results"]


def _logged(workspace):
    asked = log_chat(workspace, ASKED, thread="pottery")
    log_chat(workspace, ELSEWHERE, start=T0 + timedelta(days=3), thread="workshop")
    return asked


def test_the_answer_next_to_the_question_is_found_only_by_the_second_round(api, workspace, settings):
    question, answer, _ = _logged(workspace)
    without = _turns(api, settings, multihop_on=False)
    assert question in [r["id"] for r in without]
    assert answer not in [r["id"] for r in without]
    found = _turns(api, settings, multihop_on=True)
    assert answer in [r["id"] for r in found]
    hopped = next(r for r in found if r["id"] == answer)
    assert hopped["score_breakdown"]["hop"] > 0
    assert abs(sum(hopped["score_breakdown"].values()) - hopped["score"]) < 1e-3
    seed = next(r for r in found if r["id"] == question)
    assert hopped["score"] <= seed["score"]
    assert hopped["reached"] == {"kind": "interaction", "id": question}  # the turn it is next to
    assert seed["reached"] is None


def test_the_second_round_keeps_the_requests_filters(api, workspace, settings):
    from entities.models import Entity

    question, answer, _ = _logged(workspace)
    caroline = Entity.objects.get(workspace=workspace, name="Caroline")
    found = _turns(api, settings, multihop_on=True, entity=caroline.pk)
    assert question in [r["id"] for r in found]
    assert answer not in [r["id"] for r in found]  # Melanie said it


def test_an_outsider_finds_nothing_through_the_second_round(api, outsider_api, workspace, settings):
    _logged(workspace)
    settings.MNEMO_RECALL_MULTIHOP = True
    assert outsider_api.post("/recall", {"query": QUESTION}).json() == {"results": [], "followed": None}


def test_a_served_pack_shows_the_lift_beside_the_dimensions(client, owner, workspace, settings):
    from context import services
    from core.services import Actor

    _, answer, _ = _logged(workspace)
    settings.MNEMO_RECALL_MULTIHOP = True
    pack = services.context_pack(services.PackRequest(query=QUESTION, workspace_id=workspace.pk, types=("interaction",),
                                                      budget_tokens=2000), actor=Actor(label="test"))
    served = next(i for s in pack.sections for i in s["items"] if i["kind"] == "interaction" and i["id"] == answer)
    assert served["score_breakdown"]["hop"] > 0
    client.force_login(owner)
    html = client.get(f"/w/{workspace.slug}/inspector/packs/{pack.pk}/").content.decode()
    assert "<dt>hop</dt>" in html
    assert served["reached"]["kind"] == "interaction"
    assert f"reached as the neighbour of interaction {served['reached']['id']}" in html
