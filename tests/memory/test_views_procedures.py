"""The procedures and censors pages (issue 21 part 4): lists with filters that combine and
are never a 5xx, pages with effectiveness, flags, false positives, provenance and the audit
trail; reviewers change a status after a confirmation page (the queue's own decision when
the row waits there), viewers only read (403), outsiders get 404."""

from __future__ import annotations

import pytest

from core.models import AuditEvent
from core.services import SYSTEM
from memory.models import Censor, CensorAction, Memory, MemoryStatus
from memory.services import Draft, censor_create, censor_false_positive, procedure_create, procedure_outcome
from review.models import ReviewItem

pytestmark = pytest.mark.django_db


def _procedure(workspace, name="Deploy the billing service", failures=0, successes=0):
    procedure = procedure_create(workspace_id=workspace.pk, name=name, steps=["run the tests", "roll out"]).memory.procedure
    for outcome, times in (("failure", failures), ("success", successes)):
        for _ in range(times):
            procedure = procedure_outcome(procedure=procedure, outcome=outcome, actor=SYSTEM)
    return procedure


def _censor(workspace, trigger="deploy on Fridays", action=CensorAction.WARN, activations=0) -> Censor:
    censor = censor_create(workspace_id=workspace.pk, trigger=trigger, reason="weekend pages", action=action).memory.censor
    Censor.objects.filter(pk=censor.pk).update(activation_count=activations)
    censor.refresh_from_db()
    return censor


def test_the_procedures_list_filters_by_status_flag_and_text(client, viewer, workspace):
    failing = _procedure(workspace, "Restart the cache", failures=5)
    working = _procedure(workspace, "Deploy the billing service", successes=2)
    client.force_login(viewer)
    html = client.get("/w/acme/memories/procedures/").content.decode()
    assert f'id="procedure-{failing.pk}"' in html and f'id="procedure-{working.pk}"' in html
    html = client.get("/w/acme/memories/procedures/?flagged=yes").content.decode()
    assert f'id="procedure-{failing.pk}"' in html and f'id="procedure-{working.pk}"' not in html
    html = client.get("/w/acme/memories/procedures/?q=billing&status=active").content.decode()
    assert f'id="procedure-{working.pk}"' in html and f'id="procedure-{failing.pk}"' not in html
    html = client.get("/w/acme/memories/procedures/?order=worst").content.decode()
    assert html.index(f'id="procedure-{failing.pk}"') < html.index(f'id="procedure-{working.pk}"')
    partial = client.get("/w/acme/memories/procedures/?flagged=no", headers={"HX-Request": "true"}).content.decode()
    assert partial.lstrip().startswith('<div id="rows">') and f'id="procedure-{working.pk}"' in partial


def test_the_lists_have_an_empty_state_and_a_way_out_of_an_empty_filter(client, viewer, workspace):
    client.force_login(viewer)
    assert "No procedures yet" in client.get("/w/acme/memories/procedures/").content.decode()
    assert "No censors yet" in client.get("/w/acme/memories/censors/").content.decode()
    _censor(workspace)
    html = client.get("/w/acme/memories/censors/?action=absolute").content.decode()
    assert "No censor matches" in html and "clear the filters" in html


@pytest.mark.parametrize("query", ["status=bogus", "flagged=%00", "order=1;drop", "page=-3", "page=abc", "page=99999999999999999999",
                                   "q=" + "x" * 5000, "q=%00%ff"])
def test_bad_query_parameters_are_ignored_never_a_5xx(client, viewer, workspace, query):
    _procedure(workspace)
    _censor(workspace)
    client.force_login(viewer)
    for path in ("/w/acme/memories/procedures/", "/w/acme/memories/censors/"):
        response = client.get(f"{path}?{query}")
        # A NUL is the middleware's 400 (core.middleware), anything else is read leniently.
        assert response.status_code == (400 if "%00" in query else 200), (path, query)
    html = client.get("/w/acme/memories/censors/?action=nuke&learned=everything").content.decode()
    assert "Ignored (not a value this page knows): action, learned" in html


