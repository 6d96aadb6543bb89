"""The gaps layer end to end through the public API: three people on three channels ask for
the same missing capability in their own words, the agent declines each time → one gap at
frequency 3 and a TODO; idioms and fulfilled requests create nothing; reports, lifecycle,
scopes, outsiders, bad input and secrets."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest

from conversations.services import interactions_index
from core.models import AuditEvent
from entities.models import Entity
from entities.services import entity_erase, entity_merge, entity_split
from gaps import services
from gaps.models import CapabilityGap, GapEvidence
from review.models import ReviewItem
from tests.helpers import ApiClient, assert_error
from tests.trackers.tracker_server import GITHUB_PROJECT, TOKEN, TrackerServer
from webhooks.models import WebhookDelivery
from webhooks.services import webhook_create

pytestmark = pytest.mark.django_db

T0 = datetime(2026, 11, 2, 9, 0, tzinfo=timezone.utc)

# (channel, person, their request, the agent's answer)
ASKED_THREE_WAYS = [
    ("slack", "priya", "Can you export the October invoices as PDF?",
     "Sorry, I can't export invoices as PDF yet — I can only show them here."),
    ("email", "marco@example.org", "Please export my invoices to PDF for the accountant.",
     "I'm unable to export invoices to PDF at the moment."),
    ("cli", "dana", "export invoices as pdf",
     "That isn't supported yet: I cannot export invoices as PDF."),
]


def log_exchange(api, channel, person, request, answer, *, thread, at):
    items = [
        {"channel": channel, "channel_id": person, "sender_name": person, "direction": "inbound", "content": request,
         "thread": thread, "external_id": f"{thread}:q", "occurred_at": at.isoformat()},
        {"channel": channel, "channel_id": "agent", "sender_name": "Agent", "direction": "outbound", "content": answer,
         "thread": thread, "external_id": f"{thread}:a", "occurred_at": (at + timedelta(seconds=20)).isoformat()},
    ]
    response = api.post("/interactions/batch", {"items": items})
    assert response.status_code == 200, response.json()
    return [r["id"] for r in response.json()["results"]]


def process(ids):
    interactions_index(interaction_ids=ids, batch_size=len(ids) + 64)


def test_three_people_on_three_channels_make_one_gap_at_frequency_three_and_a_todo(api, workspace):
    ids = []
    for n, (channel, person, request, answer) in enumerate(ASKED_THREE_WAYS):
        pair = log_exchange(api, channel, person, request, answer, thread=f"t{n}", at=T0 + timedelta(days=n))
        process(pair)
        ids.append(pair)
    [gap] = CapabilityGap.objects.filter(workspace=workspace)
    assert gap.frequency == 3
    assert gap.status == "todo_created" and gap.todo_ref == f"todo:{gap.pk}"
    assert "pdf" in gap.description.lower() and "invoice" in gap.description.lower()
    assert "can't" not in gap.description and "unable" not in gap.description  # the need, not the refusal
    evidence = GapEvidence.objects.filter(gap=gap)
    assert {e.interaction_id for e in evidence if e.relevance == "primary"} == {pair[1] for pair in ids}
    assert {e.interaction_id for e in evidence if e.relevance == "supporting"} == {pair[0] for pair in ids}
    assert AuditEvent.objects.filter(verb="gap.todo", target_id=str(gap.pk)).count() == 1

    todo = api.get("/gaps/todo").json()
    assert [g["id"] for g in todo["items"]] == [gap.pk]
    detail = api.get(f"/gaps/{gap.pk}").json()
    assert detail["frequency"] == 3 and len(detail["evidence"]) == 6
    assert {e["channel"] for e in detail["evidence"]} == {"slack", "email", "cli"}
    redacted = api.get(f"/gaps/{gap.pk}", redact="true").json()
    assert all("marco@example.org" not in e["text"] for e in redacted["evidence"])
    # A newly detected gap waits in the review queue once.
    assert ReviewItem.objects.filter(kind="gap", target_id=gap.pk).count() == 1


def test_processing_the_same_interactions_again_counts_nothing_twice(api, workspace):
    channel, person, request, answer = ASKED_THREE_WAYS[0]
    pair = log_exchange(api, channel, person, request, answer, thread="t", at=T0)
    process(pair)
    gap = CapabilityGap.objects.get(workspace=workspace)
    services.gap_report(workspace=workspace, description=gap.description, interaction_id=pair[1],
                        actor=services.SYSTEM)
    gap.refresh_from_db()
    assert gap.frequency == 1


@pytest.mark.parametrize("answer", [
    "I can't wait to see the final report!",
    "I can't thank you enough for the patience.",
    "Done — here are the invoices as PDF: invoices-oct.pdf",
    "Sure, I've exported the invoices to PDF and emailed them.",
])
def test_idioms_and_fulfilled_requests_create_no_gap(api, workspace, answer):
    pair = log_exchange(api, "slack", "priya", "Can you export the October invoices as PDF?", answer, thread="t", at=T0)
    process(pair)
    assert not CapabilityGap.objects.filter(workspace=workspace).exists()


def test_a_person_saying_they_cannot_do_something_is_no_gap_of_the_agent(api, workspace):
    pair = log_exchange(api, "slack", "priya", "I can't log in to the billing portal.",
                        "Let me reset your session — try again now.", thread="t", at=T0)
    process(pair)
    assert not CapabilityGap.objects.exists()


def test_an_agent_reports_a_gap_and_the_same_words_join_it(api, workspace):
    first = api.post("/gaps", {"description": "Export invoices as PDF", "category": "feature",
                               "reason": "no PDF renderer tool"})
    assert first.status_code == 201, first.json()
    again = api.post("/gaps", {"description": "export   invoices as pdf"})
    assert again.status_code == 201 and again.json()["id"] == first.json()["id"]
    assert again.json()["frequency"] == 2
    listed = api.get("/gaps", status="detected").json()
    assert listed["count"] == 1 and listed["items"][0]["category"] == "feature"


def test_the_threshold_is_a_workspace_setting(api, admin_api, workspace):
    assert api.put("/gaps/policy", {"todo_threshold": 1}).status_code == 403  # admin business
    assert admin_api.put("/gaps/policy", {"todo_threshold": 1}).json() == {"todo_threshold": 1}
    gap = api.post("/gaps", {"description": "Book meeting rooms"}).json()
    assert gap["status"] == "todo_created"
    assert_error(admin_api.put("/gaps/policy", {"todo_threshold": 0}), 422)


def test_lifecycle_dismiss_keeps_counting_resolve_then_recurrence_reopens_as_a_regression(api, workspace):
    gap = api.post("/gaps", {"description": "Read the shared calendar"}).json()
    assert_error(api.post(f"/gaps/{gap['id']}/transition", {"action": "dismiss"}), 422)  # a reason is required
    dismissed = api.post(f"/gaps/{gap['id']}/transition", {"action": "dismiss", "reason": "privacy policy"}).json()
    assert dismissed["status"] == "wont_fix" and dismissed["reason"] == "privacy policy"
    for _ in range(3):
        counted = api.post("/gaps", {"description": "read the shared calendar"}).json()
    assert counted["frequency"] == 4 and counted["status"] == "wont_fix"  # silently: no TODO
    reopened = api.post(f"/gaps/{gap['id']}/transition", {"action": "reopen"}).json()
    assert reopened["status"] == "todo_created"  # past the threshold already
    resolved = api.post(f"/gaps/{gap['id']}/transition", {"action": "resolve", "reason": "calendar tool shipped"}).json()
    assert resolved["status"] == "resolved"
    assert_error(api.post(f"/gaps/{gap['id']}/transition", {"action": "resolve"}), 409)
    back = api.post("/gaps", {"description": "Read the shared calendar"}).json()
    assert back["status"] == "todo_created" and back["regression"] is True
    assert AuditEvent.objects.filter(verb="gap.reopen", target_id=str(gap["id"])).exists()


def test_rename_and_merge(api, workspace):
    a = api.post("/gaps", {"description": "Export invoices as PDF"}).json()
    b = api.post("/gaps", {"description": "Download bills in PDF format"}).json()
    renamed = api.patch(f"/gaps/{b['id']}", {"description": "Download bills as PDF", "category": "feature"}).json()
    assert renamed["description"] == "Download bills as PDF" and renamed["category"] == "feature"
    assert_error(api.patch(f"/gaps/{b['id']}", {"description": "export invoices as pdf"}), 409)
    merged = api.post(f"/gaps/{b['id']}/merge", {"into": a["id"]}).json()
    assert merged["id"] == a["id"] and merged["frequency"] == 2
    assert not CapabilityGap.objects.filter(pk=b["id"]).exists()
    assert_error(api.post(f"/gaps/{a['id']}/merge", {"into": a["id"]}), 422)


def test_scopes_outsiders_bad_input_and_secrets(api, outsider_api, make_key, workspace):
    gap = api.post("/gaps", {"description": "Export invoices as PDF"}).json()
    _, read_key = make_key(workspace, scopes="read", name="reader")
    reader = ApiClient(read_key)
    assert reader.get(f"/gaps/{gap['id']}").status_code == 200
    assert_error(reader.post("/gaps", {"description": "x"}), 403)
    assert_error(reader.post(f"/gaps/{gap['id']}/transition", {"action": "confirm"}), 403)
    for call in (lambda: outsider_api.get(f"/gaps/{gap['id']}"),
                 lambda: outsider_api.post(f"/gaps/{gap['id']}/transition", {"action": "confirm"}),
                 lambda: outsider_api.patch(f"/gaps/{gap['id']}", {"description": "mine"}),
                 lambda: outsider_api.post(f"/gaps/{gap['id']}/merge", {"into": gap["id"]})):
        assert_error(call(), 404)
    assert outsider_api.get("/gaps").json()["count"] == 0
    other = outsider_api.post("/gaps", {"description": "Something else"}).json()
    assert_error(api.post(f"/gaps/{gap['id']}/merge", {"into": other["id"]}), 404)
    assert_error(api.post("/gaps", {"description": "x", "interaction_id": 999999}), 404)
    for bad in ({"description": ""}, {"description": "   "}, {"description": "x" * 301}, {"category": "nope"},
                {"description": "x", "extra": 1}):
        assert_error(api.post("/gaps", bad), 422)
    assert_error(api.post(f"/gaps/{gap['id']}/transition", {"action": "explode"}), 422)
    before = CapabilityGap.objects.count(), GapEvidence.objects.count()
    refused = api.post("/gaps", {"description": "use token ghp_aB3dE5gH7jK9mN1pQ3sT5vW7yZ9bC1dF3hJ5"})
    assert_error(refused, 422, "secret_detected")
    assert (CapabilityGap.objects.count(), GapEvidence.objects.count()) == before


def test_erasing_the_only_person_who_asked_removes_the_gap_and_others_keep_theirs(api, workspace):
    pairs = []
    for n, (channel, person, request, answer) in enumerate(ASKED_THREE_WAYS[:2]):
        pairs.append(log_exchange(api, channel, person, request, answer, thread=f"t{n}", at=T0 + timedelta(days=n)))
        process(pairs[-1])
    gap = CapabilityGap.objects.get(workspace=workspace)
    assert gap.frequency == 2
    priya = Entity.objects.get(workspace=workspace, name="priya")
    receipt = entity_erase(entity=priya)
    assert receipt.get("gap evidence", 0) >= 1
    gap.refresh_from_db()
    assert gap.frequency == 1 and gap.entity_id != priya.pk
    marco = Entity.objects.get(workspace=workspace, name="marco@example.org")
    entity_erase(entity=marco)
    assert not CapabilityGap.objects.filter(workspace=workspace).exists()


# --- the issue tracker sink, against a local server speaking GitHub's and GitLab's routes ----

@pytest.fixture
def tracker(settings, eager_tasks):  # the task body runs here, against the local server
    server = TrackerServer()
    settings.MNEMO_TRACKER_KIND, settings.MNEMO_TRACKER_URL = "github", server.url
    settings.MNEMO_TRACKER_PROJECT, settings.MNEMO_TRACKER_TOKEN = GITHUB_PROJECT, TOKEN
    settings.MNEMO_PUBLIC_URL = "https://mnemo.example.org"
    yield server
    server.close()


@pytest.mark.django_db(transaction=True)  # the issue opens after the TODO's transaction commits
def test_at_the_threshold_an_issue_opens_with_the_evidence_and_follows_the_gap(api, workspace, tracker):
    for n, (channel, person, request, answer) in enumerate(ASKED_THREE_WAYS):
        process(log_exchange(api, channel, person, request, answer, thread=f"t{n}", at=T0 + timedelta(days=n)))
    gap = CapabilityGap.objects.get(workspace=workspace)
    [issue] = tracker.github.values()
    assert gap.issue_number == 1 and gap.todo_ref.startswith("https://github.com/")
    assert "pdf" in issue.title.lower() and issue.labels == ["mnemo", "capability-gap"]
    assert issue.body.count("| ") >= 3 and "slack" in issue.body and "cli" in issue.body
    assert f"https://mnemo.example.org/w/acme/gaps/{gap.pk}/" in issue.body
    assert AuditEvent.objects.filter(verb="gap.issue", target_id=str(gap.pk)).exists()
    api.post(f"/gaps/{gap.pk}/transition", {"action": "resolve", "reason": "PDF export shipped in 2.3"})
    assert issue.state == "closed" and "PDF export shipped" in issue.comments[-1]
    process(log_exchange(api, "slack", "zoe", "Could you export invoices as PDF for me?",
                         "I can't export invoices as PDF, sorry.", thread="again", at=T0 + timedelta(days=9)))
    gap.refresh_from_db()
    assert gap.regression and issue.state == "open" and "came back" in issue.comments[-1]
    assert len(tracker.github) == 1  # the same issue, reopened


@pytest.mark.django_db(transaction=True)
def test_a_tracker_that_refuses_leaves_the_todo_in_the_list(api, workspace, tracker, admin_api):
    admin_api.put("/gaps/policy", {"todo_threshold": 1})
    tracker.fail_next(401)
    gap = api.post("/gaps", {"description": "Export invoices as PDF"}).json()
    assert gap["status"] == "todo_created"
    row = CapabilityGap.objects.get(pk=gap["id"])
    assert row.issue_number is None and row.todo_ref == f"todo:{row.pk}"  # still in the built-in list
    assert tracker.github == {}


def test_a_new_gap_waits_once_in_the_review_queue_and_its_decisions_drive_the_gap(api, workspace):
    pair = log_exchange(api, *ASKED_THREE_WAYS[0], thread="t", at=T0)
    process(pair)
    gap = CapabilityGap.objects.get(workspace=workspace)
    [item] = api.get("/candidates", kind="gap").json()["items"]
    assert item["target_id"] == gap.pk and "Capability gap:" in item["text"]
    assert item["source_interaction_id"] == pair[1]  # the refusal, its span marked in the queue
    assert api.post(f"/candidates/{item['id']}/promote", {"note": "real"}).status_code == 200
    gap.refresh_from_db()
    assert gap.confirmed and gap.status == "detected"

    other = api.post("/gaps", {"description": "Translate replies into Finnish"}).json()
    [item] = [i for i in api.get("/candidates", kind="gap").json()["items"] if i["target_id"] == other["id"]]
    assert api.post(f"/candidates/{item['id']}/reject", {"note": "not our market"}).status_code == 200
    dismissed = CapabilityGap.objects.get(pk=other["id"])
    assert dismissed.status == "wont_fix" and dismissed.reason == "not our market"


def test_a_pack_warns_of_an_open_gap_near_the_query_and_not_of_others(api, workspace):
    for n, (channel, person, request, answer) in enumerate(ASKED_THREE_WAYS):
        process(log_exchange(api, channel, person, request, answer, thread=f"t{n}", at=T0 + timedelta(days=n)))
    gap = CapabilityGap.objects.get(workspace=workspace)
    pack = api.post("/context", {"query": "Could you export the invoices as a PDF?", "budget_tokens": 600}).json()
    [warning] = [w for w in pack["warnings"] if w["kind"] == "gap"]
    assert warning["id"] == gap.pk and "cannot yet" in warning["text"] and "3 times" in warning["text"]
    unrelated = api.post("/context", {"query": "What is Priya's favourite hiking trail?", "budget_tokens": 600}).json()
    assert not [w for w in unrelated["warnings"] if w["kind"] == "gap"]
    api.post(f"/gaps/{gap.pk}/transition", {"action": "resolve", "reason": "shipped"})
    solved = api.post("/context", {"query": "Could you export the invoices as a PDF?", "budget_tokens": 600}).json()
    assert not [w for w in solved["warnings"] if w["kind"] == "gap"]  # only open gaps warn


def test_repeated_failed_outcomes_become_a_gap_and_a_todo(api, workspace):
    services.gaps_scan_failures()  # the first scan starts the cursor at now: history is not replayed
    decisions = [api.post("/decisions", {"description": "Migrate the billing database without downtime",
                                         "confidence": 0.7}).json()["decision"]["id"] for _ in range(3)]
    ok = api.post("/decisions", {"description": "Rotate the on-call schedule", "confidence": 0.9}).json()
    for n, decision_id in enumerate(decisions):
        outcome = api.post(f"/decisions/{decision_id}/outcome", {"outcome": "failure", "result": f"lock timeout #{n}"})
        assert outcome.status_code == 200, outcome.json()
    api.post(f"/decisions/{ok['decision']['id']}/outcome", {"outcome": "success"})
    assert services.gaps_scan_failures() > 0
    assert services.gaps_scan_failures() == 0  # nothing new: the cursor moved
    [gap] = CapabilityGap.objects.filter(workspace=workspace)
    assert gap.description == "Migrate the billing database without downtime"
    assert gap.frequency == 3 and gap.status == "todo_created" and gap.rule == "gap.failed_decision"
    assert {e.reason for e in GapEvidence.objects.filter(gap=gap)} == {f"a decision failed: lock timeout #{n}"
                                                                       for n in range(3)}


def test_an_entity_merge_moves_the_gaps_a_person_asked_for_and_a_split_moves_them_back(api, workspace):
    process(log_exchange(api, *ASKED_THREE_WAYS[0], thread="t", at=T0))
    gap = CapabilityGap.objects.get(workspace=workspace)
    priya = Entity.objects.get(workspace=workspace, name="priya")
    other = Entity.objects.create(workspace=workspace, kind="person", name="Priya Raman")
    assert gap.entity_id == priya.pk
    merge = entity_merge(source=priya, target=other)
    gap.refresh_from_db()
    assert gap.entity_id == other.pk
    assert set(GapEvidence.objects.filter(gap=gap).values_list("entity_id", flat=True)) == {other.pk}
    entity_split(merge=merge)
    gap.refresh_from_db()
    assert gap.entity_id == priya.pk
    assert set(GapEvidence.objects.filter(gap=gap).values_list("entity_id", flat=True)) == {priya.pk}


def test_erasing_the_person_whose_words_named_a_gap_blanks_what_webhooks_copied_of_it(api, admin_api, workspace):
    admin_api.put("/gaps/policy", {"todo_threshold": 1})
    webhook_create(workspace=workspace, url="https://hooks.example.com/in", events=["gap.todo_created"],
                   actor=services.SYSTEM)
    process(log_exchange(api, *ASKED_THREE_WAYS[0], thread="t", at=T0))
    [delivery] = WebhookDelivery.objects.all()
    assert "invoices" in delivery.payload["data"]["description"]
    entity_erase(entity=Entity.objects.get(workspace=workspace, name="priya"))
    delivery.refresh_from_db()
    assert delivery.payload["data"] == {"erased": True} and delivery.status == "failed"
    assert not CapabilityGap.objects.exists()
