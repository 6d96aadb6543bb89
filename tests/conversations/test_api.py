"""POST/GET interactions: logging, idempotency, privacy on write, bad input, search,
redaction on read and isolation between workspaces."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from conversations.models import Conversation, Interaction
from core.models import AuditEvent
from entities.models import Entity, Identity
from tests.helpers import assert_error

pytestmark = pytest.mark.django_db


def msg(**overrides) -> dict:
    item = {"channel": "slack", "channel_id": "U123", "sender_name": "Ada", "content": "Hello there, how is the launch going?"}
    item.update(overrides)
    return item


def counts() -> tuple[int, int, int, int]:
    return Interaction.objects.count(), Entity.objects.count(), Conversation.objects.count(), AuditEvent.objects.filter(verb="interaction.log").count()


# --- logging one ----------------------------------------------------------------------------

def test_logging_an_interaction_creates_the_sender_and_a_conversation(api, workspace):
    response = api.post("/interactions", msg(external_id="m-1", metadata={"room": "general"}))
    assert response.status_code == 201, response.json()
    body = response.json()
    assert body["status"] == "created" and body["external_id"] == "m-1"
    row = Interaction.objects.get(pk=body["id"])
    assert (row.content, row.channel, row.channel_id, row.direction) == ("Hello there, how is the launch going?", "slack", "U123", "inbound")
    assert row.metadata == {"room": "general"} and row.workspace == workspace
    identity = Identity.objects.get(channel="slack", channel_id="U123")
    assert identity.confidence == "confirmed" and identity.entity_id == body["entity_id"] == row.entity_id
    assert identity.entity.kind == "person" and identity.entity.name == "Ada"
    assert row.conversation_id == body["conversation_id"]
    assert AuditEvent.objects.filter(verb="interaction.log", data__created=1).count() == 1


def test_the_same_sender_keeps_one_entity_and_one_conversation(api):
    first = api.post("/interactions", msg()).json()
    second = api.post("/interactions", msg(content="Still there?")).json()
    assert first["entity_id"] == second["entity_id"]
    assert first["conversation_id"] == second["conversation_id"]
    assert Conversation.objects.get().interaction_count == 2


def test_a_sender_kind_can_be_given(api):
    body = api.post("/interactions", msg(channel_id="bot-7", sender_kind="agent", direction="outbound")).json()
    assert Entity.objects.get(pk=body["entity_id"]).kind == "agent"


def test_a_retried_item_is_a_duplicate_with_the_original_id(api):
    first = api.post("/interactions", msg(external_id="abc"))
    again = api.post("/interactions", msg(external_id="abc", content="different text, same key"))
    assert again.status_code == 200
    assert again.json()["status"] == "duplicate" and again.json()["id"] == first.json()["id"]
    assert Interaction.objects.count() == 1


def test_occurred_at_defaults_to_now_and_naive_times_are_utc(api):
    before = timezone.now()
    now_row = Interaction.objects.get(pk=api.post("/interactions", msg()).json()["id"])
    assert before <= now_row.occurred_at <= timezone.now()
    naive = Interaction.objects.get(pk=api.post("/interactions", msg(occurred_at="2023-05-08T13:56:00")).json()["id"])
    assert naive.occurred_at.isoformat() == "2023-05-08T13:56:00+00:00"


# --- privacy on write -------------------------------------------------------------------------

FAKE_GITHUB = "ghp_" + "aB3dE5fG7hJ9kL1mN3pQ5rS7tU9vW1xY3z5A"


def test_a_secret_is_refused_naming_the_rule_and_nothing_is_stored(api):
    response = api.post("/interactions", msg(content=f"use my token {FAKE_GITHUB} for the deploy"))
    error = assert_error(response, 422, "secret_detected")
    assert error["details"]["field"] == "content" and error["details"]["rule"]
    assert FAKE_GITHUB not in response.content.decode()
    assert counts() == (0, 0, 0, 0)


def test_a_secret_in_metadata_is_refused_too(api):
    error = assert_error(api.post("/interactions", msg(metadata={"headers": {"auth": FAKE_GITHUB}})), 422, "secret_detected")
    assert error["details"]["field"] == "metadata.headers.auth"  # where inside the JSON
    assert counts() == (0, 0, 0, 0)


def test_private_blocks_are_stripped_and_the_interaction_marked(api):
    body = api.post("/interactions", msg(content="Meet at noon. <private>my PIN is 4411</private> Bring the slides.")).json()
    row = Interaction.objects.get(pk=body["id"])
    assert "4411" not in row.content and "PIN" not in row.content
    assert "Meet at noon." in row.content and "Bring the slides." in row.content
    assert row.private_filtered is True and body["private_filtered"] is True


def test_content_that_is_all_private_is_refused(api):
    assert_error(api.post("/interactions", msg(content="<private>only secrets here</private>")), 422, "empty_content")
    assert counts() == (0, 0, 0, 0)


# --- bad input ----------------------------------------------------------------------------------

@pytest.mark.parametrize("overrides, field", [
    ({"content": ""}, "content"),
    ({"content": "   \n "}, "content"),
    ({"content": "x" * 32001}, "content"),
    ({"direction": "sideways"}, "direction"),
    ({"metadata": ["not", "an", "object"]}, "metadata"),
    ({"metadata": "a string"}, "metadata"),
    ({"occurred_at": "last tuesday-ish"}, "occurred_at"),
    ({"channel": "has spaces"}, "channel"),
    ({"channel_id": ""}, "channel_id"),
    ({"sender_kind": "alien"}, "sender_kind"),
    ({"surprise": 1}, "surprise"),
])
def test_bad_items_are_422_naming_the_field_and_store_nothing(api, overrides, field):
    error = assert_error(api.post("/interactions", msg(**overrides)), 422, "validation_error")
    assert any(field in err["loc"] for err in error["details"]["errors"]), error
    assert counts() == (0, 0, 0, 0)


def test_a_missing_required_field_is_422(api):
    error = assert_error(api.post("/interactions", {"channel": "slack", "content": "hi"}), 422, "validation_error")
    assert any("channel_id" in err["loc"] for err in error["details"]["errors"])


def test_oversize_metadata_is_refused(api):
    assert_error(api.post("/interactions", msg(metadata={"blob": "x" * 20000})), 422, "validation_error")


def test_malformed_json_is_422(api):
    assert_error(api.post("/interactions", raw='{"channel": "slack",'), 422, "malformed_json")
    assert counts() == (0, 0, 0, 0)


def test_logging_needs_the_write_scope(workspace, make_key):
    from tests.helpers import ApiClient

    _, key = make_key(workspace, scopes="read")
    assert_error(ApiClient(key).post("/interactions", msg()), 403, "forbidden")
    assert_error(ApiClient(None).post("/interactions", msg()), 401, "unauthorized")


# --- batches ------------------------------------------------------------------------------------

def test_a_batch_answers_per_item_in_order_and_rejects_only_bad_items(api):
    items = [
        msg(external_id="b-1", content="first"),
        msg(external_id="b-2", content=f"token {FAKE_GITHUB}"),
        msg(external_id="b-3", direction="nope"),
        "not an object",
        msg(external_id="b-5", content="fifth", channel_id="U999", sender_name="Bob"),
    ]
    response = api.post("/interactions/batch", {"items": items})
    assert response.status_code == 200
    body = response.json()
    assert (body["created"], body["duplicate"], body["rejected"]) == (2, 0, 3)
    results = body["results"]
    assert [r["index"] for r in results] == [0, 1, 2, 3, 4]
    assert [r["status"] for r in results] == ["created", "rejected", "rejected", "rejected", "created"]
    assert results[1]["error"]["code"] == "secret_detected" and results[1]["external_id"] == "b-2"
    assert results[2]["error"]["field"] == "direction"
    assert FAKE_GITHUB not in response.content.decode()
    assert set(Interaction.objects.values_list("external_id", flat=True)) == {"b-1", "b-5"}

    retry = api.post("/interactions/batch", {"items": items}).json()
    assert [r["status"] for r in retry["results"]] == ["duplicate", "rejected", "rejected", "rejected", "duplicate"]
    assert retry["results"][0]["id"] == results[0]["id"] and retry["results"][4]["id"] == results[4]["id"]
    assert Interaction.objects.count() == 2


def test_a_repeated_external_id_inside_one_batch_is_a_duplicate(api):
    body = api.post("/interactions/batch", {"items": [msg(external_id="x"), msg(external_id="x", content="again")]}).json()
    assert [r["status"] for r in body["results"]] == ["created", "duplicate"]
    assert body["results"][0]["id"] == body["results"][1]["id"]


def test_a_batch_over_1000_items_or_empty_is_refused_whole(api):
    assert_error(api.post("/interactions/batch", {"items": [msg()] * 1001}), 422, "validation_error")
    assert_error(api.post("/interactions/batch", {"items": []}), 422, "validation_error")
    assert Interaction.objects.count() == 0


def test_a_batch_of_1000_is_accepted(api):
    items = [msg(external_id=f"n-{i}", content=f"message number {i}") for i in range(1000)]
    body = api.post("/interactions/batch", {"items": items}).json()
    assert body["created"] == 1000 and Interaction.objects.count() == 1000
    assert Conversation.objects.get().interaction_count == 1000


# --- reading --------------------------------------------------------------------------------------

@pytest.fixture
def logged(api):
    t0 = timezone.now() - timedelta(days=3)
    items = [
        msg(content="We went hiking in the Alps last weekend.", occurred_at=(t0).isoformat(), external_id="r1"),
        msg(content="Reach me at ada@example.com or +1 415 555 0100, server 10.0.0.7", occurred_at=(t0 + timedelta(minutes=1)).isoformat(), external_id="r2"),
        msg(channel="email", channel_id="bob@example.com", sender_name="Bob", content="The budget review is on Friday.",
            occurred_at=(t0 + timedelta(days=1)).isoformat(), external_id="r3"),
    ]
    return api.post("/interactions/batch", {"items": items}).json()["results"]


def test_listing_is_newest_first_and_paginated(api, logged):
    page = api.get("/interactions", limit=2).json()
    assert page["count"] == 3 and len(page["items"]) == 2
    assert [i["external_id"] for i in page["items"]] == ["r3", "r2"]
    assert [i["external_id"] for i in api.get("/interactions", limit=2, offset=2).json()["items"]] == ["r1"]
    assert_error(api.get("/interactions", limit=500), 422)


def test_listing_filters_by_channel_entity_conversation_and_time(api, logged):
    assert [i["external_id"] for i in api.get("/interactions", channel="email").json()["items"]] == ["r3"]
    entity = logged[0]["entity_id"]
    assert {i["external_id"] for i in api.get("/interactions", entity=entity).json()["items"]} == {"r1", "r2"}
    conversation = logged[2]["conversation_id"]
    assert [i["external_id"] for i in api.get("/interactions", conversation=conversation).json()["items"]] == ["r3"]
    since = (timezone.now() - timedelta(days=2, hours=12)).isoformat()
    assert [i["external_id"] for i in api.get("/interactions", since=since).json()["items"]] == ["r3"]
    assert {i["external_id"] for i in api.get("/interactions", until=since).json()["items"]} == {"r1", "r2"}


def test_full_text_search_stems_and_ranks_words(api, logged):
    assert [i["external_id"] for i in api.get("/interactions", q="hike").json()["items"]] == ["r1"]
    assert [i["external_id"] for i in api.get("/interactions", q='"budget review"').json()["items"]] == ["r3"]
    assert api.get("/interactions", q="submarine").json()["count"] == 0


def test_redaction_on_read_masks_contact_details(api, logged):
    plain = api.get(f"/interactions/{logged[1]['id']}").json()
    assert "ada@example.com" in plain["content"]
    redacted = api.get(f"/interactions/{logged[1]['id']}", redact="true").json()
    assert "ada@example.com" not in redacted["content"]
    assert "555 0100" not in redacted["content"] and "10.0.0.7" not in redacted["content"]
    listing = api.get("/interactions", channel="email", redact="true").json()["items"][0]
    assert "bob@example.com" not in listing["channel_id"]


def test_a_read_limited_to_another_channel_is_404(api, logged):
    assert api.get(f"/interactions/{logged[0]['id']}", channel="slack").status_code == 200
    assert_error(api.get(f"/interactions/{logged[0]['id']}", channel="email"), 404, "not_found")


def test_another_workspaces_interactions_are_invisible(api, outsider_api, logged):
    assert_error(outsider_api.get(f"/interactions/{logged[0]['id']}"), 404, "not_found")
    assert outsider_api.get("/interactions").json()["count"] == 0
    assert_error(outsider_api.get(f"/conversations/{logged[0]['conversation_id']}"), 404, "not_found")
    assert_error(outsider_api.get(f"/conversations/{logged[0]['conversation_id']}/summaries"), 404, "not_found")
    assert_error(outsider_api.get(f"/conversations/{logged[0]['conversation_id']}/context"), 404, "not_found")
    assert outsider_api.get("/conversations").json()["count"] == 0


def test_the_same_handle_in_two_workspaces_is_two_entities(api, outsider_api):
    mine = api.post("/interactions", msg()).json()
    theirs = outsider_api.post("/interactions", msg()).json()
    assert mine["entity_id"] != theirs["entity_id"]
    assert mine["conversation_id"] != theirs["conversation_id"]


def test_status_counts_unprocessed_interactions(api, logged):
    assert api.get("/status").json()["pending"]["interactions"] == 3
