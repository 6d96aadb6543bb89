"""Per-workspace issue trackers for capability-gap TODOs (gaps.sinks): admins set them in the
API and on the gaps policy page, the token is write-only and never shown back, a test reads
the project, every call to a tracker is a delivery with its status, issue URL and last
error; two workspaces with their own projects each get their issues there, a workspace
without a tracker of its own uses the deployment's default, a disabled one none. Against a
local server speaking GitHub's and GitLab's routes (tests/trackers/tracker_server.py)."""

from __future__ import annotations

import json

import pytest

import trackers
from core.models import AuditEvent
from core.services import SYSTEM
from gaps import sinks
from gaps.models import CapabilityGap, GapSink, SinkDelivery
from tests.gaps.test_api import ASKED_THREE_WAYS, T0, log_exchange, process
from tests.helpers import ApiClient, assert_error
from tests.trackers.tracker_server import GITHUB_PROJECT, GITLAB_PROJECT, TOKEN, TrackerServer

pytestmark = pytest.mark.django_db

OTHER_REPO = "acme/billing"
GITHUB_TOKEN_LOOKING = "ghp_" + "aB3dE5gH7jK9mN1pQ3sT5vW7yZ9bC1dF3hJ5"


@pytest.fixture
def tracker(settings, eager_tasks):  # the task body runs here, against the local server
    server = TrackerServer()
    server.add_github_project(OTHER_REPO)
    settings.MNEMO_TRACKER_KIND = ""  # no deployment default unless a test sets one
    yield server
    server.close()


def github(server, project=GITHUB_PROJECT, **extra) -> dict:
    return {"kind": "github", "base_url": server.url, "project": project, "token": TOKEN, **extra}


def no_token_anywhere(*texts) -> bool:
    return all(TOKEN not in text for text in texts)


def audit_text() -> str:
    return json.dumps(list(AuditEvent.objects.values("verb", "data")), default=str)


# --- settings through the API -------------------------------------------------------------------

def test_an_admin_sets_the_tracker_and_the_token_is_never_shown_back(admin_api, workspace, tracker):
    response = admin_api.put("/gaps/sink", github(tracker))
    assert response.status_code == 200, response.json()
    body = response.json()
    assert body == {"source": "workspace", "kind": "github", "base_url": tracker.url, "project": GITHUB_PROJECT,
                    "enabled": True, "token_hint": f"…{TOKEN[-4:]}", "updated_at": body["updated_at"]}
    assert GapSink.objects.get(workspace=workspace).token == TOKEN
    assert no_token_anywhere(response.content.decode(), admin_api.get("/gaps/sink").content.decode(), audit_text())
    kept = admin_api.put("/gaps/sink", {"kind": "github", "base_url": tracker.url, "project": OTHER_REPO})
    assert kept.json()["project"] == OTHER_REPO and GapSink.objects.get().token == TOKEN  # omitted: kept
    assert [e.data["token"] for e in AuditEvent.objects.filter(verb="gap.sink").order_by("pk")] == ["changed", "kept"]


def test_precedence_the_workspaces_own_then_the_deployments_default(admin_api, workspace, tracker, settings):
    assert admin_api.get("/gaps/sink").json()["source"] == "none"
    settings.MNEMO_TRACKER_KIND, settings.MNEMO_TRACKER_URL = "gitlab", tracker.url + "/gitlab"
    settings.MNEMO_TRACKER_PROJECT, settings.MNEMO_TRACKER_TOKEN = GITLAB_PROJECT, TOKEN
    default = admin_api.get("/gaps/sink")
    assert default.json()["source"] == "deployment" and default.json()["project"] == GITLAB_PROJECT
    assert no_token_anywhere(default.content.decode())
    admin_api.put("/gaps/sink", github(tracker, enabled=False))
    assert sinks.tracker_for(workspace.pk) is None  # disabled: none, not the default
    assert admin_api.delete("/gaps/sink").status_code == 204
    assert sinks.tracker_for(workspace.pk).source == "deployment"
    assert_error(admin_api.delete("/gaps/sink"), 404)


