"""Decision memory (seed 003): record a decision on a `decision` entity, append the
deliberation, review the outcome once, find similar past decisions, and calibrate stated
confidence against outcomes. Writes are atomic and audited; reads are plain selectors."""

from __future__ import annotations

from django.core.exceptions import ValidationError
from django.db import transaction
from django.db.models import ExpressionWrapper, FloatField, QuerySet, Value
from django.utils import timezone
from pgvector.django import CosineDistance

from core.concurrency import retry_on_conflict
from core.errors import Conflict
from core.models import Workspace
from core.providers import get_embedder
from core.safe_text import refuse_secrets
from core.services import SYSTEM, Actor, audit_record
from entities.calibration import calibration
from entities.models import DecisionOutcome, DecisionRecord, DecisionThought
from entities.services import entity_create

SIMILAR_LIMIT = 5
PENDING = "pending"


# --- writes -------------------------------------------------------------------------------------

def decision_record(*, workspace: Workspace, description: str, confidence: float, options: list[str] | None = None,
                    chosen: str = "", actor: Actor = SYSTEM) -> DecisionRecord:
    """A new decision entity and its record. The description's embedding is computed here,
    inside the request, because it is also the query for the similar-decisions answer."""
    refuse_secrets(description=description, options=options or [], chosen=chosen)
    description = description.strip()
    if not description:
        raise ValidationError({"description": "A decision needs a description."})
    if not 0 <= confidence <= 1:
        raise ValidationError({"confidence": "Confidence lies between 0 and 1."})
    options = [option.strip() for option in options or [] if option.strip()]
    # Embed before opening the transaction: the model's first call takes seconds, and no
    # row needs to be locked while it runs.
    embedding = get_embedder().embed([description])[0]
    return _decision_save(workspace=workspace, description=description, confidence=confidence, options=options,
                          chosen=chosen.strip(), embedding=embedding, actor=actor)


@retry_on_conflict
@transaction.atomic
def _decision_save(*, workspace: Workspace, description: str, confidence: float, options: list[str], chosen: str,
                   embedding: list[float], actor: Actor) -> DecisionRecord:
    entity = entity_create(workspace=workspace, kind="decision", name=" ".join(description.split())[:300],
                           description=description, actor=actor)
    record = DecisionRecord.objects.create(entity=entity, workspace=workspace, description=description, options=options,
                                           chosen=chosen, stated_confidence=confidence, embedding=embedding)
    # The audit holds no text from the decision: erasure must be able to forget it.
    audit_record(workspace=workspace, actor=actor, verb="decision.record", target=record,
                 data={"options": len(options), "confidence": confidence})
    return record


@transaction.atomic
def decision_add_thought(*, decision: DecisionRecord, text: str, actor: Actor = SYSTEM) -> DecisionThought:
    """Thoughts are append-only: there is no service to edit or delete one."""
    refuse_secrets(text=text)
    text = text.strip()
    if not text:
        raise ValidationError({"text": "A thought needs text."})
    thought = DecisionThought.objects.create(decision=decision, text=text)
    audit_record(workspace=decision.workspace, actor=actor, verb="decision.thought", target=decision,
                 data={"thought_id": thought.pk})
    return thought


