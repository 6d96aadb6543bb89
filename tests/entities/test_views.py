"""Entity pages: list with search, the entity page (identities, profile and its history,
relationship graph, recent interactions), and its actions: reviewers link, unlink, verify,
merge and split; only admins erase, after typing the name. Outsiders get 404."""

from __future__ import annotations

import pytest

from conversations import services as conversation_services
from conversations.services import InteractionItem
from entities import services
from entities.models import Entity, EntityMerge, Identity

pytestmark = pytest.mark.django_db


@pytest.fixture
def ada(workspace):
    [result] = conversation_services.interactions_log(workspace=workspace, items=[InteractionItem(
        channel="slack", channel_id="U1", sender_name="Ada Lovelace", content="I work at Acme on the engine.")])
    entity = Entity.objects.get(pk=result.entity_id)
    acme = services.entity_create(workspace=workspace, kind="organisation", name="Acme")
    services.relationship_add(subject=entity, predicate="works_at", object=acme)
    services.profile_set(entity=entity, key="employer", value="Initech")
    services.profile_set(entity=entity, key="employer", value="Acme")
    return entity


def test_the_list_searches(client, owner, ada):
    client.force_login(owner)
    acme = Entity.objects.get(name="Acme")
    html = client.get("/w/acme/entities/?q=lovelace").content.decode()
    assert f"/w/acme/entities/{ada.pk}/" in html and f"/w/acme/entities/{acme.pk}/" not in html
    partial = client.get("/w/acme/entities/?q=acme", headers={"HX-Request": "true"}).content.decode()
    assert partial.lstrip().startswith('<div id="rows">') and ">Acme</a>" in partial


def test_the_entity_page_shows_everything_about_it(client, teammate, ada):
    client.force_login(teammate)
    html = client.get(f"/w/acme/entities/{ada.pk}/").content.decode()
    assert "slack:U1" in html and "confirmed" in html
    assert "<svg" in html and "works_at" in html
    assert "Initech" in html and "Acme" in html  # history and current value
    # The messages are the conversations app's fragment, loaded by the page (with a real link).
    assert f'hx-get="/w/acme/conversations/from/{ada.pk}/"' in html and f'href="/w/acme/conversations/from/{ada.pk}/"' in html
    assert 'name="confirm_name"' not in html  # a reviewer cannot erase


def test_a_viewer_sees_but_cannot_act(client, viewer, ada):
    client.force_login(viewer)
    html = client.get(f"/w/acme/entities/{ada.pk}/").content.decode()
    assert "unlink" not in html
    identity = Identity.objects.get(channel_id="U1")
    response = client.post(f"/w/acme/entities/{ada.pk}/identities/{identity.pk}/unlink/")
    assert response.status_code == 403
    assert Identity.objects.filter(pk=identity.pk).exists()


def test_a_reviewer_links_unlinks_and_merges_then_splits(client, teammate, ada, workspace):
    client.force_login(teammate)
    client.post(f"/w/acme/entities/{ada.pk}/identities/", {"channel": "email", "channel_id": "ada@example.com"})
    assert Identity.objects.filter(entity=ada, channel="email").exists()
    other = services.entity_create(workspace=workspace, kind="person", name="Ada L.")
    response = client.post(f"/w/acme/entities/{other.pk}/merge/", {"into": ada.pk})
    assert response.status_code == 302 and response["Location"] == f"/w/acme/entities/{ada.pk}/"
    merge = EntityMerge.objects.get()
    client.post(f"/w/acme/entities/merges/{merge.pk}/split/")
    other.refresh_from_db()
    assert other.merged_into is None
    identity = Identity.objects.get(channel="email")
    client.post(f"/w/acme/entities/{ada.pk}/identities/{identity.pk}/unlink/")
    assert not Identity.objects.filter(pk=identity.pk).exists()


def test_a_taken_handle_shows_an_error_message(client, teammate, ada, workspace):
    other = services.entity_create(workspace=workspace, kind="person", name="Grace")
    client.force_login(teammate)
    response = client.post(f"/w/acme/entities/{other.pk}/identities/", {"channel": "slack", "channel_id": "U1"}, follow=True)
    assert "already belongs to Ada Lovelace" in response.content.decode()


def test_erasure_needs_the_admin_role_and_the_typed_name(client, owner, teammate, ada):
    client.force_login(teammate)
    assert client.post(f"/w/acme/entities/{ada.pk}/erase/", {"confirm_name": ada.name}).status_code == 403
    client.force_login(owner)
    response = client.post(f"/w/acme/entities/{ada.pk}/erase/", {"confirm_name": "wrong"}, follow=True)
    assert "Type the entity" in response.content.decode() and Entity.objects.filter(pk=ada.pk).exists()
    response = client.post(f"/w/acme/entities/{ada.pk}/erase/", {"confirm_name": ada.name}, follow=True)
    assert "Erased." in response.content.decode()
    assert not Entity.objects.filter(pk=ada.pk).exists()


def test_outsiders_get_404(client, outsider, ada):
    client.force_login(outsider)
    assert client.get("/w/acme/entities/").status_code == 404
    assert client.get(f"/w/acme/entities/{ada.pk}/").status_code == 404
    assert client.post(f"/w/acme/entities/{ada.pk}/erase/", {"confirm_name": ada.name}).status_code == 404
    assert Entity.objects.filter(pk=ada.pk).exists()


def test_the_admin_lists_entity_models(client, db, ada):
    from django.contrib.auth import get_user_model

    client.force_login(get_user_model().objects.create_superuser(username="root", password="x", email=""))
    for model in ("entity", "identity", "profilevalue", "relationship", "linksuggestion", "entitymerge", "decisionrecord"):
        assert client.get(f"/admin/entities/{model}/").status_code == 200, model
