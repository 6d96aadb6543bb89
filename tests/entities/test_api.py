"""The entities API: create/list/search/update, identities (409 on a taken handle),
suggestions, merge and split, profile with history, relationships with as_of, erasure;
scopes and isolation between workspaces."""

from __future__ import annotations

import pytest

from conversations import services as conversation_services
from entities.models import Entity, Identity, LinkSuggestion
from tests.helpers import ApiClient, assert_error

pytestmark = pytest.mark.django_db


def create(api, name, kind="person", **extra):
    response = api.post("/entities", {"kind": kind, "name": name, **extra})
    assert response.status_code == 201, response.json()
    return response.json()


def test_create_get_and_update_an_entity(api):
    ada = create(api, "Ada Lovelace", aliases=["Countess of Lovelace"])
    assert ada["kind"] == "person" and ada["identities"] == [] and ada["profile"] == []
    assert api.get(f"/entities/{ada['id']}").json()["name"] == "Ada Lovelace"
    patched = api.client.patch(f"/api/v1/entities/{ada['id']}", '{"description": "mathematician"}',
                               content_type="application/json", headers=api.headers)
    assert patched.status_code == 200 and patched.json()["description"] == "mathematician"
    assert patched.json()["aliases"] == ["Countess of Lovelace"]


def test_search_finds_names_aliases_and_typos(api):
    create(api, "Caroline Ellis", aliases=["Caro"])
    create(api, "Melanie Moss")
    create(api, "Acme", kind="organisation")
    names = lambda **q: [e["name"] for e in api.get("/entities", **q).json()["items"]]  # noqa: E731
    assert names(q="caro") == ["Caroline Ellis"]
    assert names(q="Carolin Elis") == ["Caroline Ellis"]
    assert names(kind="organisation") == ["Acme"]


@pytest.mark.parametrize("payload, field", [
    ({"kind": "wizard", "name": "Merlin"}, "kind"),
    ({"kind": "person", "name": ""}, "name"),
    ({"kind": "person"}, "name"),
])
def test_bad_entities_are_422(api, payload, field):
    error = assert_error(api.post("/entities", payload), 422)
    assert field in str(error)
    assert Entity.objects.count() == 0


def test_a_taken_handle_is_409_naming_its_owner(api):
    ada, grace = create(api, "Ada"), create(api, "Grace")
    assert api.post(f"/entities/{ada['id']}/identities", {"channel": "slack", "channel_id": "U1"}).status_code == 201
    error = assert_error(api.post(f"/entities/{grace['id']}/identities", {"channel": "slack", "channel_id": "U1"}), 409, "conflict")
    assert "Ada" in error["message"] and error["details"]["owner_entity_id"] == ada["id"]


def test_unlink_then_link_elsewhere_and_verify(api):
    ada, grace = create(api, "Ada"), create(api, "Grace")
    identity = api.post(f"/entities/{ada['id']}/identities",
                        {"channel": "slack", "channel_id": "U1", "confidence": "suggested"}).json()
    assert api.post(f"/identities/{identity['id']}/verify").json()["confidence"] == "confirmed"
    assert api.client.delete(f"/api/v1/identities/{identity['id']}", headers=api.headers).status_code == 204
    assert api.post(f"/entities/{grace['id']}/identities", {"channel": "slack", "channel_id": "U1"}).status_code == 201


def test_suggestions_are_listed_and_decided_through_the_api(api, workspace):
    for channel, handle, name in (("slack", "U1", "Ada Lovelace"), ("email", "ada.lovelace@example.com", "Ada Lovelace")):
        entity = create(api, name)
        api.post(f"/entities/{entity['id']}/identities", {"channel": channel, "channel_id": handle, "display_name": name})
    conversation_services.identity_links_suggest(workspace=workspace)
    [suggestion] = api.get("/identity-suggestions").json()["items"]
    assert suggestion["status"] == "pending" and suggestion["reasons"]
    merge = api.post(f"/identity-suggestions/{suggestion['id']}/accept").json()
    assert merge["target_id"] == suggestion["entity"]["id"]
    assert_error(api.post(f"/identity-suggestions/{suggestion['id']}/accept"), 409, "conflict")
    assert api.get("/identity-suggestions").json()["count"] == 0


def test_merge_and_split_through_the_api(api):
    ada, ada2 = create(api, "Ada"), create(api, "Ada L.")
    api.post(f"/entities/{ada2['id']}/identities", {"channel": "email", "channel_id": "ada@example.com"})
    merge = api.post(f"/entities/{ada2['id']}/merge", {"into": ada["id"]}).json()
    assert merge["moved"]["identities"] and api.get(f"/entities/{ada['id']}").json()["identities"][0]["channel"] == "email"
    assert api.get(f"/entities/{ada2['id']}").json()["merged_into_id"] == ada["id"]
    restored = api.post(f"/merges/{merge['id']}/split").json()
    assert restored["id"] == ada2["id"] and restored["identities"][0]["channel_id"] == "ada@example.com"
    assert_error(api.post(f"/merges/{merge['id']}/split"), 409)
    assert_error(api.post(f"/entities/{ada['id']}/merge", {"into": ada["id"]}), 422)


