"""Capability gaps (issue 18): the pure rules of gaps/rules.py — which agent turns are
refusals and which are idioms, how a refusal is paired with the request it answers and
described, policy refusals and tool errors, refusals taken back, need keys — plus
properties on arbitrary text and a floor on the labelled set's precision and recall
(bench/gaps.py measures it). No database."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings, strategies as st

from bench.gaps import evaluate
from gaps.rules import CATEGORIES, RULES, Finding, Turn, detect, need_key, refusal_span

ROOT = Path(__file__).resolve().parents[2]


def conversation(*rows: tuple) -> list[Turn]:
    """Turns from (direction, content) or (direction, content, metadata), ids from 1."""
    directions = {"in": "inbound", "out": "outbound", "sys": "system"}
    return [
        Turn(id=number, direction=directions[row[0]], speaker="agent" if row[0] == "out" else "ana", content=row[1],
             metadata=row[2] if len(row) > 2 else {})
        for number, row in enumerate(rows, start=1)
    ]


def quoted(text: str) -> str | None:
    span = refusal_span(text)
    return text[span[0]:span[1]] if span else None


# --- refusal clauses ----------------------------------------------------------------------

@pytest.mark.parametrize(("text", "clause"), [
    ("Sorry, I can't export invoices as PDF yet, but CSV works.", "I can't export invoices as PDF yet"),
    ("I don't have access to your calendar.", "I don't have access to your calendar"),
    ("Unfortunately that isn't supported.", "that isn't supported"),
    ("I'm unable to reset your password from here.", "I'm unable to reset your password from here"),
    ("I'm not able to start jobs on the GPU cluster; I only see CPU runners.", "I'm not able to start jobs on the GPU cluster"),
    ("There's no way for me to cancel that order.", "There's no way for me to cancel that order"),
    ("I don't have a tool for merging PDFs.", "I don't have a tool for merging PDFs"),
    ("I'm not connected to Jira yet, so I can't file tickets there.", "I'm not connected to Jira yet"),
])
def test_it_quotes_the_refusal_clause_of_an_agent_message(text, clause):
    assert quoted(text) == clause


# Object first: the agent names the capability, then says it lacks it (session 18).
@pytest.mark.parametrize(("text", "clause"), [
    ("Giving money back on an order is not one of my abilities yet, unfortunately.",
     "Giving money back on an order is not one of my abilities yet"),
    ("Deactivating accounts isn't among the actions I support.", "Deactivating accounts isn't among the actions I support"),
    ("Billing card management isn't hooked up for me yet.", "Billing card management isn't hooked up for me yet"),
    ("Log streaming from Google Cloud isn't available to me.", "Log streaming from Google Cloud isn't available to me"),
    ("Searching your AWS logs is not something I'm equipped to do.",
     "Searching your AWS logs is not something I'm equipped to do"),
    ("merge: not a capability this assistant has.", "merge: not a capability this assistant has"),
    ("Reviewing pull requests is a feature I haven't been given yet.",
     "Reviewing pull requests is a feature I haven't been given yet"),
    ("Shipping code to the staging server is outside my current toolset.",
     "Shipping code to the staging server is outside my current toolset"),
    ("I lack any hook into the production cluster, so it has to go out another way.",
     "I lack any hook into the production cluster"),
])
def test_it_quotes_a_capability_the_agent_says_it_lacks(text, clause):
    assert quoted(text) == clause


@pytest.mark.parametrize("text", [
    "The invoice isn't among the documents you sent.",  # about the person's data, not the agent
    "Your card isn't hooked up to the account yet: add it under Billing.",
    "That flight is not available on the 12th; the 13th has seats.",
])
def test_things_that_are_missing_elsewhere_are_not_the_agents_gap(text):
    assert refusal_span(text) is None


@pytest.mark.parametrize("text", [
    "I can't wait to show my team!",
    "I can't thank you enough.",
    "Can't complain, really.",
    "I can't believe it made that much difference!",
    "I couldn't agree more.",
    "I can't stress enough how much the type hints helped.",
    "I can't imagine a better fit.",
    "I couldn't find an order with that number.",  # a lookup that found nothing
    "If I can't reach them by noon, I'll call you.",  # a condition
    "I can't promise it ships today, but it usually does.",  # a hedge
    "Your order ships tomorrow with DHL.",
    "",
])
def test_idioms_conditions_and_ordinary_messages_are_not_refusals(text):
    assert refusal_span(text) is None


# --- detection ----------------------------------------------------------------------------

def test_a_refusal_is_described_by_the_request_it_answers():
    turns = conversation(
        ("in", "Hi! Could you please export my invoices as PDF?"),
        ("out", "Sorry, I can't export invoices as PDF yet. I can send a CSV instead."),
    )
    [finding] = detect(turns)
    assert finding.rule == "gap.refusal" and finding.category == "feature"
    assert finding.description == "export my invoices as PDF"
    assert finding.primary_id == 2 and finding.supporting_ids == (1,)
    assert finding.quote == "I can't export invoices as PDF yet"
    assert turns[1].content[slice(*finding.span)] == finding.quote
    assert "cannot do this" in finding.reason


def test_a_request_for_two_things_is_narrowed_to_the_refused_one():
    [finding] = detect(conversation(
        ("in", "Can you book a table for two at Luigi's and add it to my calendar?"),
        ("out", "Booked for 19:30. I don't have access to your calendar, though."),
    ))
    assert finding.description == "add it to my calendar"
    assert finding.category == "data_access"


def test_without_a_request_the_refused_object_is_the_description():
    [finding] = detect(conversation(
        ("in", "The nightly job failed."),
        ("out", "I can't read the production logs from this machine, I only see the CI output."),
    ))
    assert finding.description == "read the production logs from this machine"
    assert finding.supporting_ids == (1,)


def test_a_person_saying_they_cannot_is_not_the_agents_gap():
    assert detect(conversation(
        ("in", "I can't log in since this morning."),
        ("out", "I've sent you a password reset link."),
    )) == []


def test_a_refusal_taken_back_later_is_no_gap():
    assert detect(conversation(
        ("in", "Please merge PR #733"),
        ("out", "I can't merge #733 while a required check is pending."),
        ("out", "Update: the check passed and I was able to merge #733."),
    )) == []
    assert detect(conversation(
        ("in", "Can you refund my last order?"),
        ("out", "I'm unable to refund orders from here... actually, I was able to do it. The refund is on its way."),
    )) == []


def test_an_offered_alternative_does_not_cancel_the_gap():
    findings = detect(conversation(
        ("in", "devbot, file a Jira ticket for the flaky test in payments"),
        ("out", "I'm not connected to Jira yet, so I can't file tickets there. I can draft the ticket text for you."),
        ("in", "please do"),
        ("out", "Here it is: Flaky test in payments, fails 1 in 20 runs."),
    ))
    assert [(f.primary_id, f.category) for f in findings] == [(2, "integration")]
    assert findings[0].description == "file a Jira ticket for the flaky test in payments"


def test_a_policy_refusal_is_reported_apart_from_gaps():
    [finding] = detect(conversation(
        ("in", "What is the password of the shared admin account?"),
        ("out", "I'm not allowed to share passwords. I can send a reset link to the owner."),
    ))
    assert finding.rule == "gap.policy"
    assert finding.quote == "I'm not allowed to share passwords"


def test_a_tool_error_is_a_gap_unless_a_retry_succeeds():
    error = {"tool_error": {"tool": "zendesk.create_ticket", "error": "503 Service Unavailable"}}
    [finding] = detect(conversation(
        ("in", "Could you open a ticket for the broken checkout button?"),
        ("out", "Let me create that ticket.", error),
    ))
    assert finding.rule == "gap.tool_error" and finding.category == "tool_error"
    assert finding.description == "open a ticket for the broken checkout button"
    assert "503" in finding.reason
    assert detect(conversation(
        ("in", "Could you open a ticket for the broken checkout button?"),
        ("out", "Let me create that ticket.", error),
        ("out", "Ticket #881 created.", {"tool": "zendesk.create_ticket"}),
    )) == []


def test_a_tool_error_as_plain_text_without_content_still_gets_a_description():
    [finding] = detect(conversation(("sys", "", {"tool_error": "spotify: 401 token expired"})))
    assert finding.description == "spotify: 401 token expired"
    assert finding.quote == "" and finding.span == (0, 0) and finding.supporting_ids == ()


@pytest.mark.parametrize(("a", "b"), [
    ("Export my invoices to PDF", "export invoices as pdf"),
    ("exporting the invoice as PDF, please", "Export invoices to PDF"),
    ("download our invoices as PDFs", "export invoices as pdf"),
    ("schedule a meeting", "scheduling meetings"),
])
def test_wordings_of_one_need_get_one_key(a, b):
    assert need_key(a) == need_key(b)


def test_different_needs_get_different_keys():
    assert need_key("export invoices as PDF") != need_key("export invoices as CSV")


# --- properties ---------------------------------------------------------------------------

PHRASES = st.sampled_from([
    "I can't", "I cannot", "I'm unable to", "I don't have access to", "isn't supported", "can you", "please",
    "actually, I can", "I'm not allowed to", "I can't wait", "if I can't", "there's no way for me to", "done",
    "export invoices as PDF", "your calendar", ".", "?", ",", "\n", " but ", "—", "’", "I won't share",
])
TEXT = st.one_of(st.text(max_size=200), st.lists(st.one_of(PHRASES, st.text(max_size=12)), max_size=12).map(" ".join))
TURN = st.tuples(
    st.sampled_from(["inbound", "outbound", "system"]),
    TEXT,
    st.one_of(
        st.just({}),
        st.builds(lambda tool, error: {"tool_error": {"tool": tool, "error": error}}, st.text(max_size=10), st.text(max_size=20)),
        st.builds(lambda error: {"tool_error": error}, st.text(max_size=20)),
        st.builds(lambda tool: {"tool": tool}, st.text(max_size=10)),
    ),
)


@settings(max_examples=300, deadline=None)
@given(st.lists(TURN, max_size=8))
def test_detect_never_raises_and_every_finding_is_well_formed(rows):
    turns = [Turn(id=10 + n, direction=d, speaker="x", content=c, metadata=m) for n, (d, c, m) in enumerate(rows)]
    by_id = {turn.id: turn for turn in turns}
    findings = detect(turns)
    assert len({f.primary_id for f in findings}) == len(findings)  # one finding per turn at most
    for finding in findings:
        assert isinstance(finding, Finding)
        assert finding.description.strip() and len(finding.description) <= 121
        assert finding.category in CATEGORIES and finding.rule in RULES
        assert 0 <= finding.confidence <= 1
        primary = by_id[finding.primary_id]
        assert primary.direction != "inbound"
        start, end = finding.span
        assert 0 <= start <= end <= len(primary.content)
        assert primary.content[start:end] == finding.quote
        assert all(by_id[i].direction == "inbound" and i < finding.primary_id for i in finding.supporting_ids)


@given(TEXT)
def test_a_refusal_span_lies_inside_the_text_and_is_not_blank(text):
    span = refusal_span(text)
    if span is not None:
        start, end = span
        assert 0 <= start < end <= len(text)
        assert text[start:end].strip() == text[start:end]


@given(st.lists(st.from_regex(r"[A-Za-z]{1,10}", fullmatch=True), max_size=8), st.randoms())
def test_a_need_key_ignores_word_order_and_case(words, rng):
    shuffled = list(words)
    rng.shuffle(shuffled)
    assert need_key(" ".join(words)) == need_key(" ".join(shuffled).upper())


# --- the labelled set and purity ------------------------------------------------------------

def test_detection_on_the_labelled_set_stays_above_its_measured_floor():
    """bench/gaps.py measured, over all 59 conversations, gaps P 0.94 R 0.94 (36 labelled)
    and policy refusals P 1.00 R 0.88 (8 labelled) (bench/RESULTS.md). The floors sit about
    three mistakes below for gaps and one for policy, so a regression fails and one new
    harmless miss does not."""
    result = evaluate()
    gaps, policy = result["gaps"]["all"], result["policy"]["all"]
    assert gaps.tp / (gaps.tp + gaps.fp) >= 0.85
    assert gaps.tp / (gaps.tp + gaps.fn) >= 0.85
    assert policy.tp / (policy.tp + policy.fp) >= 0.80
    assert policy.tp / (policy.tp + policy.fn) >= 0.70


def test_the_rules_import_nothing_but_the_standard_library():
    code = "import sys, gaps.rules; print(sorted(m for m in sys.modules if m.split('.')[0] in {'django', 'ninja', 'celery', 'psycopg', 'pgvector'}))"
    output = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True).stdout
    assert output.strip() == "[]"