def test_scopes_and_outsiders(api, admin_api, outsider_api, workspace, tracker):
    admin_api.put("/gaps/sink", github(tracker))
    for call in (lambda c: c.get("/gaps/sink"), lambda c: c.put("/gaps/sink", github(tracker)),
                 lambda c: c.delete("/gaps/sink"), lambda c: c.post("/gaps/sink/test"),
                 lambda c: c.get("/gaps/sink/deliveries")):
        assert_error(call(api), 403)  # read and write are not enough: admin business
    # An outsider's key reaches its own workspace only: nothing of ours shows or changes.
    assert outsider_api.get("/gaps/sink").json()["source"] == "none"
    assert_error(outsider_api.post("/gaps/sink/test"), 409)
    assert outsider_api.get("/gaps/sink/deliveries").json()["count"] == 0
    assert_error(outsider_api.delete("/gaps/sink"), 404)
    assert GapSink.objects.get(workspace=workspace).project == GITHUB_PROJECT


@pytest.mark.parametrize("change", [
    {"kind": "bitbucket"}, {"base_url": "ftp://tracker.example.com"}, {"base_url": "https://"},
    {"base_url": "https://tracker.example.com/x?y=1#z"}, {"project": ""}, {"project": "no-slash"},
    {"project": "a/b/c"}, {"token": "has spaces in it"}, {"token": "short"}, {"token": "x" * 501},
    {"token": "https://api.github.com"}, {"token": "tökén-with-non-ascii"}, {"extra": 1}, {"enabled": "maybe"},
])
def test_bad_settings_are_refused_and_nothing_is_stored(admin_api, tracker, change):
    response = admin_api.put("/gaps/sink", {**github(tracker), **change})
    assert_error(response, 422)
    assert not GapSink.objects.exists()
    assert no_token_anywhere(response.content.decode())


def test_a_first_setting_needs_a_token(admin_api, tracker):
    settings_without = {k: v for k, v in github(tracker).items() if k != "token"}
    assert_error(admin_api.put("/gaps/sink", settings_without), 422)
    assert not GapSink.objects.exists()


@pytest.mark.parametrize("field", ["base_url", "project"])
def test_a_token_placed_in_another_field_is_refused_and_never_echoed(admin_api, tracker, field):
    admin_api.put("/gaps/sink", github(tracker))
    before = GapSink.objects.values().get()
    tainted = {"base_url": f"{tracker.url}/{TOKEN}", "project": f"acme/{TOKEN}"}[field]
    response = admin_api.put("/gaps/sink", {**github(tracker), field: tainted})
    assert_error(response, 422)
    assert no_token_anywhere(response.content.decode())
    assert GapSink.objects.values().get() == before
    looks_like_one = {"base_url": f"{tracker.url}/{GITHUB_TOKEN_LOOKING}", "project": f"acme/{GITHUB_TOKEN_LOOKING}"}
    refused = admin_api.put("/gaps/sink", {**github(tracker), field: looks_like_one[field]})
    assert assert_error(refused, 422, "secret_detected")["details"]["field"] == field
    assert GITHUB_TOKEN_LOOKING not in refused.content.decode()


def test_the_service_refuses_a_secret_from_any_door(workspace, tracker):
    from django.core.exceptions import ValidationError

    with pytest.raises(ValidationError):
        sinks.sink_set(workspace=workspace, kind="github", base_url=tracker.url, project=f"acme/{GITHUB_TOKEN_LOOKING}",
                       token=TOKEN, enabled=True, actor=SYSTEM)
    assert not GapSink.objects.exists()


# --- the test delivery ---------------------------------------------------------------------------

def test_a_test_delivery_reads_the_project_and_logs_what_came_back(admin_api, workspace, tracker):
    assert_error(admin_api.post("/gaps/sink/test"), 409)  # nothing configured
    admin_api.put("/gaps/sink", github(tracker))
    ok = admin_api.post("/gaps/sink/test")
    assert ok.status_code == 201 and ok.json()["status"] == "delivered" and ok.json()["action"] == "test"
    assert tracker.requests[-1]["method"] == "GET" and tracker.github == {}  # opened nothing
    admin_api.put("/gaps/sink", {**github(tracker), "token": "wrong-token-for-this-tracker"})
    failed = admin_api.post("/gaps/sink/test").json()
    assert failed["status"] == "failed" and failed["last_status_code"] == 401 and "401" in failed["last_error"]
    admin_api.put("/gaps/sink", github(tracker, project="acme/unknown"))
    assert admin_api.post("/gaps/sink/test").json()["last_status_code"] == 404
    listed = admin_api.get("/gaps/sink/deliveries").json()
    assert [d["status"] for d in listed["items"]] == ["failed", "failed", "delivered"]
    assert AuditEvent.objects.filter(verb="gap.sink_test").count() == 3


