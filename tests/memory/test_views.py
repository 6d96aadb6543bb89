"""Memory pages: the list (search, type/status chips, htmx rows), the memory page
(evidence with the quote marked and linked to its conversation, history, reinforcement,
graduation), reviewers' actions, trusted state, the trust policy; viewers see but cannot act (403),
outsiders get 404."""

from __future__ import annotations

import re

import pytest

from conversations import services as conversation_services
from conversations.services import InteractionItem
from core.services import Actor
from entities.services import entity_create
from memory import services
from memory.models import Memory, TrustedState, TrustPolicy

pytestmark = pytest.mark.django_db


@pytest.fixture
def evidenced(workspace):
    [result] = conversation_services.interactions_log(workspace=workspace, items=[InteractionItem(
        channel="slack", channel_id="U1", sender_name="Ada", content="Note: the deploy window is Tuesday 10:00. Thanks!")])
    stored = services.memory_store(workspace_id=workspace.pk, draft=services.Draft(
        type="fact", text="The deploy window is Tuesday 10:00.", certainty="extracted", confidence=0.95,
        subject_id=result.entity_id,
        evidence=[services.Evidence(result.id, "the deploy window is Tuesday 10:00", 6, 40)]))
    return stored.memory


@pytest.fixture
def candidate(workspace):
    return services.memory_store(workspace_id=workspace.pk, draft=services.Draft(
        type="preference", text="Ada might prefer mornings.", certainty="inferred", confidence=0.5)).memory


def test_the_list_filters_and_searches(client, viewer, evidenced, candidate):
    client.force_login(viewer)
    html = client.get("/w/acme/memories/").content.decode()
    assert "The deploy window is Tuesday 10:00." in html and "Ada might prefer mornings." in html
    assert "Ada might prefer mornings." not in client.get("/w/acme/memories/?status=active").content.decode()
    assert "deploy window" not in client.get("/w/acme/memories/?type=preference").content.decode()
    partial = client.get("/w/acme/memories/?q=deploy", headers={"HX-Request": "true"}).content.decode()
    assert partial.lstrip().startswith('<div id="rows">') and "deploy window" in partial and "mornings" not in partial


def test_the_memory_page_marks_the_quote_and_links_the_conversation(client, viewer, evidenced):
    client.force_login(viewer)
    html = client.get(f"/w/acme/memories/{evidenced.pk}/").content.decode()
    assert "<mark>the deploy window is Tuesday 10:00</mark>" in html
    interaction = evidenced.evidence.get().interaction
    assert f"/w/acme/conversations/{interaction.conversation_id}/#i{interaction.pk}" in html
    assert "memory.create" in html and "memory.auto_approve" in html
    assert "Mark invalid" not in html  # a viewer sees no actions


def test_reviewers_approve_reject_edit_and_graduate(client, teammate, evidenced, candidate):
    client.force_login(teammate)
    response = client.post(f"/w/acme/memories/{candidate.pk}/approve/")
    assert response.status_code == 302
    assert Memory.objects.get(pk=candidate.pk).status == "active"
    again = client.post(f"/w/acme/memories/{candidate.pk}/approve/", follow=True).content.decode()
    assert "only candidate" in again  # the 409 shows as a message
    edited = client.post(f"/w/acme/memories/{evidenced.pk}/edit/", {"text": "The deploy window is Tuesday 11:00."})
    new = Memory.objects.get(supersedes=evidenced)
    assert edited["Location"].endswith(f"/memories/{new.pk}/") and new.evidence.count() == 1
    client.post(f"/w/acme/memories/{new.pk}/graduate/")
    assert Memory.objects.get(pk=new.pk).status == "graduated"
    assert "only candidate or active" in client.post(f"/w/acme/memories/{new.pk}/edit/", {"text": "x"},
                                                     follow=True).content.decode()
    bad = client.post(f"/w/acme/memories/{candidate.pk}/edit/", {"text": "AKIAIOSFODNN7EXAMPLE"}, follow=True)
    assert "nothing was stored" in bad.content.decode()
    assert Memory.objects.get(pk=candidate.pk).status == "active"


def test_viewers_cannot_act_and_outsiders_see_nothing(client, viewer, outsider, evidenced):
    client.force_login(viewer)
    assert client.post(f"/w/acme/memories/{evidenced.pk}/invalidate/").status_code == 403
    assert client.post(f"/w/acme/memories/{evidenced.pk}/edit/", {"text": "x"}).status_code == 403
    assert client.post("/w/acme/memories/trusted/set/", {"key": "k", "value": "v"}).status_code == 403
    assert Memory.objects.get(pk=evidenced.pk).status == "active" and not TrustedState.objects.exists()
    client.force_login(outsider)
    assert client.get("/w/acme/memories/").status_code == 404
    assert client.get(f"/w/acme/memories/{evidenced.pk}/").status_code == 404


def test_a_memory_of_another_workspace_is_404(client, teammate, other_workspace):
    other = services.memory_store(workspace_id=other_workspace.pk, draft=services.Draft(
        type="fact", text="Elsewhere.", certainty="verbatim")).memory
    client.force_login(teammate)
    assert client.get(f"/w/acme/memories/{other.pk}/").status_code == 404
    assert client.post(f"/w/acme/memories/{other.pk}/invalidate/").status_code == 404


