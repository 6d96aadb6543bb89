"""One pending review item of every kind, made the way the app makes them (through the
owners' services), for the review tests."""

from __future__ import annotations

from conversations import services as conversation_services
from conversations.services import InteractionItem
from entities import services as entity_services
from entities.models import Entity, Identity
from memory import services as memory_services
from memory.services import Draft, Evidence
from review.models import ReviewItem

MESSAGE = "By the way, my favourite editor is Helix and I moved to Lisbon last spring."


def message(workspace, content: str = MESSAGE, sender: str = "Ada", channel_id: str = "U1"):
    [result] = conversation_services.interactions_log(workspace=workspace, items=[InteractionItem(
        channel="slack", channel_id=channel_id, sender_name=sender, content=content)])
    return result


def memory_candidate(workspace, text="Ada's favourite editor is Helix.", quote="my favourite editor is Helix",
                     rule="preference.favorite", confidence=0.6, type_="preference"):
    source = message(workspace)
    start = MESSAGE.find(quote)
    stored = memory_services.memory_store(workspace_id=workspace.pk, draft=Draft(
        type=type_, text=text, certainty="inferred", confidence=confidence, rule=rule, source="rule",
        subject_id=source.entity_id,
        evidence=[Evidence(source.id, quote, start if start >= 0 else None, start + len(quote) if start >= 0 else None)]))
    return stored.memory


def conflict(workspace):
    source = message(workspace)
    old = memory_services.memory_store(workspace_id=workspace.pk, draft=Draft(
        type="identity", text="Ada lives in Porto.", certainty="verbatim", confidence=1.0, subject_id=source.entity_id,
        attribute="location", value="Porto", evidence=[Evidence(source.id, "", None, None)])).memory
    new = memory_services.memory_store(workspace_id=workspace.pk, draft=Draft(
        type="identity", text="Ada lives in Lisbon.", certainty="extracted", confidence=0.95, rule="identity.location",
        subject_id=source.entity_id, attribute="location", value="Lisbon",
        evidence=[Evidence(source.id, "I moved to Lisbon", MESSAGE.find("I moved to Lisbon"),
                           MESSAGE.find("I moved to Lisbon") + len("I moved to Lisbon"))])).memory
    return old, new


def graduation(workspace):
    memory = memory_services.memory_store(workspace_id=workspace.pk, draft=Draft(
        type="fact", text="The pad thickness = 4 mm", certainty="verbatim", confidence=1.0)).memory
    return memory.graduations.get()


def failing_procedure(workspace):
    stored = memory_services.procedure_create(workspace_id=workspace.pk, name="Restart the cache",
                                              steps=["stop it", "wipe it", "start it"])
    procedure = stored.memory.procedure
    from core.services import SYSTEM

    for outcome in ("failure",) * 5:
        procedure = memory_services.procedure_outcome(procedure=procedure, outcome=outcome, actor=SYSTEM)
    return procedure


def entity_candidate(workspace, name="Helix"):
    source = message(workspace)
    entity, _ = entity_services.entity_propose(workspace_id=workspace.pk, kind="tool", name=name,
                                               evidence_ids=[source.id], quote="Helix", rule="rule:tool.named")
    return entity


def relationship_candidate(workspace):
    source = message(workspace)
    ada = Entity.objects.get(pk=source.entity_id)
    lisbon = entity_services.entity_create(workspace=workspace, kind="place", name="Lisbon")
    from conversations.models import Interaction

    return entity_services.relationship_add(subject=ada, predicate="lives_in", object=lisbon, status="candidate",
                                            confidence=0.7, evidence=Interaction.objects.get(pk=source.id),
                                            quote="I moved to Lisbon", source="rule:location.moved")


def profile_candidate(workspace):
    source = message(workspace)
    from conversations.models import Interaction

    return entity_services.profile_candidate_add(entity=Entity.objects.get(pk=source.entity_id), key="editor",
                                                 value="Helix", confidence=0.7,
                                                 evidence=Interaction.objects.get(pk=source.id),
                                                 quote="my favourite editor is Helix", source="rule:profile.editor")


def link_suggestion(workspace):
    for channel, handle in (("slack", "U9"), ("email", "grace.hopper@example.com")):
        entity = entity_services.entity_create(workspace=workspace, kind="person", name="Grace Hopper")
        entity_services.identity_link(entity=entity, channel=channel, channel_id=handle, display_name="Grace Hopper")
    conversation_services.identity_links_suggest(workspace=workspace)
    from entities.models import LinkSuggestion

    return LinkSuggestion.objects.get(workspace=workspace)


def every_kind(workspace) -> dict[str, object]:
    """kind -> target of its pending item."""
    _, new = conflict(workspace)
    return {
        "memory": memory_candidate(workspace),
        "conflict": new,
        "graduation": graduation(workspace),
        "low_effectiveness": failing_procedure(workspace),
        "entity": entity_candidate(workspace),
        "relationship": relationship_candidate(workspace),
        "profile_value": profile_candidate(workspace),
        "identity_link": link_suggestion(workspace),
    }


def item_for(kind: str, target) -> ReviewItem:
    return ReviewItem.objects.get(kind=kind, target_id=target.pk, status="pending")


__all__ = ["Identity", "every_kind", "item_for"]