def test_a_gitlab_test_delivery(admin_api, tracker):
    admin_api.put("/gaps/sink", {"kind": "gitlab", "base_url": tracker.url + "/gitlab", "project": GITLAB_PROJECT,
                                 "token": TOKEN})
    assert admin_api.post("/gaps/sink/test").json()["status"] == "delivered"
    assert tracker.requests[-1]["path"] == "/gitlab/api/v4/projects/acme%2Fplatform%2Fagents"


def test_a_tracker_that_echoes_the_token_has_it_masked_in_the_log(workspace, tracker):
    sinks.sink_set(workspace=workspace, actor=SYSTEM, enabled=True, **github(tracker))
    tracker.fail_next(422, body={"message": f"bad token {TOKEN}"})
    delivery = sinks.sink_test(workspace=workspace, actor=SYSTEM)
    assert delivery.status == "failed" and TOKEN not in delivery.last_error and "***" in delivery.last_error


# --- deliveries of issues --------------------------------------------------------------------------

def _threshold_one(client: ApiClient) -> None:
    assert client.put("/gaps/policy", {"todo_threshold": 1}).status_code == 200


@pytest.mark.django_db(transaction=True)  # issues open after the TODO's transaction commits
def test_two_workspaces_open_issues_in_their_own_projects(workspace, other_workspace, make_key, tracker):
    acme = ApiClient(make_key(workspace, scopes="read,write,admin", name="acme")[1])
    globex = ApiClient(make_key(other_workspace, scopes="read,write,admin", name="globex")[1])
    acme.put("/gaps/sink", github(tracker))
    globex.put("/gaps/sink", github(tracker, project=OTHER_REPO))
    for client in (acme, globex):
        _threshold_one(client)
    process(log_exchange(acme, *ASKED_THREE_WAYS[0], thread="t", at=T0))
    globex.post("/gaps", {"description": "Book meeting rooms"})
    acme_gap = CapabilityGap.objects.get(workspace=workspace)
    globex_gap = CapabilityGap.objects.get(workspace=other_workspace)
    assert acme_gap.todo_ref == f"https://github.com/{GITHUB_PROJECT}/issues/1"
    assert globex_gap.todo_ref == f"https://github.com/{OTHER_REPO}/issues/1"
    assert "PDF" in tracker.github[1].title and "meeting rooms" in tracker.github_projects[OTHER_REPO][1].title
    [acme_delivery] = acme.get("/gaps/sink/deliveries").json()["items"]
    [globex_delivery] = globex.get("/gaps/sink/deliveries").json()["items"]
    assert (acme_delivery["action"], acme_delivery["status"], acme_delivery["issue_url"], acme_delivery["gap_id"]) == (
        "open", "delivered", acme_gap.todo_ref, acme_gap.pk)
    assert (globex_delivery["project"], globex_delivery["issue_number"]) == (OTHER_REPO, 1)
    assert acme_delivery["attempts"] == 1 and acme_delivery["source"] == "workspace"

    acme.post(f"/gaps/{acme_gap.pk}/transition", {"action": "resolve", "reason": "shipped"})
    assert tracker.github[1].state == "closed"
    close = SinkDelivery.objects.get(workspace=workspace, action="close")
    assert close.status == "delivered" and close.issue_number == 1


@pytest.mark.django_db(transaction=True)
def test_the_deployment_default_serves_workspaces_without_their_own_and_disabled_means_none(
        workspace, other_workspace, make_key, tracker, settings):
    settings.MNEMO_TRACKER_KIND, settings.MNEMO_TRACKER_URL = "gitlab", tracker.url + "/gitlab"
    settings.MNEMO_TRACKER_PROJECT, settings.MNEMO_TRACKER_TOKEN = GITLAB_PROJECT, TOKEN
    acme = ApiClient(make_key(workspace, scopes="read,write,admin", name="acme")[1])
    globex = ApiClient(make_key(other_workspace, scopes="read,write,admin", name="globex")[1])
    globex.put("/gaps/sink", github(tracker, enabled=False))
    for client in (acme, globex):
        _threshold_one(client)
    acme.post("/gaps", {"description": "Export invoices as PDF"})
    globex.post("/gaps", {"description": "Book meeting rooms"})
    assert [issue.title for issue in tracker.gitlab.values()] == ["Capability gap: Export invoices as PDF"]
    assert tracker.github == {} and not SinkDelivery.objects.filter(workspace=other_workspace).exists()
    assert SinkDelivery.objects.get(workspace=workspace).source == "deployment"
    assert CapabilityGap.objects.get(workspace=other_workspace).todo_ref.startswith("todo:")  # still in the list