def test_the_lists_paginate(client, viewer, workspace):
    for i in range(52):
        censor_create(workspace_id=workspace.pk, trigger=f"touch system number {i}")
    client.force_login(viewer)
    first = client.get("/w/acme/memories/censors/").content.decode()
    second = client.get("/w/acme/memories/censors/?page=2").content.decode()
    assert first.count('id="censor-') == 50 and second.count('id="censor-') == 2
    assert "Page 1 of 2" in first and "Page 2 of 2" in second


def test_a_procedure_page_shows_its_effectiveness_flag_and_audit(client, viewer, workspace):
    procedure = _procedure(workspace, "Restart the cache", failures=4, successes=1)
    client.force_login(viewer)
    html = client.get(f"/w/acme/memories/procedures/{procedure.pk}/").content.decode()
    assert "Worked 1 of 5 uses" in html and "<strong>0.20</strong>" in html
    assert 'id="flag"' in html and "procedure.flag" in html and "procedure.outcome" in html
    assert "Change its status" not in html  # viewers only read


def test_a_censor_page_shows_false_positives_and_what_taught_it(client, teammate, workspace):
    procedure = _procedure(workspace, "Restart the cache", failures=5)
    item = ReviewItem.objects.get(kind="low_effectiveness", target_id=procedure.pk)
    client.force_login(teammate)
    client.post(f"/w/acme/memories/procedures/{procedure.pk}/retire/", {"note": "never works"})
    item.refresh_from_db()
    assert item.status == "approved"  # decided through the queue, so a censor was learned
    censor = Memory.objects.get(metadata__learned_from={"kind": "procedure", "id": procedure.pk}).censor
    Memory.objects.filter(pk=censor.pk).update(status=MemoryStatus.ACTIVE)
    Censor.objects.filter(pk=censor.pk).update(activation_count=2)
    censor_false_positive(censor=censor, actor=SYSTEM, note="it was a cache warm-up, not a restart")
    html = client.get(f"/w/acme/memories/censors/{censor.pk}/").content.decode()
    assert f'href="/w/acme/memories/procedures/{procedure.pk}/">procedure #{procedure.pk}</a>' in html
    assert "it was a cache warm-up, not a restart" in html
    page = client.get(f"/w/acme/memories/procedures/{procedure.pk}/").content.decode()
    assert f'href="/w/acme/memories/censors/{censor.pk}/"' in page  # "Censors it taught"
    listing = client.get("/w/acme/memories/censors/?learned=procedure").content.decode()
    assert f'id="censor-{censor.pk}"' in listing


def test_a_reviewer_confirms_before_a_status_changes(client, teammate, workspace):
    censor = _censor(workspace)
    client.force_login(teammate)
    confirm = client.get(f"/w/acme/memories/censors/{censor.pk}/retire/")
    assert confirm.status_code == 200 and "Retire?" in confirm.content.decode()
    assert Memory.objects.get(pk=censor.pk).status == MemoryStatus.ACTIVE  # asking changed nothing
    response = client.post(f"/w/acme/memories/censors/{censor.pk}/retire/", {"note": "obsolete"})
    assert response.status_code == 302 and response["Location"] == f"/w/acme/memories/censors/{censor.pk}/"
    assert Memory.objects.get(pk=censor.pk).status == MemoryStatus.INVALID
    event = AuditEvent.objects.get(verb="memory.invalidate", target_id=str(censor.pk))
    assert event.actor_label == "user:tomas" and event.data["reason"] == "obsolete"


def test_activating_a_candidate_decides_its_review_item(client, teammate, workspace):
    learned = censor_create(workspace_id=workspace.pk, trigger="email customers at night",
                            draft=Draft(type="censor", text="", certainty="inferred", confidence=0.5)).memory
    assert learned.status == MemoryStatus.CANDIDATE
    item = ReviewItem.objects.get(kind="memory", target_id=learned.pk)
    client.force_login(teammate)
    client.post(f"/w/acme/memories/censors/{learned.pk}/activate/")
    item.refresh_from_db()
    assert Memory.objects.get(pk=learned.pk).status == MemoryStatus.ACTIVE and item.status == "approved"