@transaction.atomic
def decision_choose(*, decision: DecisionRecord, chosen: str, confidence: float | None = None,
                    actor: Actor = SYSTEM) -> DecisionRecord:
    """Record the choice made after deliberation (seed 003's update_decision), and the
    confidence in it when that changed. Until the outcome is reviewed only: after it, the
    choice and confidence are what calibration compares the outcome with (409)."""
    refuse_secrets(chosen=chosen)
    chosen = chosen.strip()
    if not chosen:
        raise ValidationError({"chosen": "Say which option was chosen."})
    if confidence is not None and not 0 <= confidence <= 1:
        raise ValidationError({"confidence": "Confidence lies between 0 and 1."})
    decision = DecisionRecord.objects.select_for_update(no_key=True).get(pk=decision.pk)
    if decision.outcome:
        raise Conflict("This decision's outcome is already reviewed; its choice can no longer change.",
                       details={"outcome": decision.outcome, "outcome_at": decision.outcome_at.isoformat()})
    if decision.options and chosen not in decision.options:
        raise ValidationError({"chosen": "The choice must be one of the decision's options."})
    changed = [name for name, new, old in (("chosen", chosen, decision.chosen),
                                           ("confidence", confidence, decision.stated_confidence))
               if new is not None and new != old]
    decision.chosen = chosen
    if confidence is not None:
        decision.stated_confidence = confidence
    decision.save(update_fields=["chosen", "stated_confidence"])
    # The audit holds no text from the decision: erasure must be able to forget it.
    audit_record(workspace=decision.workspace, actor=actor, verb="decision.choose", target=decision,
                 data={"changed": changed, "confidence": decision.stated_confidence})
    return decision


@transaction.atomic
def decision_record_outcome(*, decision: DecisionRecord, outcome: str, result: str = "",
                            actor: Actor = SYSTEM) -> DecisionRecord:
    """Review how a decision turned out, once: a second review would rewrite the history
    that calibration is computed from."""
    refuse_secrets(result=result)
    if outcome not in DecisionOutcome.values:
        expected = ", ".join(DecisionOutcome.values)
        raise ValidationError({"outcome": f"Unknown outcome {outcome!r}; expected one of {expected}."})
    decision = DecisionRecord.objects.select_for_update(no_key=True).get(pk=decision.pk)
    if decision.outcome:
        raise Conflict(f"This decision's outcome is already recorded as {decision.outcome!r}.",
                       details={"outcome": decision.outcome, "outcome_at": decision.outcome_at.isoformat()})
    decision.outcome, decision.outcome_result, decision.outcome_at = outcome, result.strip(), timezone.now()
    decision.save(update_fields=["outcome", "outcome_result", "outcome_at"])
    audit_record(workspace=decision.workspace, actor=actor, verb="decision.outcome", target=decision,
                 data={"outcome": outcome})
    return decision


# --- reads ----------------------------------------------------------------------------------------

def decision_list(*, workspace: Workspace, outcome: str | None = None) -> QuerySet[DecisionRecord]:
    """Newest first; `outcome="pending"` means not reviewed yet."""
    qs = DecisionRecord.objects.filter(workspace=workspace)
    if outcome == PENDING:
        qs = qs.filter(outcome="")
    elif outcome:
        qs = qs.filter(outcome=outcome)
    return qs.order_by("-created_at", "-pk")


def decision_get(*, workspace: Workspace, decision_id: int) -> DecisionRecord:
    return DecisionRecord.objects.get(workspace=workspace, pk=decision_id)


def decision_similar(*, decision: DecisionRecord, limit: int = SIMILAR_LIMIT) -> list[DecisionRecord]:
    """The workspace's other decisions nearest in meaning, reviewed or not, each annotated
    with `similarity` (1 - cosine distance), most similar first.

    Ordered by the similarity expression rather than the bare distance operator, so the
    search is exact instead of going through the HNSW index, which applies the workspace
    filter only after picking its candidates and could answer fewer than `limit`."""
    similarity = ExpressionWrapper(Value(1.0) - CosineDistance("embedding", decision.embedding),
                                   output_field=FloatField())
    return list(DecisionRecord.objects.filter(workspace_id=decision.workspace_id).exclude(pk=decision.pk)
                .annotate(similarity=similarity).order_by("-similarity", "-created_at")[:limit])


def decision_calibration(*, workspace: Workspace, bins: int = 5) -> dict:
    """Stated confidence against outcomes, over the workspace's reviewed decisions."""
    pairs = (DecisionRecord.objects.filter(workspace=workspace).exclude(outcome="")
             .values_list("stated_confidence", "outcome"))
    return calibration(list(pairs), bins=bins)
