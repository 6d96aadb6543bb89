"""The entity page's part of issue 21 part 4: channel identities tell two entities of the
same name apart (in the list and in the merge picker); merging is searching for the other
entity, then a confirmation that shows both; profile candidates are decided in place
through the review queue's own decision. Viewers read only, outsiders get 404, bad input
is never a 5xx."""

from __future__ import annotations

import pytest

from conversations import services as conversation_services
from conversations.services import InteractionItem
from core.models import AuditEvent
from entities import services
from entities.models import Entity, EntityMerge, ProfileValue
from review.models import ReviewItem

pytestmark = pytest.mark.django_db


def _person(workspace, channel: str, handle: str, name: str = "Priya Raman") -> Entity:
    [result] = conversation_services.interactions_log(workspace=workspace, items=[InteractionItem(
        channel=channel, channel_id=handle, sender_name=name, content="Hello from me.")])
    return Entity.objects.get(pk=result.entity_id)


@pytest.fixture
def priyas(workspace):
    return _person(workspace, "email", "priya@example.com"), _person(workspace, "slack", "U07PRIYA")


@pytest.fixture
def candidate(workspace, priyas):
    priya = priyas[0]
    return services.profile_candidate_add(entity=priya, key="location", value="Lisbon", confidence=0.7, evidence=None,
                                          quote="I live in Lisbon now", source="rule:profile.location")


def test_the_list_tells_two_entities_of_the_same_name_apart(client, viewer, priyas):
    client.force_login(viewer)
    html = client.get("/w/acme/entities/?q=priya").content.decode()
    assert html.count(">Priya Raman</a>") == 2
    assert "<code>email:priya@example.com</code>" in html and "<code>slack:U07PRIYA</code>" in html


def test_the_merge_picker_searches_and_shows_channels(client, teammate, priyas, workspace):
    by_email, by_slack = priyas
    _person(workspace, "slack", "U0BOB", name="Bob Stone")
    client.force_login(teammate)
    html = client.get(f"/w/acme/entities/{by_email.pk}/merge/?q=priya").content.decode()
    assert f'name="into" value="{by_slack.pk}"' in html and "<code>slack:U07PRIYA</code>" in html
    assert f'name="into" value="{by_email.pk}"' not in html  # not into itself
    assert "Bob Stone" not in html
    partial = client.get(f"/w/acme/entities/{by_email.pk}/merge/?q=priya", headers={"HX-Request": "true"}).content.decode()
    assert partial.lstrip().startswith('<form method="get"') and 'id="merge-choices"' in partial
    assert "No entity named like" in client.get(f"/w/acme/entities/{by_email.pk}/merge/?q=zzzzqqq").content.decode()
    page = client.get(f"/w/acme/entities/{by_email.pk}/").content.decode()
    assert 'type="number" name="into"' not in page and f'action="/w/acme/entities/{by_email.pk}/merge/"' in page


def test_a_merge_is_confirmed_before_it_happens(client, teammate, priyas):
    by_email, by_slack = priyas
    client.force_login(teammate)
    confirm = client.get(f"/w/acme/entities/{by_email.pk}/merge/?into={by_slack.pk}").content.decode()
    assert "Merge Priya Raman into Priya Raman?" in confirm
    assert "email:priya@example.com" in confirm and "slack:U07PRIYA" in confirm
    assert not EntityMerge.objects.exists()
    response = client.post(f"/w/acme/entities/{by_email.pk}/merge/", {"into": by_slack.pk})
    assert response.status_code == 302 and response["Location"] == f"/w/acme/entities/{by_slack.pk}/"
    assert EntityMerge.objects.get().source == by_email


@pytest.mark.parametrize("into", ["abc", "-1", "0", "²", "99999999999999999999999", "99999999"])
def test_a_bad_merge_target_is_a_404_and_merges_nothing(client, teammate, priyas, into):
    client.force_login(teammate)
    assert client.get(f"/w/acme/entities/{priyas[0].pk}/merge/?into={into}").status_code == 404
    assert client.post(f"/w/acme/entities/{priyas[0].pk}/merge/", {"into": into}).status_code == 404
    assert not EntityMerge.objects.exists()


def test_merging_into_itself_is_refused_with_a_message(client, teammate, priyas):
    client.force_login(teammate)
    response = client.post(f"/w/acme/entities/{priyas[0].pk}/merge/", {"into": priyas[0].pk}, follow=True)
    assert "cannot be merged into itself" in response.content.decode() and not EntityMerge.objects.exists()


