"""The review kind the gaps layer owns (review.registry): a newly detected gap is confirmed
(a person says the need is real) or dismissed (won't fix, keeps counting silently) in the
queue. Handlers change gap rows through gaps.services only."""

from __future__ import annotations

from core.errors import NotFound
from core.services import Actor
from gaps import rules, selectors, services
from gaps.models import CapabilityGap, GapEvidence, GapRelevance, GapStatus
from review.registry import Description, Kind, waiting


def _load(workspace_id: int, target_id: int) -> CapabilityGap:
    return waiting(CapabilityGap.objects.filter(workspace_id=workspace_id), target_id, "gap",
                   pending="open", state=lambda g: "confirmed" if g.confirmed else (
                       "open" if g.status in (GapStatus.DETECTED, GapStatus.TODO_CREATED) else g.status))


def _describe(gap: CapabilityGap) -> Description:
    evidence = (GapEvidence.objects.filter(gap=gap, relevance=GapRelevance.PRIMARY, interaction__isnull=False)
                .order_by("occurred_at", "pk").first())
    span = (evidence.start, evidence.end) if evidence and evidence.start is not None and evidence.end is not None else None
    return Description(
        text=f"Capability gap: {gap.description}", item_type=gap.category,
        source_interaction_id=evidence.interaction_id if evidence else None, span=span, entity_id=gap.entity_id,
        rule=gap.rule, confidence=0.6,
        proposal={"description": gap.description, "category": gap.category, "why": evidence.reason if evidence else ""},
    )


def _approve(gap: CapabilityGap, actor: Actor, note: str, changes: dict) -> dict:
    if changes.get("description"):
        services.gap_rename(gap=gap, description=changes["description"], category=None, actor=actor)
    services.gap_transition(gap=gap, action="confirm", actor=actor, reason=note)
    return {"gap": gap.pk}


def _reject(gap: CapabilityGap, actor: Actor, note: str) -> dict:
    services.gap_transition(gap=gap, action="dismiss", actor=actor, reason=note or "dismissed in the review queue")
    return {"gap": gap.pk}


def _merge(gap: CapabilityGap, into_id: int, actor: Actor, note: str) -> dict:
    into = CapabilityGap.objects.filter(workspace_id=gap.workspace_id, pk=into_id).first()
    if into is None:
        raise NotFound("No such gap to merge into in this workspace.")
    kept = services.gap_merge(source=gap, target=into, actor=actor)
    return {"gap": gap.pk, "into": kept.pk}


def _similar(gap: CapabilityGap, limit: int) -> list[dict]:
    """Gaps that may be the same need in other words (gaps.selectors.gaps_similar)."""
    return [{"id": other.pk, "what": "gap", "text": other.description, "status": other.status, "type": other.category,
             "score": round(1 - distance, 3), "basis": "meaning"} for other, distance in selectors.gaps_similar(gap=gap, limit=limit)]


# What the rules behind a gap look for (review.why): the detection rules' own sentences,
# plus the ways a gap is reported without them.
GAP_RULES = {
    **rules.RULES,
    "gap.reported": "An agent reported that it could not do what was asked.",
    "gap.failed_decision": "A decision's outcome was reviewed as a failure.",
    "gap.failed_procedure": "A procedure failed when it was followed.",
}

KINDS = (
    Kind(name=services.REVIEW_KIND, label="Capability gap", load=_load, describe=_describe, approve=_approve,
         reject=_reject, edit_fields={"description": "what was asked for that the agents cannot do"},
         merge=_merge, similar=_similar,
         merge_effect=("This gap goes: its evidence moves to the existing gap, each message counted once, and the "
                       "existing gap becomes a TODO if the sum reaches the workspace's threshold."), approve_label="Confirm", reject_label="Won't fix",
         alive=lambda ids: set(CapabilityGap.objects.filter(pk__in=ids).values_list("pk", flat=True)),
         rules=GAP_RULES, page=lambda item: ("gap", item.target_id)),
)
