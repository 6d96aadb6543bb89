"""The optional LLM judge of capability gaps (gaps/judge.py): off by default; when on, in the
worker, its reading replaces the rules' for the turns it answers for properly, it finds
refusals the rules miss, and the rules stand whenever it errs, times out or answers garbage.
Against a local server speaking the OpenAI protocol (tests/openai_server.py)."""

from __future__ import annotations

import json

import pytest

from gaps import judge, rules
from gaps.models import CapabilityGap, GapEvidence
from tests.gaps.test_api import ASKED_THREE_WAYS, T0, log_exchange, process
from tests.openai_server import OpenAIServer, llm_pointed_at

pytestmark = pytest.mark.django_db

JUDGE = "You judge whether an AI agent's reply shows a capability gap"
REQUEST, REFUSAL = ASKED_THREE_WAYS[0][2], ASKED_THREE_WAYS[0][3]


@pytest.fixture
def llm(settings):
    server = OpenAIServer()
    settings.MNEMO_GAP_LLM_JUDGE = True
    settings.MNEMO_LLM_TIMEOUT = 1.0
    yield from llm_pointed_at(server, settings)
    server.close()


def judged(**item) -> str:
    return json.dumps({"judgements": [item]})


def the_reply_id(workspace) -> int:
    from conversations.models import Interaction

    return Interaction.objects.filter(workspace=workspace, direction="outbound").order_by("-pk").values_list(
        "pk", flat=True).first()


def exchange(api, request=REQUEST, answer=REFUSAL, thread="t"):
    return log_exchange(api, "slack", "priya", request, answer, thread=thread, at=T0)


def judge_requests(server):
    return [r for r in server.requests if JUDGE in r["json"]["messages"][0]["content"]]


def script_for_next_reply(llm, workspace_next_id, **item):
    llm.chat(judged(id=workspace_next_id, **item), when=JUDGE)


# --- pure: what the judge sends and accepts ---------------------------------------------------

TURNS = [rules.Turn(1, "inbound", "Priya", REQUEST), rules.Turn(2, "outbound", "Agent", REFUSAL),
         rules.Turn(3, "inbound", "Priya", "Could you translate my last email into Finnish?"),
         rules.Turn(4, "outbound", "Agent", "I only speak English and Spanish for now."),
         rules.Turn(5, "inbound", "Priya", "Thanks, that's all."), rules.Turn(6, "outbound", "Agent", "Have a good day!")]


def test_candidates_are_the_rule_refusals_and_replies_to_a_request_no_rule_flagged():
    findings = rules.detect(TURNS)
    found = judge.candidates(TURNS, {t.id for t in TURNS}, findings)
    assert [(c.turn_id, c.request_id, c.finding is not None) for c in found] == [(2, 1, True), (4, 3, False)]
    assert found[0].request == REQUEST  # the whole message, not only the ask


@pytest.mark.parametrize("answer", [
    None, [], "text", {"judgements": "no"}, {"judgements": [{"id": "2", "is_gap": True, "need": "x y z"}]},
    {"judgements": [{"id": True, "is_gap": False}]}, {"judgements": [{"id": 99, "is_gap": False}]},
    {"judgements": [{"id": 2, "is_gap": "yes", "need": "export invoices as PDF"}]},
    {"judgements": [{"id": 2, "is_gap": True, "need": ""}]},
    {"judgements": [{"id": 2, "is_gap": True, "need": "x" * 500}]},
    {"judgements": [{"id": 2, "is_gap": True, "need": "export invoices", "reason": "r" * 5000}]},
    {"judgements": [{"id": 2, "is_gap": True, "need": "use ghp_aB3dE5gH7jK9mN1pQ3sT5vW7yZ9bC1dF3hJ5"}]},
    {"judgements": [{"id": 2, "is_gap": True, "need": "export invoices", "reason": 7}]},
])
def test_anything_malformed_long_or_secret_is_no_verdict(answer):
    found = judge.candidates(TURNS, {1, 2}, rules.detect(TURNS))
    assert judge.parse(answer, found) == {}


def test_a_good_verdict_is_cleaned_and_its_quote_located():
    found = judge.candidates(TURNS, {t.id for t in TURNS}, rules.detect(TURNS))
    verdicts = judge.parse({"judgements": [
        {"id": 2, "is_gap": True, "need": "  Export   invoices as PDF. ", "category": "made-up", "reason": "No PDF tool.",
         "quote": "not in the reply"},
        {"id": 2, "is_gap": False},  # the first judgement of a turn counts
        {"id": 4, "is_gap": True, "need": "translate emails into Finnish", "category": "feature",
         "reason": "Only two languages.", "quote": "I only speak English and Spanish"}]}, found)
    assert verdicts[2] == judge.Verdict(True, "Export invoices as PDF", "other", "No PDF tool.", None)
    assert verdicts[4].span == (0, len("I only speak English and Spanish"))