def test_the_merge_picker_pages_are_for_reviewers(client, viewer, priyas):
    client.force_login(viewer)
    assert client.get(f"/w/acme/entities/{priyas[0].pk}/merge/?q=priya").status_code == 403
    assert client.get(f"/w/acme/entities/{priyas[0].pk}/merge/?into={priyas[1].pk}").status_code == 403
    assert "merge-q" not in client.get(f"/w/acme/entities/{priyas[0].pk}/").content.decode()


def test_a_profile_candidate_is_approved_in_place_through_the_queue(client, teammate, priyas, candidate):
    item = ReviewItem.objects.get(kind="profile_value", target_id=candidate.pk)
    client.force_login(teammate)
    html = client.get(f"/w/acme/entities/{priyas[0].pk}/").content.decode()
    assert f'id="profile-candidate-{candidate.pk}"' in html and "I live in Lisbon now" in html
    response = client.post(f"/w/acme/entities/{priyas[0].pk}/profile/{candidate.pk}/approve/", follow=True)
    assert "location = Lisbon: approved" in response.content.decode()
    candidate.refresh_from_db()
    item.refresh_from_db()
    assert candidate.status == "active" and item.status == "approved" and item.decided_by.username == "tomas"
    assert AuditEvent.objects.filter(verb="profile.approve", target_id=str(candidate.pk)).exists()
    assert f'id="profile-candidate-{candidate.pk}"' not in response.content.decode()


def test_a_profile_candidate_is_rejected_in_place_and_twice_is_a_message(client, teammate, priyas, candidate):
    client.force_login(teammate)
    client.post(f"/w/acme/entities/{priyas[0].pk}/profile/{candidate.pk}/reject/")
    assert ProfileValue.objects.get(pk=candidate.pk).status == "rejected"
    again = client.post(f"/w/acme/entities/{priyas[0].pk}/profile/{candidate.pk}/approve/", follow=True)
    assert again.status_code == 200 and ProfileValue.objects.get(pk=candidate.pk).status == "rejected"


def test_a_profile_value_is_decided_only_on_its_own_entitys_page(client, teammate, priyas, candidate):
    client.force_login(teammate)
    assert client.post(f"/w/acme/entities/{priyas[1].pk}/profile/{candidate.pk}/approve/").status_code == 404
    assert client.post(f"/w/acme/entities/{priyas[0].pk}/profile/{candidate.pk}/maybe/").status_code == 404
    assert ProfileValue.objects.get(pk=candidate.pk).status == "candidate"


def test_viewers_see_profile_candidates_but_cannot_decide(client, viewer, priyas, candidate):
    client.force_login(viewer)
    html = client.get(f"/w/acme/entities/{priyas[0].pk}/").content.decode()
    assert f'id="profile-candidate-{candidate.pk}"' in html and "/profile/" not in html
    assert client.post(f"/w/acme/entities/{priyas[0].pk}/profile/{candidate.pk}/approve/").status_code == 403
    assert ProfileValue.objects.get(pk=candidate.pk).status == "candidate"


def test_outsiders_get_404(client, outsider, priyas, candidate, other_workspace):
    theirs = _person(other_workspace, "email", "x@globex.example", name="Priya Raman")
    client.force_login(outsider)
    mine = priyas[0]
    assert client.get(f"/w/acme/entities/{mine.pk}/merge/?q=priya").status_code == 404
    # From their own workspace: our entity is not theirs, and theirs cannot reach ours.
    assert client.get(f"/w/globex/entities/{mine.pk}/merge/").status_code == 404
    assert client.get(f"/w/globex/entities/{theirs.pk}/merge/?into={mine.pk}").status_code == 404
    assert client.post(f"/w/globex/entities/{theirs.pk}/merge/", {"into": mine.pk}).status_code == 404
    assert client.post(f"/w/globex/entities/{mine.pk}/profile/{candidate.pk}/approve/").status_code == 404
    assert client.post(f"/w/globex/entities/{theirs.pk}/profile/{candidate.pk}/approve/").status_code == 404
    html = client.get(f"/w/globex/entities/{theirs.pk}/merge/?q=priya").content.decode()
    assert f'value="{mine.pk}"' not in html and f'value="{priyas[1].pk}"' not in html
    assert not EntityMerge.objects.exists() and ProfileValue.objects.get(pk=candidate.pk).status == "candidate"
