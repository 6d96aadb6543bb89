"""Erasure of a person's data (DESIGN.md, privacy): the one audited path that may delete
from the insert-only log. It removes the entity's interactions (and their embeddings and
search vectors, which live in the same rows), its conversations and every summary that
quoted it, its profile values, relationships, identities, evidence, link suggestions, a
decision record; every layer's eraser (core.layers, in its order) removes what that
layer holds (the interactions, conversations and summaries: the log layer; memories,
packs, review items). Quotes that other rows took from its messages are blanked; audit
events about it lose their content. The answer is a receipt of counts per table; the
audit log records the erasure with the counts only. Once it commits, a task vacuums
every table it wrote (core.maintenance)."""

from __future__ import annotations

import uuid

from django.db import connection, transaction
from django.db.models import Q

from core import layers
from core.concurrency import lock_workspaces, retry_on_conflict
from core.maintenance import tables_written_in_transaction
from core.models import AuditEvent
from core.services import SYSTEM, Actor, audit_record
from core.tasks import vacuum_erased_tables
from entities.models import (
    DecisionRecord,
    DecisionThought,
    Entity,
    EntityEvidence,
    EntityMerge,
    Identity,
    LinkSuggestion,
    ProfileValue,
    Relationship,
)
from webhooks.services import webhooks_emit

def _deleted(queryset) -> int:
    return queryset.delete()[1].get(queryset.model._meta.label, 0)


@retry_on_conflict
@transaction.atomic
def entity_erase(*, entity: Entity, actor: Actor = SYSTEM) -> dict[str, int]:
    # core.concurrency's lock order: no new message from the entity meanwhile (ingest),
    # no worker writing what it derived from its messages (their backlog rows, locked by
    # the log layer), no memory written about it (memory), then the entity itself.
    lock_workspaces("ingest", workspace_ids=[entity.workspace_id])
    interaction_ids = layers.interactions_of(entity)
    lock_workspaces("memory", workspace_ids=[entity.workspace_id])
    entity = Entity.objects.select_for_update().get(pk=entity.pk)
    workspace = entity.workspace
    with connection.cursor() as cursor:
        cursor.execute("SET LOCAL mnemo.erasure = 'on'")

    about = {  # audit targets that are the entity's own rows
        "entities.identity": list(Identity.objects.filter(entity=entity).values_list("pk", flat=True)),
        "entities.profilevalue": list(ProfileValue.objects.filter(entity=entity).values_list("pk", flat=True)),
        "entities.relationship": list(Relationship.objects.filter(Q(subject=entity) | Q(object=entity)).values_list("pk", flat=True)),
        "entities.entity": [entity.pk],
    }

    # Derived text that quotes the erased messages goes first.
    quoting = Q(evidence_id__in=interaction_ids) & ~Q(entity=entity)
    ProfileValue.objects.filter(quoting).update(quote="", evidence=None)
    Relationship.objects.filter(evidence_id__in=interaction_ids).update(quote="", evidence=None)
    ProfileValue.objects.filter(entity=entity).update(supersedes=None)
    evidence = EntityEvidence.objects.filter(Q(entity=entity) | Q(interaction_id__in=interaction_ids))
    receipt: dict[str, int] = {"evidence": evidence.count()}
    evidence.delete()
    receipt.update(layers.erase(entity, interaction_ids))
    receipt["profile_values"] = _deleted(ProfileValue.objects.filter(entity=entity))
    receipt["relationships"] = _deleted(Relationship.objects.filter(Q(subject=entity) | Q(object=entity)))
    receipt["link_suggestions"] = _deleted(LinkSuggestion.objects.filter(Q(entity=entity) | Q(identity__entity=entity)))
    receipt["identities"] = _deleted(Identity.objects.filter(entity=entity))
    receipt["decision_thoughts"] = _deleted(DecisionThought.objects.filter(decision__entity=entity))
    receipt["decisions"] = _deleted(DecisionRecord.objects.filter(entity=entity))
    receipt["merges"] = _deleted(EntityMerge.objects.filter(Q(source=entity) | Q(target=entity)))
    Entity.objects.filter(Q(merged_into=entity) | Q(supersedes=entity)).update(merged_into=None, supersedes=None)
    entity_pk = entity.pk
    receipt["entities"] = _deleted(Entity.objects.filter(pk=entity_pk))
    # Earlier audit events about the entity keep what happened, not what it said or who it was.
    erasure_id = uuid.uuid4().hex
    mentions = Q()
    for target_type, ids in about.items():
        if ids:
            mentions |= Q(target_type=target_type, target_id__in=[str(i) for i in ids])
    for key in ("entity", "source", "target", "subject", "object"):
        mentions |= Q(**{f"data__{key}": entity_pk})
    receipt["audit_events_scrubbed"] = AuditEvent.objects.filter(workspace=workspace).filter(mentions).update(
        target_id="", data={"erased": erasure_id}
    )
    audit_record(workspace=workspace, actor=actor, verb="entity.erase",
                 data={"erasure": erasure_id, "receipt": receipt})
    # The id and the counts only: nothing of what was erased leaves Mnemo.
    webhooks_emit(workspace_id=workspace.pk, event="entity.erased",
                  data={"entity_id": entity_pk, "erasure": erasure_id, "receipt": receipt})
    # The deleted and overwritten row versions stay in the table files until a VACUUM,
    # which cannot run in this transaction: the worker runs it once this commits. Robust: a
    # broker that is down must not turn a committed erasure into an error; Django logs the
    # failure, and autovacuum reaches the tables later.
    tables = tables_written_in_transaction()
    transaction.on_commit(lambda: vacuum_erased_tables.delay(workspace.pk, erasure_id, tables), robust=True)
    return receipt