@pytest.mark.django_db(transaction=True)
def test_a_close_after_the_tracker_moved_is_skipped_and_says_why(admin_api, api, workspace, tracker):
    admin_api.put("/gaps/sink", github(tracker))
    _threshold_one(admin_api)
    gap = api.post("/gaps", {"description": "Export invoices as PDF"}).json()
    admin_api.put("/gaps/sink", github(tracker, project=OTHER_REPO))
    api.post(f"/gaps/{gap['id']}/transition", {"action": "resolve", "reason": "shipped"})
    close = SinkDelivery.objects.get(action="close")
    assert close.status == "skipped" and GITHUB_PROJECT in close.last_error and OTHER_REPO in close.last_error
    assert tracker.github[1].state == "open" and tracker.github_projects[OTHER_REPO] == {}


def test_a_retryable_failure_stays_pending_with_its_error_and_the_last_try_fails(workspace, tracker):
    sinks.sink_set(workspace=workspace, actor=SYSTEM, enabled=True, **github(tracker))
    gap = CapabilityGap.objects.create(workspace=workspace, description="Export invoices as PDF", key="pdf",
                                       status="todo_created", frequency=3)
    delivery = sinks.issue_open_queue(gap=gap)
    tracker.fail_next(503)
    with pytest.raises(trackers.TrackerError):
        sinks.issue_deliver(delivery_id=delivery.pk)
    delivery.refresh_from_db()
    assert (delivery.status, delivery.attempts, delivery.last_status_code) == ("pending", 1, 503)
    tracker.fail_next(503)
    with pytest.raises(trackers.TrackerError):
        sinks.issue_deliver(delivery_id=delivery.pk, final=True)
    delivery.refresh_from_db()
    assert (delivery.status, delivery.attempts) == ("failed", 2)
    assert sinks.issue_deliver(delivery_id=delivery.pk) is None  # no longer pending: nothing sent
    assert tracker.github == {}


def test_an_open_for_a_gap_that_has_an_issue_is_skipped(workspace, tracker):
    sinks.sink_set(workspace=workspace, actor=SYSTEM, enabled=True, **github(tracker))
    gap = CapabilityGap.objects.create(workspace=workspace, description="Export invoices as PDF", key="pdf",
                                       status="todo_created", frequency=3)
    delivery = sinks.issue_open_queue(gap=gap)
    CapabilityGap.objects.filter(pk=gap.pk).update(issue_number=7)
    assert sinks.issue_deliver(delivery_id=delivery.pk).status == "skipped"
    assert tracker.requests == []


# --- the policy page --------------------------------------------------------------------------------

def test_the_policy_page_full_partial_and_forbidden(client, owner, teammate, outsider, workspace, tracker):
    client.force_login(owner)
    page = client.get("/w/acme/gaps/policy/")
    assert page.status_code == 200 and "Issue tracker" in page.content.decode() and "TODO threshold" in page.content.decode()
    partial = client.get("/w/acme/gaps/policy/", headers={"HX-Request": "true"}).content.decode()
    assert partial.lstrip().startswith('<section id="deliveries"')
    client.force_login(teammate)
    assert client.get("/w/acme/gaps/policy/").status_code == 403
    assert client.post("/w/acme/gaps/policy/sink/", {"kind": "github"}).status_code == 403
    assert client.post("/w/acme/gaps/policy/sink/test/").status_code == 403
    client.force_login(outsider)
    for url in ("/w/acme/gaps/policy/", "/w/acme/gaps/policy/sink/", "/w/acme/gaps/policy/sink/test/"):
        assert (client.get(url) if url.endswith("policy/") else client.post(url)).status_code == 404
    assert not GapSink.objects.exists()