# --- in the pipeline ----------------------------------------------------------------------------

def test_off_by_default_nothing_is_sent(api, workspace, settings):
    server = OpenAIServer()
    try:
        settings.MNEMO_LLM_URL, settings.MNEMO_LLM_MODEL, settings.MNEMO_LLM_RETRIES = server.url, "m", 0
        from core.providers import llm as llm_module

        llm_module._llm = None
        process(exchange(api))
        assert not judge_requests(server)
        assert CapabilityGap.objects.get(workspace=workspace).rule == "gap.refusal"
    finally:
        llm_module._llm = None
        server.close()


def test_the_llm_need_names_the_gap_and_its_reason_is_kept_as_evidence(api, workspace, llm):
    ids = exchange(api)
    llm.chat(judged(id=ids[1], is_gap=True, need="Export invoices as PDF", category="feature",
                    reason="The agent has no PDF export tool."), when=JUDGE)
    process(ids)
    gap = CapabilityGap.objects.get(workspace=workspace)
    assert gap.description == "Export invoices as PDF" and gap.category == "feature" and gap.rule == judge.RULE
    primary = GapEvidence.objects.get(gap=gap, relevance="primary")
    assert primary.reason == "The agent has no PDF export tool." and primary.rule == judge.RULE
    assert primary.quote and primary.quote in REFUSAL  # the rule's located quote stays
    [sent] = judge_requests(llm)
    assert REQUEST in sent["json"]["messages"][1]["content"]


def test_the_llm_saying_no_gap_drops_the_rules_finding(api, workspace, llm):
    ids = exchange(api)
    llm.chat(judged(id=ids[1], is_gap=False, reason="It offered to show them instead."), when=JUDGE)
    process(ids)
    assert not CapabilityGap.objects.filter(workspace=workspace).exists()


def test_the_llm_finds_a_refusal_the_rules_miss(api, workspace, llm):
    ids = exchange(api, "Could you translate my last email into Finnish?", "I only speak English and Spanish for now.")
    assert not rules.detect([rules.Turn(1, "inbound", "p", "Could you translate my last email into Finnish?"),
                             rules.Turn(2, "outbound", "a", "I only speak English and Spanish for now.")])
    llm.chat(judged(id=ids[1], is_gap=True, need="translate emails into Finnish", category="feature",
                    reason="Finnish is not among its languages.", quote="I only speak English and Spanish"), when=JUDGE)
    process(ids)
    gap = CapabilityGap.objects.get(workspace=workspace)
    assert gap.description == "translate emails into Finnish" and gap.rule == judge.RULE
    evidence = {e.relevance: e for e in GapEvidence.objects.filter(gap=gap)}
    assert evidence["primary"].interaction_id == ids[1] and evidence["supporting"].interaction_id == ids[0]
    assert evidence["primary"].quote == "I only speak English and Spanish"


@pytest.mark.parametrize("script", [
    lambda llm, ids: llm.error(500, when=JUDGE),
    lambda llm, ids: llm.chat("not json at all", when=JUDGE),
    lambda llm, ids: llm.chat(json.dumps({"verdict": "gap"}), when=JUDGE),
    lambda llm, ids: llm.chat(judged(id=ids[1], is_gap=True, need="mail sk_live_4eC39HqLyjWDarjtT1zdp7dc"), when=JUDGE),
    lambda llm, ids: llm.chat(judged(id=ids[1], is_gap=True, need="x"), delay=3.0, when=JUDGE),  # past the timeout
], ids=["error", "garbage", "wrong-shape", "secret", "timeout"])
def test_the_rules_stand_when_the_llm_errs_or_answers_garbage(api, workspace, llm, script):
    ids = exchange(api)
    script(llm, ids)
    process(ids)
    gap = CapabilityGap.objects.get(workspace=workspace)
    assert gap.rule == "gap.refusal" and "invoices" in gap.description.lower() and "sk_live" not in gap.description
    assert judge_requests(llm)  # it was asked


def test_an_agents_report_never_waits_for_the_llm(api, workspace, llm):
    assert api.post("/gaps", {"description": "Export invoices as PDF"}).status_code == 201
    assert not judge_requests(llm)