def test_reviewers_curate_trusted_state(client, teammate, viewer, workspace):
    client.force_login(teammate)
    client.post("/w/acme/memories/trusted/set/", {"key": "release", "value": "3.2 on Friday"})
    client.post("/w/acme/memories/trusted/set/", {"key": "release", "value": "3.2 on Monday", "note": "slipped"})
    assert [r.version for r in TrustedState.objects.order_by("version")] == [1, 2]
    client.force_login(viewer)
    html = client.get("/w/acme/memories/trusted/?key=release").content.decode()
    assert "3.2 on Monday" in html and "3.2 on Friday" in html and "slipped" in html
    assert 'name="value"' not in html
    services.trusted_state_set(workspace=workspace, key="k", value="v", actor=Actor())
    assert client.get("/w/acme/memories/trusted/?key=nope").status_code == 404


@pytest.mark.parametrize("model", ["memory", "procedure", "censor", "graduation", "trustedstate", "trustpolicy",
                                   "workingsession", "scratchpad"])
def test_every_memory_model_is_in_the_admin(client, evidenced, model):
    from django.contrib.auth import get_user_model

    client.force_login(get_user_model().objects.create_superuser(username="root", password="x", email=""))
    assert client.get(f"/admin/memory/{model}/").status_code == 200
    assert client.get(f"/admin/memory/memory/{evidenced.pk}/change/").status_code == 200


def test_admins_change_the_trust_policy(client, owner, teammate, workspace):
    client.force_login(teammate)
    assert "Only admins change the policy." in client.get("/w/acme/memories/policy/").content.decode()
    client.force_login(owner)
    response = client.post("/w/acme/memories/policy/set/", {"auto_certainties": ["verbatim"], "auto_types": ["fact"],
                                                            "min_confidence": "0.95"})
    assert response.status_code == 302
    policy = TrustPolicy.objects.get(workspace=workspace)
    assert policy.auto_certainties == ["verbatim"] and policy.min_confidence == 0.95
    client.post("/w/acme/memories/policy/set/", {"min_confidence": "lots"})
    assert TrustPolicy.objects.get(workspace=workspace).min_confidence == 0.95


def test_viewers_cannot_change_the_trust_policy_and_outsiders_see_nothing(client, viewer, outsider):
    client.force_login(viewer)
    assert client.post("/w/acme/memories/policy/set/", {"min_confidence": "0.5"}).status_code == 403
    client.force_login(outsider)
    assert client.get("/w/acme/memories/policy/").status_code == 404


def test_the_old_trust_policy_address_redirects_to_the_memory_app(client, viewer):
    client.force_login(viewer)
    response = client.get("/w/acme/review/policy/")
    assert response.status_code == 302 and response["Location"] == "/w/acme/memories/policy/"


def test_the_entity_page_shows_its_active_memories_paginated_with_links(client, viewer, outsider, workspace,
                                                                        other_workspace, evidenced, candidate):
    ada = evidenced.subject
    for n in range(11):
        services.memory_store(workspace_id=workspace.pk, draft=services.Draft(
            type="fact", text=f"Ada's fact number {n}.", certainty="verbatim", confidence=1.0, subject_id=ada.pk))
    bob = services.memory_store(workspace_id=workspace.pk, draft=services.Draft(
        type="fact", text="Someone else's fact.", certainty="verbatim", confidence=1.0)).memory
    assert Memory.objects.filter(subject=ada, status="active").count() == 12
    client.force_login(viewer)

    page = client.get(f"/w/acme/entities/{ada.pk}/").content.decode()
    assert "once the memory layer is built" not in page
    about = f"/w/acme/memories/about/{ada.pk}/"
    assert f'hx-get="{about}"' in page and f'href="{about}"' in page  # loaded by htmx, a real link without it

    first = client.get(about, headers={"HX-Request": "true"}).content.decode()
    assert first.lstrip().startswith('<div id="memories-about">') and "<h1>" not in first
    assert len(re.findall(r'href="/w/acme/memories/\d+/"', first)) == 10  # a page of ten, each linked
    assert "Ada&#x27;s fact number 10." in first and f'href="/w/acme/memories/{evidenced.pk}/"' not in first
    # The pager names this panel's own address: the relative "?page=2" would land on the entity page.
    assert f'hx-get="{about}?page=2"' in first and f'href="{about}?page=2"' in first
    second = client.get(about + "?page=2", headers={"HX-Request": "true"}).content.decode()
    assert f'href="/w/acme/memories/{evidenced.pk}/"' in second and "The deploy window is Tuesday 10:00." in second
    both = first + second
    assert "Ada might prefer mornings." not in both and bob.text not in both  # a candidate; about nobody

    full = client.get(about + "?page=2").content.decode()
    assert "<h1>Memories about" in full and "The deploy window is Tuesday 10:00." in full
    theirs = entity_create(workspace=other_workspace, kind="person", name="Olga")
    assert client.get(f"/w/acme/memories/about/{theirs.pk}/").status_code == 404  # another workspace's entity
    client.force_login(outsider)
    assert client.get(about).status_code == 404
