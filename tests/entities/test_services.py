"""Entities against the real PostgreSQL: identities, suggestions that never act alone,
merge and split, insert-only profiles, relationships in time, and erasure."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone as dt_timezone

import pytest
from django.core.exceptions import ValidationError
from django.db import DatabaseError, connection, transaction

from conversations import services as conversation_services
from conversations.models import Conversation, ConversationSummary, Interaction, InteractionIndex, InteractionKinds
from conversations.services import InteractionItem
from core.errors import Conflict
from entities import selectors, services
from entities.models import Entity, EntityEvidence, Identity, LinkSuggestion, ProfileValue, Relationship

pytestmark = pytest.mark.django_db

T0 = datetime(2024, 3, 1, 9, 0, tzinfo=dt_timezone.utc)


def log(workspace, channel, handle, name, text, at, thread=""):
    [result] = conversation_services.interactions_log(workspace=workspace, items=[InteractionItem(
        channel=channel, channel_id=handle, sender_name=name, content=text, occurred_at=at, thread=thread)])
    return result


def person(workspace, name="Ada Lovelace", channel="slack", handle="U1"):
    result = log(workspace, channel, handle, name, f"Hello, this is {name}.", T0)
    return Entity.objects.get(pk=result.entity_id)


# --- identities -----------------------------------------------------------------------------------

def test_linking_a_handle_owned_by_another_entity_is_a_conflict_naming_the_owner(workspace):
    ada = person(workspace)
    grace = services.entity_create(workspace=workspace, kind="person", name="Grace Hopper")
    with pytest.raises(Conflict) as info:
        services.identity_link(entity=grace, channel="slack", channel_id="U1")
    assert "Ada Lovelace" in info.value.message and info.value.details["owner_entity_id"] == ada.pk
    assert Identity.objects.get(channel="slack", channel_id="U1").entity == ada


def test_relinking_is_unlink_then_link(workspace):
    ada = person(workspace)
    grace = services.entity_create(workspace=workspace, kind="person", name="Grace Hopper")
    services.identity_unlink(identity=Identity.objects.get(channel_id="U1"))
    identity = services.identity_link(entity=grace, channel="slack", channel_id="U1", confidence="suggested")
    assert identity.entity == grace and identity.confidence == "suggested"
    assert services.identity_verify(identity=identity, actor=services_actor()).confidence == "confirmed"
    assert not Identity.objects.filter(entity=ada).exists()


def test_a_what_kind_cannot_hold_a_handle(workspace):
    project = services.entity_create(workspace=workspace, kind="project", name="Apollo")
    with pytest.raises(ValidationError):
        services.identity_link(entity=project, channel="slack", channel_id="U9")


def services_actor():
    from core.services import SYSTEM

    return SYSTEM


# --- suggestions ----------------------------------------------------------------------------------

def test_suggestions_propose_but_never_link_or_merge(workspace):
    slack = person(workspace, "Ada Lovelace", "slack", "U1")
    email = person(workspace, "Ada Lovelace", "email", "ada.lovelace@example.com")
    other = person(workspace, "Grace Hopper", "slack", "U2")
    before = sorted(Identity.objects.values_list("pk", "entity_id"))
    assert conversation_services.identity_links_suggest(workspace=workspace) == 1
    suggestion = LinkSuggestion.objects.get()
    assert {suggestion.identity.entity_id, suggestion.entity_id} == {slack.pk, email.pk}
    assert suggestion.status == "pending" and suggestion.reasons
    # Nothing moved, nothing merged.
    assert sorted(Identity.objects.values_list("pk", "entity_id")) == before
    assert Entity.objects.filter(merged_into__isnull=False).count() == 0
    assert not LinkSuggestion.objects.filter(entity=other).exists()
    # A rejected pair is not proposed again.
    services.link_suggestion_reject(suggestion=suggestion, actor=services_actor())
    assert conversation_services.identity_links_suggest(workspace=workspace) == 0


def test_the_scan_reads_only_the_candidate_pairs_messages_and_counts_shared_threads(workspace, monkeypatch):
    """Who wrote in which conversations (the co-occurrence signal) is read for the entities
    of candidate pairs only, not from the whole log; and it still counts: two handles in
    the same threads are named as a reason."""
    from conversations import selectors as conversation_selectors

    for day, thread in enumerate(("standup", "release", "retro")):
        log(workspace, "chat", "ada", "Ada Lovelace", f"Notes for the {thread}.", T0 + timedelta(days=day), thread)
        log(workspace, "chat", "ada.l", "Ada Lovelace", f"More on the {thread}.", T0 + timedelta(days=day, hours=1),
            thread)
    grace = person(workspace, "Grace Hopper", "chat", "grace")
    asked = []
    keys = conversation_selectors.entity_conversation_keys
    monkeypatch.setattr(conversation_selectors, "entity_conversation_keys",
                        lambda **kwargs: asked.append(set(kwargs["entity_ids"])) or keys(**kwargs))
    assert conversation_services.identity_links_suggest(workspace=workspace) == 1
    suggestion = LinkSuggestion.objects.get()
    pair = {suggestion.identity.entity_id, suggestion.entity_id}
    assert asked == [pair] and grace.pk not in pair
    assert any("same conversations" in reason for reason in suggestion.reasons), suggestion.reasons


def test_accepting_a_suggestion_merges_the_two(workspace):
    person(workspace, "Ada Lovelace", "slack", "U1")
    person(workspace, "Ada Lovelace", "email", "ada.lovelace@example.com")
    conversation_services.identity_links_suggest(workspace=workspace)
    suggestion = LinkSuggestion.objects.get()
    merge = services.link_suggestion_accept(suggestion=suggestion, actor=services_actor())
    assert merge.target_id == suggestion.entity_id
    assert Identity.objects.filter(entity_id=suggestion.entity_id).count() == 2
    with pytest.raises(Conflict):
        services.link_suggestion_accept(suggestion=suggestion, actor=services_actor())


# --- merge and split --------------------------------------------------------------------------------

def snapshot(*entities) -> dict:
    ids = [e.pk for e in entities]
    return {
        "entities": sorted(Entity.objects.filter(pk__in=ids).values_list("pk", "status", "merged_into_id", "aliases", "name")),
        "identities": sorted(Identity.objects.values_list("pk", "entity_id")),
        "interactions": sorted(Interaction.objects.values_list("pk", "entity_id")),
        "conversations": sorted(Conversation.objects.values_list("pk", "entity_id")),
        "profile": sorted(ProfileValue.objects.values_list("pk", "entity_id", "key", "value", "status")),
        "relationships": sorted(Relationship.objects.values_list("pk", "subject_id", "object_id", "status")),
        "evidence": sorted(EntityEvidence.objects.values_list("pk", "entity_id", "interaction_id")),
    }


def test_a_merge_moves_everything_and_its_split_restores_the_original_state(workspace):
    ada = person(workspace, "Ada Lovelace", "slack", "U1")
    ada_mail = person(workspace, "Ada L.", "email", "ada@example.com")
    acme = services.entity_create(workspace=workspace, kind="organisation", name="Acme")
    mail_msg = log(workspace, "email", "ada@example.com", "Ada L.", "I work at Acme.", T0 + timedelta(minutes=1))
    services.profile_set(entity=ada_mail, key="employer", value="Acme")
    services.profile_set(entity=ada, key="timezone", value="Europe/London")
    services.relationship_add(subject=ada_mail, predicate="works_at", object=acme)
    services.relationship_add(subject=ada_mail, predicate="knows", object=ada)  # would become a self-loop
    EntityEvidence.objects.create(entity=ada_mail, interaction_id=mail_msg.id, quote="I work at Acme.")
    original = snapshot(ada, ada_mail, acme)

    merge = services.entity_merge(source=ada_mail, target=ada)
    ada_mail.refresh_from_db()
    ada.refresh_from_db()
    assert ada_mail.merged_into == ada and ada_mail.status == "superseded"
    assert "Ada L." in ada.aliases
    assert set(Interaction.objects.filter(entity=ada).values_list("pk", flat=True)) >= {mail_msg.id}
    assert Identity.objects.filter(entity=ada).count() == 2
    assert {v.key for v in selectors.profile_current(entity=ada)} == {"employer", "timezone"}
    assert Relationship.objects.get(predicate="works_at").subject == ada
    assert Relationship.objects.get(predicate="knows").subject == ada_mail  # not turned into a self-loop
    with pytest.raises(Conflict):
        services.entity_merge(source=ada_mail, target=ada)

    services.entity_split(merge=merge)
    assert snapshot(ada, ada_mail, acme) == original
    with pytest.raises(Conflict):
        services.entity_split(merge=merge)


def test_an_entity_cannot_merge_into_itself(workspace):
    ada = person(workspace)
    with pytest.raises(ValidationError):
        services.entity_merge(source=ada, target=ada)


# --- profiles -----------------------------------------------------------------------------------------

def test_a_new_profile_value_supersedes_and_the_chain_gives_the_current_value(workspace):
    ada = person(workspace)
    first = services.profile_set(entity=ada, key="employer", value="Acme")
    second = services.profile_set(entity=ada, key="employer", value="Globex")
    assert services.profile_set(entity=ada, key="employer", value="Globex") == second  # no new version
    third = services.profile_set(entity=ada, key="employer", value="Initech")
    assert [v.value for v in selectors.profile_history(entity=ada, key="employer")] == ["Acme", "Globex", "Initech"]
    assert (second.supersedes, third.supersedes) == (first, second)
    [current] = selectors.profile_current(entity=ada)
    assert current == third


def test_candidates_wait_and_an_approved_one_becomes_current(workspace):
    ada = person(workspace)
    services.profile_set(entity=ada, key="location", value="London")
    message = log(workspace, "slack", "U1", "Ada", "I'm in Berlin now", T0 + timedelta(hours=1))
    candidate = services.profile_candidate_add(entity=ada, key="location", value="Berlin", confidence=0.8,
                                               evidence=Interaction.objects.get(pk=message.id), quote="I'm in Berlin now",
                                               source="rule:profile.location")
    assert candidate.status == "candidate"
    assert [v.value for v in selectors.profile_current(entity=ada)] == ["London"]
    assert services.profile_candidate_add(entity=ada, key="location", value="Berlin", confidence=0.8,
                                          evidence=candidate.evidence, quote="", source="rule:x") is None  # once
    services.profile_candidate_approve(value=candidate, actor=services_actor())
    [current] = selectors.profile_current(entity=ada)
    assert current.value == "Berlin" and current.supersedes.value == "London"
    with pytest.raises(Conflict):
        services.profile_candidate_reject(value=candidate, actor=services_actor())


def test_a_profile_value_cannot_be_rewritten_in_place(workspace):
    ada = person(workspace)
    row = services.profile_set(entity=ada, key="employer", value="Acme")
    with pytest.raises(DatabaseError, match="immutable"), transaction.atomic(), connection.cursor() as cursor:
        cursor.execute("UPDATE entities_profilevalue SET value = 'Evil Corp' WHERE id = %s", [row.pk])
    with pytest.raises(DatabaseError, match="immutable"), transaction.atomic(), connection.cursor() as cursor:
        cursor.execute("DELETE FROM entities_profilevalue WHERE id = %s", [row.pk])


# --- relationships -----------------------------------------------------------------------------------------

def test_a_contradicting_relationship_supersedes_and_as_of_answers_in_time(workspace):
    ada = person(workspace)
    acme = services.entity_create(workspace=workspace, kind="organisation", name="Acme")
    globex = services.entity_create(workspace=workspace, kind="organisation", name="Globex")
    old = services.relationship_add(subject=ada, predicate="works_at", object=acme, valid_from=T0)
    new = services.relationship_add(subject=ada, predicate="works_at", object=globex, valid_from=T0 + timedelta(days=30))
    old.refresh_from_db()
    assert old.status == "superseded" and old.valid_to == T0 + timedelta(days=30) and new.supersedes == old

    def employers(**kw):
        return [r.object.name for r in selectors.relationships_for(entity=ada, **kw) if r.predicate == "works_at"]

    assert employers() == ["Globex"]
    assert employers(as_of=T0 + timedelta(days=10)) == ["Acme"]
    assert employers(as_of=T0 + timedelta(days=40)) == ["Globex"]
    assert employers(as_of=T0 - timedelta(days=1)) == []
    assert employers(as_of=T0 + timedelta(days=10), known_at=old.created_at - timedelta(seconds=1)) == []


def test_non_functional_relationships_accumulate(workspace):
    ada = person(workspace)
    a = services.entity_create(workspace=workspace, kind="person", name="Charles")
    b = services.entity_create(workspace=workspace, kind="person", name="Mary")
    services.relationship_add(subject=ada, predicate="knows", object=a)
    services.relationship_add(subject=ada, predicate="knows", object=b)
    assert services.relationship_add(subject=ada, predicate="knows", object=b).object == b  # deduplicated
    assert Relationship.objects.filter(status="active").count() == 2


def test_facts_of_gives_what_the_profile_and_relationship_selectors_give(workspace, other_workspace):
    """The pack's plain-SQL read of what is known about named entities, against the ORM
    selectors it stands in for: current values only, a shared relationship once, as_of."""
    ada = person(workspace)
    bob = person(workspace, name="Bob Stone", handle="U2")
    acme = services.entity_create(workspace=workspace, kind="organisation", name="Acme")
    globex = services.entity_create(workspace=workspace, kind="organisation", name="Globex")
    evidence = log(workspace, "slack", "U1", "Ada Lovelace", "I moved to London.", T0 + timedelta(days=1))
    services.profile_set(entity=ada, key="city", value="Paris")
    services.profile_set(entity=ada, key="city", value="London", evidence=Interaction.objects.get(pk=evidence.id))
    services.profile_set(entity=ada, key="born", value="1815")
    services.profile_set(entity=bob, key="role", value="engineer", confidence=0.7)
    services.relationship_add(subject=ada, predicate="works_at", object=acme, valid_from=T0)
    services.relationship_add(subject=ada, predicate="works_at", object=globex, valid_from=T0 + timedelta(days=30))
    services.relationship_add(subject=ada, predicate="knows", object=bob)
    outsider = services.entity_create(workspace=other_workspace, kind="person", name="Eve")
    services.profile_set(entity=outsider, key="city", value="Oslo")

    def expected(ids, as_of=None):
        from entities.services.embedding import relationship_text

        entities = Entity.objects.filter(workspace=workspace, pk__in=ids).order_by("id")
        values = selectors.profile_current_of(entity_ids=[e.pk for e in entities])
        relationships = selectors.relationships_of(entity_ids=[e.pk for e in entities], as_of=as_of)
        rows, listed = [], set()
        for entity in entities:
            rows += [("profile_value", v.pk, f"{entity.name} — {v.key}: {v.value}", v.confidence, v.evidence_id)
                     for v in values.get(entity.pk, [])]
            for rel in relationships:
                if entity.pk in (rel.subject_id, rel.object_id) and rel.pk not in listed:
                    listed.add(rel.pk)
                    rows.append(("relationship", rel.pk, relationship_text(rel), rel.confidence, rel.evidence_id))
        return rows

    def got(ids, as_of=None):
        return [(f.kind, f.id, f.text, f.confidence, f.evidence_id)
                for f in selectors.facts_of(workspace_id=workspace.pk, entity_ids=ids, as_of=as_of)]

    for ids in ([ada.pk], [bob.pk, ada.pk], [ada.pk, bob.pk, acme.pk], [globex.pk], [], [outsider.pk]):
        for as_of in (None, T0 + timedelta(days=10), T0 - timedelta(days=1)):
            assert got(ids, as_of) == expected(ids, as_of), (ids, as_of)
    facts = got([ada.pk, bob.pk])
    assert sum(1 for f in facts if "knows" in f[2]) == 1
    assert ("profile_value", ProfileValue.objects.get(value="London").pk, "Ada Lovelace — city: London", 1.0,
            evidence.id) in facts
    external = {f.id: f.external_id for f in selectors.facts_of(workspace_id=workspace.pk, entity_ids=[ada.pk])}
    assert external[ProfileValue.objects.get(value="London").pk] == Interaction.objects.get(pk=evidence.id).external_id


def test_a_self_relationship_or_an_unknown_predicate_is_refused(workspace):
    ada = person(workspace)
    acme = services.entity_create(workspace=workspace, kind="organisation", name="Acme")
    with pytest.raises(ValidationError):
        services.relationship_add(subject=ada, predicate="knows", object=ada)
    with pytest.raises(ValidationError):
        services.relationship_add(subject=ada, predicate="admires", object=acme)
    assert Relationship.objects.count() == 0


# --- erasure --------------------------------------------------------------------------------------------------

def entity_references(entity_pk: int) -> dict[str, int]:
    """Every row, in every table, whose foreign key points at the entity."""
    found = {}
    with connection.cursor() as cursor:
        cursor.execute("""
            SELECT tc.table_name, kcu.column_name FROM information_schema.table_constraints tc
            JOIN information_schema.key_column_usage kcu ON tc.constraint_name = kcu.constraint_name
            JOIN information_schema.constraint_column_usage ccu ON tc.constraint_name = ccu.constraint_name
            WHERE tc.constraint_type = 'FOREIGN KEY' AND ccu.table_name = 'entities_entity'""")
        for table, column in cursor.fetchall():
            cursor.execute(f'SELECT count(*) FROM "{table}" WHERE "{column}" = %s', [entity_pk])
            count = cursor.fetchone()[0]
            if count:
                found[f"{table}.{column}"] = count
    return found


def test_erasure_removes_everything_about_the_entity_and_the_receipt_counts_it(workspace):
    ada = person(workspace, "Ada Lovelace", "chat", "ada")  # 1 interaction, own conversation
    grace_msg = log(workspace, "chat", "grace", "Grace", "Morning Ada, zebrafish results are in", T0, thread="lab")
    ada_msgs = [log(workspace, "chat", "ada", "Ada", f"My xylophone{i} notes are ready", T0 + timedelta(seconds=30 * (i + 1)),
                    thread="lab") for i in range(3)]
    grace = Entity.objects.get(pk=grace_msg.entity_id)
    acme = services.entity_create(workspace=workspace, kind="organisation", name="Acme")
    services.profile_set(entity=ada, key="employer", value="Acme")
    services.profile_set(entity=ada, key="employer", value="Globex")
    services.relationship_add(subject=ada, predicate="works_at", object=acme)
    services.relationship_add(subject=grace, predicate="knows", object=ada)
    # Grace's profile cites one of Ada's messages: the quote must go, the value may stay.
    services.profile_candidate_add(entity=grace, key="role", value="biologist", confidence=0.7,
                                   evidence=Interaction.objects.get(pk=ada_msgs[0].id), quote="My xylophone0 notes",
                                   source="rule:test")
    EntityEvidence.objects.create(entity=ada, interaction_id=ada_msgs[0].id, quote="notes")
    conversation_services.interactions_index(interaction_ids=list(Interaction.objects.values_list("pk", flat=True)))
    lab = Conversation.objects.get(key="thread:lab")
    conversation_services.conversation_set_status(conversation=lab, status="idle", reason="test")
    conversation_services.conversation_summarise(conversation_id=lab.pk)
    assert "xylophone" in ConversationSummary.objects.get(conversation=lab).text

    receipt = services.entity_erase(entity=ada)

    assert receipt["interactions"] == 4 and receipt["interaction_embeddings"] == 4 and receipt["interaction_kinds"] == 4
    assert receipt["profile_values"] == 2 and receipt["relationships"] == 2 and receipt["identities"] == 1
    assert receipt["summaries"] == 1 and receipt["conversations"] == 1 and receipt["evidence"] == 1
    assert receipt["entities"] == 1
    assert entity_references(ada.pk) == {}
    assert not Entity.objects.filter(pk=ada.pk).exists()
    # Full-text and vector search find none of the content.
    assert not Interaction.objects.filter(content__icontains="xylophone").exists()
    assert selectors_fts(workspace, "xylophone0") == 0
    assert InteractionIndex.objects.count() == 1
    assert InteractionKinds.objects.count() == 1  # the kinds of things they named went with them
    assert not ProfileValue.objects.filter(quote__icontains="xylophone").exists()
    # Grace's side of the thread stays, re-counted, to be summarised again.
    lab.refresh_from_db()
    assert lab.interaction_count == 1 and lab.entity == grace and lab.current_summary is None
    # The audit log keeps the erasure, not the person.
    from core.models import AuditEvent

    event = AuditEvent.objects.get(verb="entity.erase")
    assert event.data["receipt"] == receipt and event.target_id == ""
    assert not AuditEvent.objects.filter(target_type="entities.entity", target_id=str(ada.pk)).exists()
    assert "Ada" not in str(list(AuditEvent.objects.values_list("data", flat=True)))


def selectors_fts(workspace, word: str) -> int:
    from conversations.selectors import interaction_list

    return interaction_list(workspace=workspace, q=word).count()


# --- extraction during background processing ------------------------------------------------------

def test_processing_turns_keyed_facts_into_candidates_for_review(workspace):
    result = log(workspace, "slack", "U1", "Ada Lovelace",
                 "Quick update: I work at Acme Corp now. My email is ada@example.com", T0)
    ada = Entity.objects.get(pk=result.entity_id)
    conversation_services.interactions_index(interaction_ids=[result.id])
    values = {(v.key, v.value): v for v in ProfileValue.objects.filter(entity=ada)}
    assert ("email", "ada@example.com") in values and values[("email", "ada@example.com")].status == "candidate"
    assert values[("email", "ada@example.com")].evidence_id == result.id
    assert values[("email", "ada@example.com")].source.startswith("rule:")
    assert selectors.profile_current(entity=ada) == []  # nothing current until a person approves
    rel = Relationship.objects.get(subject=ada, predicate="works_at")
    assert rel.status == "candidate" and rel.object.name == "Acme Corp" and rel.object.status == "candidate"
    assert EntityEvidence.objects.filter(entity=rel.object, interaction_id=result.id).exists()
    # Processing the same interaction again proposes nothing twice.
    conversation_services.interactions_index(interaction_ids=[result.id])
    assert ProfileValue.objects.filter(entity=ada).count() == len(values)