def test_an_absolute_censor_offers_no_false_positive(client, teammate, workspace):
    censor = _censor(workspace, action=CensorAction.ABSOLUTE, activations=3)
    client.force_login(teammate)
    html = client.get(f"/w/acme/memories/censors/{censor.pk}/").content.decode()
    assert "false-positive/" not in html and "Absolute: it refuses without override" in html
    response = client.post(f"/w/acme/memories/censors/{censor.pk}/false-positive/", follow=True)
    assert "does not apply" in response.content.decode()
    assert Censor.objects.get(pk=censor.pk).false_positive_count == 0


def test_a_reviewer_reports_a_false_positive(client, teammate, workspace):
    censor = _censor(workspace, activations=2)
    client.force_login(teammate)
    client.post(f"/w/acme/memories/censors/{censor.pk}/false-positive/", {"note": "a dry run"})
    assert Censor.objects.get(pk=censor.pk).false_positive_count == 1
    html = client.get(f"/w/acme/memories/censors/{censor.pk}/").content.decode()
    assert "a dry run" in html


def test_a_secret_in_the_note_is_refused_and_nothing_changes(client, teammate, workspace):
    censor = _censor(workspace)
    client.force_login(teammate)
    response = client.post(f"/w/acme/memories/censors/{censor.pk}/retire/",
                           {"note": "key AKIAIOSFODNN7EXAMPLE wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"}, follow=True)
    assert response.status_code == 200
    assert Memory.objects.get(pk=censor.pk).status == MemoryStatus.ACTIVE


def test_an_action_that_does_not_apply_or_does_not_exist(client, teammate, workspace):
    procedure = _procedure(workspace)
    client.force_login(teammate)
    assert client.get(f"/w/acme/memories/procedures/{procedure.pk}/explode/").status_code == 404
    # A procedure has no false positives; an active one cannot be activated.
    for action in ("false-positive", "activate"):
        response = client.post(f"/w/acme/memories/procedures/{procedure.pk}/{action}/", follow=True)
        assert "does not apply" in response.content.decode()
    assert Memory.objects.get(pk=procedure.pk).status == MemoryStatus.ACTIVE
    # A censor's id is not a procedure's page, and the other way round.
    censor = _censor(workspace)
    assert client.get(f"/w/acme/memories/procedures/{censor.pk}/").status_code == 404
    assert client.get(f"/w/acme/memories/censors/{procedure.pk}/").status_code == 404


def test_viewers_cannot_change_a_status(client, viewer, workspace):
    censor = _censor(workspace)
    client.force_login(viewer)
    assert client.get(f"/w/acme/memories/censors/{censor.pk}/retire/").status_code == 403
    assert client.post(f"/w/acme/memories/censors/{censor.pk}/retire/").status_code == 403
    assert Memory.objects.get(pk=censor.pk).status == MemoryStatus.ACTIVE


def test_outsiders_get_404_everywhere(client, outsider, workspace, other_workspace):
    procedure, censor = _procedure(workspace), _censor(workspace)
    client.force_login(outsider)
    for path in ("/w/acme/memories/procedures/", "/w/acme/memories/censors/",
                 f"/w/acme/memories/procedures/{procedure.pk}/", f"/w/acme/memories/censors/{censor.pk}/"):
        assert client.get(path).status_code == 404, path
    # Their own workspace's pages do not reach our rows either.
    for path in (f"/w/globex/memories/procedures/{procedure.pk}/", f"/w/globex/memories/censors/{censor.pk}/",
                 f"/w/globex/memories/censors/{censor.pk}/retire/"):
        assert client.get(path).status_code == 404, path
    assert client.post(f"/w/globex/memories/censors/{censor.pk}/retire/").status_code == 404
    assert Memory.objects.get(pk=censor.pk).status == MemoryStatus.ACTIVE
