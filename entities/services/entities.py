from __future__ import annotations

from django.core.exceptions import ValidationError
from django.db import transaction
from django.utils import timezone

from core.errors import Conflict
from core.models import Workspace
from core.safe_text import refuse_secrets
from core.services import SYSTEM, Actor, audit_record, audit_record_many
from entities.kinds import all_kinds
from entities.models import Entity, EntityStatus


def _clean_aliases(aliases, name: str) -> list[str]:
    seen, result = {name.casefold()}, []
    for alias in aliases or []:
        alias = str(alias).strip()
        if alias and alias.casefold() not in seen:
            seen.add(alias.casefold())
            result.append(alias[:300])
    return result


@transaction.atomic
def entity_create(*, workspace: Workspace, kind: str, name: str, actor: Actor = SYSTEM, aliases=None,
                  description: str = "", status: str = EntityStatus.ACTIVE, confidence: float = 1.0) -> Entity:
    refuse_secrets(kind=kind, name=name, aliases=aliases or [], description=description)
    name = name.strip()
    if not name:
        raise ValidationError({"name": "An entity needs a name."})
    if kind not in all_kinds():
        raise ValidationError({"kind": f"Unknown kind {kind!r}; known: {', '.join(all_kinds())}."})
    if status not in EntityStatus.values:
        raise ValidationError({"status": f"Unknown status {status!r}."})
    if not 0 <= confidence <= 1:
        raise ValidationError({"confidence": "Confidence lies between 0 and 1."})
    entity = Entity.objects.create(workspace=workspace, kind=kind, name=name[:300], aliases=_clean_aliases(aliases, name),
                                   description=description, status=status, confidence=confidence)
    audit_record(workspace=workspace, actor=actor, verb="entity.create", target=entity, data={"kind": kind})
    return entity


@transaction.atomic
def entity_update(*, entity: Entity, actor: Actor = SYSTEM, name: str | None = None, aliases=None,
                  description: str | None = None) -> Entity:
    refuse_secrets(name=name or "", aliases=aliases or [], description=description or "")
    entity = Entity.objects.select_for_update(no_key=True).get(pk=entity.pk)
    changed = []
    if name is not None:
        name = name.strip()
        if not name:
            raise ValidationError({"name": "An entity needs a name."})
        if name != entity.name:
            entity.name, changed = name[:300], [*changed, "name"]
    if aliases is not None:
        cleaned = _clean_aliases(aliases, entity.name)
        if cleaned != entity.aliases:
            entity.aliases, changed = cleaned, [*changed, "aliases"]
    if description is not None and description != entity.description:
        entity.description, changed = description, [*changed, "description"]
    if changed:
        entity.updated_at = timezone.now()
        entity.save(update_fields=[*changed, "updated_at"])
        # The audit names the fields, not their content: erasure must be able to forget it.
        audit_record(workspace=entity.workspace, actor=actor, verb="entity.update", target=entity, data={"fields": changed})
    return entity


def entity_propose(*, workspace_id: int, kind: str, name: str, evidence_ids=(), quote: str = "",
                   description: str = "", confidence: float = 0.5, actor: Actor = SYSTEM,
                   rule: str = "entities.extract") -> tuple[Entity, bool]:
    """The entity a message (or a graduating memory) names: an existing one with that name
    or alias, else a new candidate for a person to decide. The interactions are kept as its
    evidence either way. Returns (entity, created)."""
    from entities.models import EntityEvidence

    kind = kind if kind in all_kinds() else "fact"
    name = name.strip()[:300]
    live = Entity.objects.filter(workspace_id=workspace_id, merged_into__isnull=True)
    entity = live.filter(name__iexact=name).first() or live.filter(aliases__contains=[name]).first()
    created = entity is None
    if created:
        entity = Entity.objects.create(workspace_id=workspace_id, kind=kind, name=name, description=description,
                                       status=EntityStatus.CANDIDATE, confidence=confidence)
        audit_record(workspace=entity.workspace, actor=actor, verb="entity.propose", target=entity,
                     data={"kind": kind, "interactions": list(evidence_ids)})
    for interaction_id in evidence_ids:
        EntityEvidence.objects.get_or_create(entity=entity, interaction_id=interaction_id,
                                             defaults={"quote": quote[:2000]})
    if created:
        from review.services import review_open

        review_open(kind="entity", target=entity, workspace_id=workspace_id, rule=rule)
    return entity, created


def _entity_decide(entity: Entity, *, actor: Actor, note: str, approve: bool) -> Entity:
    entity = Entity.objects.select_for_update(no_key=True).get(pk=entity.pk)
    if entity.status != EntityStatus.CANDIDATE or entity.merged_into_id:
        raise Conflict(f"Entity {entity.pk} is {entity.status}; only a candidate can be approved or rejected.")
    entity.status = EntityStatus.ACTIVE if approve else EntityStatus.INVALID
    entity.updated_at = timezone.now()
    entity.save(update_fields=["status", "updated_at"])
    audit_record(workspace=entity.workspace, actor=actor, verb="entity.approve" if approve else "entity.reject",
                 target=entity, data={"note": note})
    return entity


@transaction.atomic
def entity_approve(*, entity: Entity, actor: Actor, note: str = "") -> Entity:
    refuse_secrets(note=note)
    return _entity_decide(entity, actor=actor, note=note, approve=True)


@transaction.atomic
def entity_reject(*, entity: Entity, actor: Actor, note: str = "") -> Entity:
    refuse_secrets(note=note)
    return _entity_decide(entity, actor=actor, note=note, approve=False)


@transaction.atomic
def entities_decide(*, workspace: Workspace, entity_ids: list[int], actor: Actor, approve: bool,
                    note: str = "") -> list[int]:
    """Approve (or reject) many candidate entities at once (bulk review); returns the ids
    decided — the others were no candidates any more."""
    refuse_secrets(note=note)
    rows = list(Entity.objects.select_for_update(no_key=True).filter(
        workspace=workspace, pk__in=entity_ids, status=EntityStatus.CANDIDATE, merged_into__isnull=True)
        .only("id").order_by("id"))
    if not rows:
        return []
    Entity.objects.filter(pk__in=[e.pk for e in rows]).update(
        status=EntityStatus.ACTIVE if approve else EntityStatus.INVALID, updated_at=timezone.now())
    audit_record_many(workspace=workspace, actor=actor, verb="entity.approve" if approve else "entity.reject",
                      rows=[(e, {"note": note}) for e in rows])
    return [e.pk for e in rows]