def test_an_admin_saves_tests_and_removes_the_tracker_on_the_page(client, owner, workspace, tracker):
    client.force_login(owner)
    form = {"kind": "github", "base_url": tracker.url, "project": GITHUB_PROJECT, "token": TOKEN, "enabled": "on"}
    response = client.post("/w/acme/gaps/policy/sink/", form, follow=True)
    assert GapSink.objects.get().token == TOKEN and "Saved" in response.content.decode()
    page = client.get("/w/acme/gaps/policy/").content.decode()
    assert TOKEN not in page and f"…{TOKEN[-4:]}" in page and GITHUB_PROJECT in page
    tested = client.post("/w/acme/gaps/policy/sink/test/", headers={"HX-Request": "true"})
    assert tested["HX-Trigger"] == "sink-tested" and "the settings work" in tested.content.decode()
    assert tested.content.decode().lstrip().startswith('<section id="deliveries"')
    client.post("/w/acme/gaps/policy/sink/", {**form, "token": "", "enabled": ""})  # empty: keep the token
    sink = GapSink.objects.get()
    assert sink.token == TOKEN and not sink.enabled
    refused = client.post("/w/acme/gaps/policy/sink/", {**form, "project": f"acme/{TOKEN}"}, follow=True)
    assert TOKEN not in refused.content.decode() and GapSink.objects.get().project == GITHUB_PROJECT
    assert client.post("/w/acme/gaps/policy/sink/explode/").status_code == 404
    client.post("/w/acme/gaps/policy/sink/remove/")
    assert not GapSink.objects.exists()
    failed = client.post("/w/acme/gaps/policy/sink/test/", headers={"HX-Request": "true"})
    assert failed.status_code == 409  # nothing configured any more


def test_the_migration_is_complete_and_the_database_holds_the_constraints(workspace):
    from django.core.management import call_command
    from django.db import IntegrityError, transaction

    call_command("makemigrations", "gaps", "--check", "--dry-run", verbosity=0)  # exits non-zero when one is missing
    for bad in ({"kind": "svn"}, {"base_url": "ftp://x"}, {"token": ""}):
        with pytest.raises(IntegrityError), transaction.atomic():
            GapSink.objects.create(workspace=workspace, **{"kind": "github", "base_url": "https://api.github.com",
                                                          "project": "a/b", "token": TOKEN, **bad})
    with pytest.raises(IntegrityError), transaction.atomic():
        SinkDelivery.objects.create(workspace=workspace, action="explode")


# --- a person sends a failed delivery again ---------------------------------------------------------

def _failed_open(workspace, tracker) -> tuple[CapabilityGap, SinkDelivery]:
    sinks.sink_set(workspace=workspace, actor=SYSTEM, enabled=True, **github(tracker))
    gap = CapabilityGap.objects.create(workspace=workspace, description="Export invoices as PDF", key="pdf",
                                       status="todo_created", frequency=3)
    delivery = sinks.issue_open_queue(gap=gap)
    tracker.fail_next(401)  # a revoked token: retrying cannot help, failed at once
    with pytest.raises(trackers.TrackerError):
        sinks.issue_deliver(delivery_id=delivery.pk)
    delivery.refresh_from_db()
    assert (delivery.status, delivery.last_status_code) == ("failed", 401)
    return gap, delivery


@pytest.mark.django_db(transaction=True)  # the retry is sent once its transaction commits
def test_an_admin_retries_a_failed_delivery_and_the_issue_opens(admin_api, workspace, tracker):
    gap, delivery = _failed_open(workspace, tracker)
    response = admin_api.post(f"/gaps/sink/deliveries/{delivery.pk}/retry")
    assert response.status_code == 202, response.json()
    assert response.json()["id"] == delivery.pk
    delivery.refresh_from_db()
    gap.refresh_from_db()
    assert (delivery.status, delivery.attempts, delivery.last_error) == ("delivered", 2, "")
    assert gap.todo_ref == f"https://github.com/{GITHUB_PROJECT}/issues/1" and len(tracker.github) == 1
    assert AuditEvent.objects.filter(verb="gap.delivery_retry", target_id=str(delivery.pk)).count() == 1
    # Delivered now: a second retry is refused and sends nothing.
    assert_error(admin_api.post(f"/gaps/sink/deliveries/{delivery.pk}/retry"), 409)
    assert len(tracker.github) == 1