def test_profile_current_and_history(api):
    ada = create(api, "Ada")
    for value in ("Acme", "Globex"):
        assert api.post(f"/entities/{ada['id']}/profile", {"key": "employer", "value": value}).status_code == 201
    api.post(f"/entities/{ada['id']}/profile", {"key": "timezone", "value": "Europe/London"})
    current = {v["key"]: v["value"] for v in api.get(f"/entities/{ada['id']}/profile").json()}
    assert current == {"employer": "Globex", "timezone": "Europe/London"}
    history = api.get(f"/entities/{ada['id']}/profile/history", key="employer").json()
    assert [v["value"] for v in history] == ["Acme", "Globex"] and history[1]["supersedes_id"] == history[0]["id"]
    assert_error(api.post(f"/entities/{ada['id']}/profile", {"key": "Bad Key!", "value": "x"}), 422)


def test_relationships_with_as_of(api):
    ada, acme, globex = create(api, "Ada"), create(api, "Acme", kind="organisation"), create(api, "Globex", kind="organisation")
    first = api.post("/relationships", {"subject": ada["id"], "predicate": "works_at", "object": acme["id"],
                                        "valid_from": "2020-01-01T00:00:00Z"})
    assert first.status_code == 201
    api.post("/relationships", {"subject": ada["id"], "predicate": "works_at", "object": globex["id"],
                                "valid_from": "2023-06-01T00:00:00Z"})
    objects = lambda **q: [r["object"]["name"] for r in api.get(f"/entities/{ada['id']}/relationships", **q).json()]  # noqa: E731
    assert objects() == ["Globex"]
    assert objects(as_of="2021-05-05T00:00:00Z") == ["Acme"]
    assert objects(as_of="2024-01-01T00:00:00Z") == ["Globex"]
    invalidated = api.post(f"/relationships/{first.json()['id']}/invalidate")
    assert invalidated.status_code == 200, invalidated.json()
    assert invalidated.json()["status"] == "invalid"


def test_bad_relationships_are_422(api):
    ada, acme = create(api, "Ada"), create(api, "Acme", kind="organisation")
    assert_error(api.post("/relationships", {"subject": ada["id"], "predicate": "knows", "object": ada["id"]}), 422)
    assert_error(api.post("/relationships", {"subject": ada["id"], "predicate": "admires", "object": acme["id"]}), 422)


def test_erasure_needs_admin_and_erasing_twice_is_404(api, admin_api, workspace):
    ada = create(api, "Ada")
    api.post(f"/entities/{ada['id']}/identities", {"channel": "slack", "channel_id": "U1"})
    api.post("/interactions", {"channel": "slack", "channel_id": "U1", "content": "hello from Ada"})
    assert_error(api.post(f"/entities/{ada['id']}/erase"), 403, "forbidden")
    body = admin_api.post(f"/entities/{ada['id']}/erase").json()
    assert body["erased"] is True and body["receipt"]["interactions"] == 1 and body["receipt"]["identities"] == 1
    assert_error(admin_api.post(f"/entities/{ada['id']}/erase"), 404, "not_found")
    assert not Identity.objects.filter(channel_id="U1").exists()


def test_outsiders_get_404_for_every_entity_route(api, outsider_api):
    ada, acme = create(api, "Ada"), create(api, "Acme", kind="organisation")
    identity = api.post(f"/entities/{ada['id']}/identities", {"channel": "slack", "channel_id": "U1"}).json()
    rel = api.post("/relationships", {"subject": ada["id"], "predicate": "works_at", "object": acme["id"]}).json()
    value = api.post(f"/entities/{ada['id']}/profile", {"key": "employer", "value": "Acme"}).json()
    own = create(outsider_api, "Mine")
    for path in (f"/entities/{ada['id']}", f"/entities/{ada['id']}/identities", f"/entities/{ada['id']}/profile",
                 f"/entities/{ada['id']}/profile/history", f"/entities/{ada['id']}/relationships"):
        assert_error(outsider_api.get(path), 404, "not_found")
    for path, payload in ((f"/entities/{ada['id']}/identities", {"channel": "x", "channel_id": "y"}),
                          (f"/identities/{identity['id']}/verify", {}),
                          (f"/entities/{ada['id']}/merge", {"into": own["id"]}),
                          (f"/entities/{own['id']}/merge", {"into": ada["id"]}),
                          (f"/relationships/{rel['id']}/invalidate", {}),
                          (f"/profile-values/{value['id']}/approve", {}),
                          ("/relationships", {"subject": own["id"], "predicate": "knows", "object": ada["id"]}),
                          (f"/entities/{ada['id']}/erase", {})):
        assert_error(outsider_api.post(path, payload), 404, "not_found")
    assert outsider_api.get("/entities").json()["count"] == 1
    assert Entity.objects.get(pk=ada["id"]).merged_into_id is None


def test_reading_needs_read_and_writing_needs_write(workspace, make_key):
    _, reader = make_key(workspace, scopes="read")
    _, writer = make_key(workspace, scopes="write")
    assert ApiClient(reader).get("/entities").status_code == 200
    assert_error(ApiClient(reader).post("/entities", {"kind": "person", "name": "X"}), 403)
    assert_error(ApiClient(writer).get("/entities"), 403)


def test_kinds_and_predicates_are_listed(api):
    kinds = {k["name"]: k["who"] for k in api.get("/entity-kinds").json()}
    assert kinds["person"] is True and kinds["decision"] is False
    predicates = {p["name"]: p["functional"] for p in api.get("/predicates").json()}
    assert predicates["works_at"] is True and predicates["knows"] is False
    assert LinkSuggestion.objects.count() == 0
