"""The Conversations pages: list with filters, a conversation's log with HTMX paging and
its summary timeline, the messages of one entity (the entity page's panel); members only. The admin shows the log read-only."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone as dt_timezone

import pytest

from conversations import services
from conversations.models import Conversation, Interaction
from conversations.services import InteractionItem

pytestmark = pytest.mark.django_db

T0 = datetime(2023, 5, 8, 13, 56, tzinfo=dt_timezone.utc)


@pytest.fixture
def conversation(workspace):
    items = [InteractionItem(channel="chat", channel_id="Caroline" if i % 2 == 0 else "Melanie",
                             sender_name="Caroline" if i % 2 == 0 else "Melanie", thread="conv-26",
                             content=f"Message {i}: we talked about painting and the lake.", occurred_at=T0 + timedelta(seconds=30 * i))
             for i in range(120)]
    services.interactions_log(workspace=workspace, items=items)
    conversation = Conversation.objects.get()
    services.conversation_set_status(conversation=conversation, status="idle", reason="test")
    services.conversation_summarise(conversation_id=conversation.pk)
    return conversation


def test_the_list_shows_conversations_with_their_summary(client, owner, conversation):
    client.force_login(owner)
    html = client.get("/w/acme/conversations/").content.decode()
    assert f'href="/w/acme/conversations/{conversation.pk}/"' in html
    assert "Caroline" in html and "idle" in html and "120" in html


def test_the_list_filters_by_status(client, owner, conversation):
    client.force_login(owner)
    assert f"/conversations/{conversation.pk}/" in client.get("/w/acme/conversations/?status=idle").content.decode()
    assert f"/conversations/{conversation.pk}/" not in client.get("/w/acme/conversations/?status=active").content.decode()


def test_the_list_partial_for_htmx(client, owner, conversation):
    client.force_login(owner)
    response = client.get("/w/acme/conversations/", headers={"HX-Request": "true"})
    html = response.content.decode()
    assert html.lstrip().startswith('<div id="rows">') and "<html" not in html


def test_a_conversation_page_shows_the_log_pages_and_the_summary(client, owner, conversation):
    client.force_login(owner)
    html = client.get(f"/w/acme/conversations/{conversation.pk}/").content.decode()
    assert "Message 0:" in html and "Message 49:" in html and "Message 50:" not in html
    assert "Page 1 of 3" in html and 'hx-get="?page=2"' in html and 'href="?page=2"' in html
    assert "Current" in html and "extractive" in html


def test_the_log_partial_pages_with_htmx(client, owner, conversation):
    client.force_login(owner)
    response = client.get(f"/w/acme/conversations/{conversation.pk}/?page=3", headers={"HX-Request": "true"})
    html = response.content.decode()
    assert html.lstrip().startswith('<div id="log">') and "<html" not in html
    assert "Message 119:" in html and "Message 99:" not in html


def test_outsiders_get_404(client, outsider, conversation):
    client.force_login(outsider)
    assert client.get("/w/acme/conversations/").status_code == 404
    assert client.get(f"/w/acme/conversations/{conversation.pk}/").status_code == 404


def test_another_workspaces_conversation_is_404_even_for_a_member_elsewhere(client, owner, outsider, other_workspace):
    services.interactions_log(workspace=other_workspace, items=[InteractionItem(channel="chat", channel_id="x", content="theirs")])
    theirs = Conversation.objects.get(workspace=other_workspace)
    client.force_login(owner)
    assert client.get(f"/w/acme/conversations/{theirs.pk}/").status_code == 404


def test_the_admin_shows_interactions_read_only(client, conversation, db):
    from django.contrib.auth import get_user_model

    root = get_user_model().objects.create_superuser(username="root", password="x", email="")
    client.force_login(root)
    row = Interaction.objects.first()
    assert client.get("/admin/conversations/interaction/").status_code == 200
    page = client.get(f"/admin/conversations/interaction/{row.pk}/change/")
    assert page.status_code == 200 and b'name="content"' not in page.content  # view only
    assert client.post(f"/admin/conversations/interaction/{row.pk}/delete/", {"post": "yes"}).status_code == 403
    assert client.get("/admin/conversations/interaction/add/").status_code == 403
    assert Interaction.objects.filter(pk=row.pk).exists()


def test_an_entitys_messages_are_a_page_and_the_entity_pages_fragment(client, viewer, outsider, conversation):
    caroline = Interaction.objects.filter(sender_name="Caroline").first().entity_id
    client.force_login(viewer)
    page = client.get(f"/w/acme/conversations/from/{caroline}/").content.decode()
    assert "<html" in page and "Message 118: we talked about painting" in page and "Message 119" not in page
    fragment = client.get(f"/w/acme/conversations/from/{caroline}/", headers={"HX-Request": "true"}).content.decode()
    assert fragment.lstrip().startswith('<div id="recent">') and "Message 118" in fragment and "<html" not in fragment
    assert fragment.count("<article") == 20
    client.force_login(outsider)
    assert client.get(f"/w/acme/conversations/from/{caroline}/").status_code == 404
    assert client.get("/w/acme/conversations/from/999999/").status_code == 404