def test_only_a_failed_open_close_or_reopen_is_retried(admin_api, api, outsider_api, workspace, tracker):
    gap, delivery = _failed_open(workspace, tracker)
    test = admin_api.post("/gaps/sink/test").json()
    assert_error(admin_api.post(f"/gaps/sink/deliveries/{test['id']}/retry"), 409)  # a test: run it again
    pending = SinkDelivery.objects.create(workspace=workspace, gap=gap, action="close", kind="github",
                                          base_url=tracker.url, project=GITHUB_PROJECT)
    assert_error(admin_api.post(f"/gaps/sink/deliveries/{pending.pk}/retry"), 409)
    assert_error(api.post(f"/gaps/sink/deliveries/{delivery.pk}/retry"), 403)  # admin business
    assert_error(outsider_api.post(f"/gaps/sink/deliveries/{delivery.pk}/retry"), 404)
    for bad in ("0", "-1", "abc", "99999999999999999999"):
        assert admin_api.post(f"/gaps/sink/deliveries/{bad}/retry").status_code in (404, 422)
    assert_error(admin_api.post("/gaps/sink/deliveries/987654/retry"), 404)
    delivery.refresh_from_db()
    assert delivery.status == "failed" and tracker.github == {}


def test_the_policy_page_offers_retry_on_a_failed_delivery(client, owner, teammate, outsider, workspace, tracker,
                                                           django_capture_on_commit_callbacks):
    gap, delivery = _failed_open(workspace, tracker)
    url = f"/w/acme/gaps/policy/deliveries/{delivery.pk}/retry/"
    client.force_login(teammate)
    assert client.post(url).status_code == 403
    client.force_login(outsider)
    assert client.post(url).status_code == 404
    client.force_login(owner)
    page = client.get("/w/acme/gaps/policy/").content.decode()
    assert f'action="{url}"' in page and f"Retry delivery {delivery.pk}" in page
    with django_capture_on_commit_callbacks(execute=True):
        answer = client.post(url, headers={"HX-Request": "true"})
    assert answer.status_code == 200 and answer.content.decode().lstrip().startswith('<section id="deliveries"')
    assert "Sent again" in answer.content.decode() and f'action="{url}"' not in answer.content.decode()
    delivery.refresh_from_db()
    assert delivery.status == "delivered" and len(tracker.github) == 1
    refused = client.post(url, headers={"HX-Request": "true"})
    assert refused.status_code == 409 and "delivered" in refused.content.decode()
    assert client.post("/w/acme/gaps/policy/deliveries/987654/retry/").status_code == 404


@pytest.mark.django_db(transaction=True)  # two workers, two connections
def test_two_workers_handed_the_same_delivery_open_one_issue(workspace, tracker):
    import threading

    from django.db import connection as default_connection

    sinks.sink_set(workspace=workspace, actor=SYSTEM, enabled=True, **github(tracker))
    gap = CapabilityGap.objects.create(workspace=workspace, description="Export invoices as PDF", key="pdf",
                                       status="todo_created", frequency=3)
    delivery = sinks.issue_open_queue(gap=gap)
    tracker.slow_next(1.5)  # the first worker's call is still out when the second starts
    results: list = []

    def worker():
        try:
            results.append(sinks.issue_deliver(delivery_id=delivery.pk))
        finally:
            default_connection.close()

    first = threading.Thread(target=worker)
    first.start()
    while SinkDelivery.objects.filter(pk=delivery.pk, claimed_until__isnull=True).exists():
        pass  # until the first worker has claimed it
    second = threading.Thread(target=worker)
    second.start()
    first.join(30)
    second.join(30)
    assert sorted(str(r.status) if r else "none" for r in results) == ["delivered", "none"]
    assert len(tracker.github) == 1
    delivery.refresh_from_db()
    assert (delivery.status, delivery.attempts, delivery.claimed_until) == ("delivered", 1, None)


def test_a_claim_whose_worker_died_lapses(workspace, tracker):
    from datetime import timedelta

    from django.utils import timezone

    sinks.sink_set(workspace=workspace, actor=SYSTEM, enabled=True, **github(tracker))
    gap = CapabilityGap.objects.create(workspace=workspace, description="Export invoices as PDF", key="pdf",
                                       status="todo_created", frequency=3)
    delivery = sinks.issue_open_queue(gap=gap)
    SinkDelivery.objects.filter(pk=delivery.pk).update(claimed_until=timezone.now() + timedelta(seconds=60))
    assert sinks.issue_deliver(delivery_id=delivery.pk) is None and tracker.github == {}  # someone is on it
    SinkDelivery.objects.filter(pk=delivery.pk).update(claimed_until=timezone.now() - timedelta(seconds=1))
    assert sinks.issue_deliver(delivery_id=delivery.pk).status == "delivered" and len(tracker.github) == 1
