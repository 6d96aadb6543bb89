"""Entities and relationships as recall kinds, against the real database and the bundled
model: embedded by the worker's processing (never in a request), found by meaning, by words
and through the entities a query names, filtered like the other kinds, kept fresh when a
name or an end changes, and placed in the pack's entities section once."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest

from conversations.models import Interaction
from conversations.services import interactions_index
from core import providers
from entities.models import Entity, Relationship
from entities.services import entities_embed_all, entity_create, entity_update, relationship_add
from entities.services.merging import entity_merge
from tests.context.test_api import log_chat

pytestmark = pytest.mark.django_db


def _results(api, body):
    response = api.post("/recall", body)
    assert response.status_code == 200, response.json()
    return response.json()["results"]


def _acme_job(workspace, *, status="active", **extra):
    ids = log_chat(workspace, [("Caroline", "I started a new job at Acme Robotics as a counselor.")], thread="job")
    caroline = Entity.objects.get(workspace=workspace, name="Caroline")
    acme = entity_create(workspace=workspace, kind="organisation", name="Acme Robotics",
                         description="a company that builds warehouse robots")
    rel = relationship_add(subject=caroline, predicate="works_at", object=acme,
                           evidence=Interaction.objects.get(pk=ids[0]),
                           quote="a new job at Acme Robotics", status=status, source="test", **extra)
    return ids[0], caroline, acme, rel


def test_the_worker_embeds_what_extraction_makes(workspace):
    log_chat(workspace)
    assert Entity.objects.filter(workspace=workspace).exists()
    assert not Entity.objects.filter(workspace=workspace, embedding__isnull=True).exists()


def test_an_entity_is_recalled_by_meaning_and_by_its_description(api, workspace):
    _, _, acme, _ = _acme_job(workspace)
    assert Entity.objects.get(pk=acme.pk).embedding is None  # made outside the worker's processing
    assert entities_embed_all(workspace_id=workspace.pk) >= 2
    by_meaning = _results(api, {"query": "which firm makes machines for storage depots?", "types": ["entity"]})
    assert by_meaning[0]["kind"] == "entity" and by_meaning[0]["id"] == acme.pk
    assert by_meaning[0]["text"] == "Acme Robotics (organisation): a company that builds warehouse robots"
    assert by_meaning[0]["score_breakdown"]["similarity"] > 0
    by_words = _results(api, {"query": "robots", "types": ["entity"]})
    assert by_words[0]["id"] == acme.pk and by_words[0]["score_breakdown"]["lexical"] > 0


def test_a_relationship_is_recalled_with_its_evidence(api, workspace):
    turn, caroline, acme, rel = _acme_job(workspace)
    entities_embed_all()
    results = _results(api, {"query": "Where is Caroline employed?", "types": ["relationship"]})
    assert results[0]["kind"] == "relationship" and results[0]["id"] == rel.pk
    assert results[0]["text"] == "Caroline works at Acme Robotics"
    assert results[0]["sources"] == [{"interaction_id": turn, "external_id": "job:0"}]
    assert results[0]["score_breakdown"]["entity"] > 0  # the query names Caroline


def test_a_relationship_is_found_through_the_entity_the_query_names(api, workspace):
    # No embedding yet (nothing has run): only the named entity can find it.
    *_, rel = _acme_job(workspace)
    Relationship.objects.filter(pk=rel.pk).update(embedding=None)
    results = _results(api, {"query": "tell me about Caroline", "types": ["relationship"]})
    assert [r["id"] for r in results] == [rel.pk]


def test_a_name_in_the_possessive_names_the_entity(api, workspace):
    """"Caroline's job" names Caroline: the word splitter keeps the apostrophe, and a query
    naming a person possessively found nobody (165 of the 997 scorable LoCoMo dev-half
    questions, e.g. "What is Caroline's relationship status?")."""
    *_, rel = _acme_job(workspace)
    Relationship.objects.filter(pk=rel.pk).update(embedding=None)  # only the named entity can find it
    results = _results(api, {"query": "Where is Caroline's job?", "types": ["relationship"]})
    assert [r["id"] for r in results] == [rel.pk]
    assert results[0]["score_breakdown"]["entity"] > 0


@pytest.mark.parametrize("query, names", [
    ("What is Caroline's identity?", ["Caroline"]),
    ("What is CAROLINE'S identity?", ["Caroline"]),
    ("What is Caroline\u2019s identity?", ["Caroline"]),  # a typographic apostrophe splits the word
    ("Where did James' sister go?", ["James"]),
    ("Acme Robotics's new site", ["Acme Robotics"]),
    ("What is Carolines' plan?", []),  # not a name in any form
    ("It's Caro's turn", []),  # a prefix of a name is not the name
])
def test_which_entities_a_query_names(workspace, query, names):
    from entities.search import entities_named

    for name in ("Caroline", "James", "Acme Robotics"):
        entity_create(workspace=workspace, kind="person" if name != "Acme Robotics" else "organisation", name=name)
    assert sorted(name for _, name in entities_named(workspace.pk, query)) == names


def test_an_entity_card_does_not_hide_the_turns_it_cites(api, workspace):
    turn, caroline, acme, _ = _acme_job(workspace)
    acme.evidence.create(interaction_id=turn, quote="Acme Robotics")
    entities_embed_all()
    results = _results(api, {"query": "Acme Robotics job", "limit": 10})
    kinds = {(r["kind"], r["id"]) for r in results}
    assert ("entity", acme.pk) in kinds
    assert any(r["kind"] == "interaction" and r["id"] == turn for r in results)
    card = next(r for r in results if r["kind"] == "entity" and r["id"] == acme.pk)
    assert card["sources"] == [{"interaction_id": turn, "external_id": "job:0"}]


def test_renaming_clears_the_embeddings_it_made_stale(api, workspace):
    *_, acme, rel = _acme_job(workspace)
    entities_embed_all()
    status = api.get("/status").json()
    assert status["pending"]["entities to embed"] == 0
    entity_update(entity=acme, name="Acme Automation")
    assert Entity.objects.get(pk=acme.pk).embedding is None
    assert Relationship.objects.get(pk=rel.pk).embedding is None
    assert api.get("/status").json()["pending"]["entities to embed"] == 2
    assert entities_embed_all() == 2
    assert _results(api, {"query": "Where does Caroline work?", "types": ["relationship"]})[0]["text"] == \
        "Caroline works at Acme Automation"


def test_a_rename_while_the_model_runs_gets_no_stale_embedding(workspace, monkeypatch):
    # The model runs with no lock held (it may be remote): a rename meanwhile must not be
    # answered with the vector of the old name; the next run embeds the new one.
    *_, acme, rel = _acme_job(workspace)
    real = providers.get_embedder()

    class RenamingEmbedder:
        name = real.name

        def embed(self, texts):
            Entity.objects.filter(pk=acme.pk).update(name="Acme Automation")
            return real.embed(texts)

    monkeypatch.setattr(providers, "get_embedder", lambda: RenamingEmbedder())
    entities_embed_all()
    assert Entity.objects.get(pk=acme.pk).embedding is None
    assert Relationship.objects.get(pk=rel.pk).embedding is None
    monkeypatch.undo()
    assert entities_embed_all() == 2


def test_a_merge_moving_an_end_clears_the_relationship_embedding(workspace):
    *_, acme, rel = _acme_job(workspace)
    entities_embed_all()
    other = entity_create(workspace=workspace, kind="organisation", name="Acme Robotics Inc")
    entity_merge(source=acme, target=other)
    assert Relationship.objects.get(pk=rel.pk).embedding is None


def test_filters_apply_to_entities_and_relationships(api, workspace):
    turn, caroline, acme, rel = _acme_job(workspace, status="candidate")
    entities_embed_all()
    ids = lambda body: {r["id"] for r in _results(api, body)}  # noqa: E731
    query = {"query": "Caroline job at Acme Robotics", "types": ["relationship"]}
    assert rel.pk not in ids(query)
    candidates = {**query, "include_candidates": True}
    assert rel.pk in ids(candidates)
    Relationship.objects.filter(pk=rel.pk).update(confidence=0.5)
    assert rel.pk not in ids({**candidates, "min_confidence": 0.6})
    assert rel.pk in ids({**candidates, "min_confidence": 0.5})
    melanie = entity_create(workspace=workspace, kind="person", name="Melanie")
    assert rel.pk not in ids({**candidates, "entity": melanie.pk})
    assert rel.pk in ids({**candidates, "entity": acme.pk})
    assert rel.pk not in ids({**candidates, "channel": "email"})
    assert rel.pk in ids({**candidates, "channel": "chat"})
    entities = _results(api, {"query": "Acme Robotics", "types": ["entity"], "entity": acme.pk})
    assert [r["id"] for r in entities] == [acme.pk]
    assert _results(api, {"query": "Acme Robotics", "types": ["entity"], "channel": "email"}) == []


def test_as_of_sees_what_was_true_and_known_then(api, workspace):
    turn, caroline, acme, rel = _acme_job(workspace)
    entities_embed_all()
    before = (rel.created_at - timedelta(seconds=1)).isoformat()
    query = {"query": "Where does Caroline work?", "types": ["relationship"]}
    assert [r["id"] for r in _results(api, query)] == [rel.pk]
    assert _results(api, {**query, "as_of": before}) == []
    ended = datetime.now(timezone.utc)
    Relationship.objects.filter(pk=rel.pk).update(valid_to=ended, status="superseded", updated_at=ended)
    assert _results(api, query) == []
    assert [r["id"] for r in _results(api, {**query, "as_of": (ended - timedelta(microseconds=1)).isoformat()})] \
        == [rel.pk]


def test_a_pack_places_them_in_the_entities_section_once(api, workspace):
    *_, acme, rel = _acme_job(workspace)
    entities_embed_all()
    pack = api.post("/context", {"query": "Where does Caroline work? Tell me about Acme Robotics."}).json()
    sections = {s["name"]: s for s in pack["sections"]}
    keys = [(i["kind"], i["id"]) for s in pack["sections"] for i in s["items"]]
    assert len(keys) == len(set(keys))
    entity_keys = {(i["kind"], i["id"]) for i in sections["entities"]["items"]}
    assert {("relationship", rel.pk), ("entity", acme.pk)} <= entity_keys
    assert not any(i["kind"] in ("entity", "relationship") for i in sections["retrieval"]["items"])
    assert "Caroline works at Acme Robotics" in pack["text"]


def test_unknown_kind_is_still_422(api):
    response = api.post("/recall", {"query": "x", "types": ["entities"]})
    assert response.status_code == 422


def test_the_processor_runs_in_the_workers_claim(workspace):
    """interactions_index (the worker) leaves nothing for the beat task to embed."""
    from conversations.services import InteractionItem, interactions_log

    items = [InteractionItem(channel="chat", channel_id="dana", sender_name="Dana Scully", content="I moved to Boston.",
                             thread="t", external_id="t:0", occurred_at=datetime(2024, 1, 2, tzinfo=timezone.utc))]
    ids = [r.id for r in interactions_log(workspace=workspace, items=items)]
    interactions_index(interaction_ids=ids)
    assert Entity.objects.filter(workspace=workspace).exists()
    assert not Entity.objects.filter(workspace=workspace, embedding__isnull=True).exists()
    assert not Relationship.objects.filter(workspace=workspace, embedding__isnull=True).exists()


def test_a_bare_card_comes_only_when_entities_are_asked_for(api, workspace):
    log_chat(workspace)  # Caroline and Melanie: speakers, a name and a kind, nothing more
    entities_embed_all()
    caroline = Entity.objects.get(workspace=workspace, name="Caroline")
    everything = _results(api, {"query": "What does Caroline do?", "limit": 20})
    assert not any(r["kind"] == "entity" for r in everything)
    asked = _results(api, {"query": "Caroline", "types": ["entity"]})
    assert asked[0]["id"] == caroline.pk and asked[0]["text"] == "Caroline (person)"
    entity_update(entity=caroline, description="a counselor in training")
    entities_embed_all()
    described = _results(api, {"query": "Who is training to be a counselor?", "limit": 20})
    assert any(r["kind"] == "entity" and r["id"] == caroline.pk for r in described)


def test_an_entity_merged_away_is_neither_embedded_nor_waited_for(api, workspace):
    kept = entity_create(workspace=workspace, kind="organisation", name="Acme Robotics")
    gone = entity_create(workspace=workspace, kind="organisation", name="ACME robotics ltd")
    entity_merge(source=gone, target=kept)
    entities_embed_all()
    assert Entity.objects.get(pk=kept.pk).embedding is not None
    assert Entity.objects.get(pk=gone.pk).embedding is None
    assert api.get("/status").json()["pending"]["entities to embed"] == 0
