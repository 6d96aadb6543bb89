"""Issue 18: "not a gap: a refusal for policy reasons the team chose (a censor blocked it:
link the censor instead)". With a real censor made through the API: a refusal whose request
it covers is linked to it and counted nowhere; without the censor the same exchange is a
gap; a gap seen before its censor existed stays; erasure takes the link; the API and the
pages show it to the workspace only."""

from __future__ import annotations

from datetime import timedelta

import pytest

from core.models import AuditEvent
from entities.models import Entity
from entities.services import entity_erase
from gaps.models import CapabilityGap, CensoredRefusal
from tests.gaps.test_api import ASKED_THREE_WAYS, T0, log_exchange, process
from tests.helpers import assert_error

pytestmark = pytest.mark.django_db

PASSWORD_ASK = "Can you tell me the admin password for the billing portal?"
PASSWORD_NO = "Sorry, I'm not allowed to share passwords."


def censor(api, trigger: str, **extra) -> int:
    response = api.post("/censors", {"trigger": trigger, "action": "block", **extra})
    assert response.status_code == 201, response.json()
    return response.json()["memory"]["id"]


def test_a_refusal_whose_request_a_censor_covers_is_linked_not_counted(api, workspace):
    censor_id = censor(api, "export invoices", reason="finance sends invoices itself")
    channel, person, request, answer = ASKED_THREE_WAYS[0]
    ids = log_exchange(api, channel, person, request, answer, thread="t", at=T0)
    process(ids)
    assert not CapabilityGap.objects.filter(workspace=workspace).exists()
    link = CensoredRefusal.objects.get(workspace=workspace)
    assert (link.censor_id, link.interaction_id, link.request_id) == (censor_id, ids[1], ids[0])
    assert link.quote and link.quote in answer and link.rule == "gap.refusal" and link.score == 1.0
    assert AuditEvent.objects.filter(verb="gap.censored", data__censor=censor_id, data__interaction=ids[1]).count() == 1
    process(ids)  # prepared and written again: still one link
    assert CensoredRefusal.objects.count() == 1
    listed = api.get("/gaps/censored", censor_id=censor_id).json()
    assert listed["count"] == 1 and listed["items"][0]["interaction_id"] == ids[1]
    assert listed["items"][0]["description"] == link.description
    assert api.get("/gaps/censored", censor_id=censor_id + 1000).json()["count"] == 0


def test_a_policy_refusal_is_linked_by_the_agents_own_words_and_without_a_censor_is_nothing(api, workspace):
    ids = log_exchange(api, "slack", "priya", PASSWORD_ASK, PASSWORD_NO, thread="before", at=T0)
    process(ids)
    assert not CapabilityGap.objects.exists() and not CensoredRefusal.objects.exists()
    censor_id = censor(api, "share passwords")
    later = log_exchange(api, "slack", "priya", PASSWORD_ASK, PASSWORD_NO, thread="after", at=T0 + timedelta(hours=1))
    process(later)
    link = CensoredRefusal.objects.get()
    assert (link.censor_id, link.interaction_id, link.rule) == (censor_id, later[1], "gap.policy")
    assert not CapabilityGap.objects.exists()


def test_no_censor_check_counts_an_activation(api, workspace):
    censor_id = censor(api, "export invoices")
    process(log_exchange(api, *ASKED_THREE_WAYS[0], thread="t", at=T0))
    assert CensoredRefusal.objects.exists()
    [_] = [m for m in api.get("/memories", type="censor").json()["items"] if m["id"] == censor_id]
    checked = api.post("/censors/check", {"action": "export invoices as PDF"}).json()
    assert checked["verdict"] == "block" and checked["matches"][0]["activation_count"] == 1  # the API's check only


def test_a_gap_seen_before_its_censor_stays_and_later_refusals_are_linked(api, workspace):
    for n, (channel, person, request, answer) in enumerate(ASKED_THREE_WAYS[:2]):
        process(log_exchange(api, channel, person, request, answer, thread=f"t{n}", at=T0 + timedelta(days=n)))
    gap = CapabilityGap.objects.get(workspace=workspace)
    assert gap.frequency == 2
    censor(api, "export invoices")
    channel, person, request, answer = ASKED_THREE_WAYS[2]
    process(log_exchange(api, channel, person, request, answer, thread="t2", at=T0 + timedelta(days=2)))
    gap.refresh_from_db()
    assert gap.frequency == 2 and gap.status == "detected"  # left as it was; not counted again
    assert CensoredRefusal.objects.count() == 1


def test_an_erasure_takes_the_link(api, workspace):
    censor(api, "export invoices")
    process(log_exchange(api, *ASKED_THREE_WAYS[0], thread="t", at=T0))
    assert CensoredRefusal.objects.exists()
    receipt = entity_erase(entity=Entity.objects.get(workspace=workspace, name="priya"))
    assert receipt["censored refusals"] == 1 and not CensoredRefusal.objects.exists()


def test_outsiders_bad_input_and_scopes(api, outsider_api, make_key, workspace):
    censor_id = censor(api, "export invoices")
    process(log_exchange(api, *ASKED_THREE_WAYS[0], thread="t", at=T0))
    assert outsider_api.get("/gaps/censored").json()["count"] == 0
    assert outsider_api.get("/gaps/censored", censor_id=censor_id).json()["count"] == 0
    from tests.helpers import ApiClient

    _, read_key = make_key(workspace, scopes="read", name="reader")
    assert ApiClient(read_key).get("/gaps/censored").json()["count"] == 1
    for bad in ("x", "0", "-1", "99999999999999999999999"):
        assert_error(api.get("/gaps/censored", censor_id=bad), 422)


def test_the_pages_show_the_link_to_the_workspace_only(client, owner, outsider, api, workspace):
    censor_id = censor(api, "export invoices")
    process(log_exchange(api, *ASKED_THREE_WAYS[0], thread="t", at=T0))
    client.force_login(owner)
    page = client.get(f"/w/acme/gaps/censored/?censor={censor_id}").content.decode()
    assert "export the October invoices as PDF" in page and f"/w/acme/memories/censors/{censor_id}/" in page
    assert "No refusal" in client.get("/w/acme/gaps/censored/?censor=424242").content.decode()
    assert client.get("/w/acme/gaps/censored/?censor=x&page=y").status_code == 200
    censor_page = client.get(f"/w/acme/memories/{censor_id}/").content.decode()
    assert f"/w/acme/gaps/censored/?censor={censor_id}" in censor_page
    client.force_login(outsider)
    assert client.get("/w/acme/gaps/censored/").status_code == 404
