from django.http import HttpRequest
from ninja import Query, Router

from core.auth import require
from core.input_types import Id
from core.pagination import PageIn, page
from core.services import Actor
from review import selectors, services
from review.models import Claim, ReviewItem
from review.schemas import (
    BulkIn,
    BulkOut,
    CandidateFilter,
    CandidateOut,
    CandidatePage,
    ClaimDecideIn,
    ClaimDecisionOut,
    ClaimFilter,
    ClaimOut,
    ClaimPage,
    PromoteIn,
    RejectIn,
    StatsOut,
)

router = Router(tags=["review"])


def _actor(request) -> Actor:
    return Actor.for_api_key(request.auth)


def candidate_out(item: ReviewItem) -> dict:
    span = [item.span_start, item.span_end] if item.span_start is not None and item.span_end is not None else None
    return {
        "id": item.pk, "kind": item.kind, "target_id": item.target_id, "type": item.item_type, "text": item.text,
        "proposal": item.proposal, "source_interaction_id": item.source_interaction_id, "span": span,
        "entity_id": item.entity_id, "rule": item.rule, "prompt_version": item.prompt_version,
        "confidence": item.confidence, "status": item.status, "decision": item.decision, "result": item.result,
        "decided_by": item.decided_label, "decided_at": item.decided_at, "note": item.note,
        "created_at": item.created_at, "proposed_by": proposer_out(item.proposer_key),
    }


def proposer_out(api_key) -> dict | None:
    """The agent (and key) that proposed an item or logged its message; never the secret."""
    if api_key is None:
        return None
    return {"key_id": api_key.pk, "key_name": api_key.name, "key_prefix": api_key.prefix,
            "agent_id": api_key.agent_id, "agent": api_key.agent.name if api_key.agent_id else None,
            "label": api_key.writer_label}


def claim_out(claim: Claim) -> dict:
    content = claim.source_interaction.content if claim.source_interaction_id else ""
    span = claim.span
    return {
        "id": claim.pk, "source_interaction_id": claim.source_interaction_id, "span": list(span) if span else None,
        "quote": content[span[0]:span[1]] if span else "", "label": claim.label, "status": claim.status,
        "decided_by": claim.decided_label, "decided_at": claim.decided_at, "note": claim.note,
        "created_at": claim.created_at, "facets": [candidate_out(item) for item in claim.items.all()],
    }


def _filters(f: CandidateFilter | ClaimFilter) -> selectors.ItemFilter:
    return selectors.ItemFilter(status=getattr(f, "status", None), kind=f.kind, item_type=f.type, rule=f.rule,
                                min_confidence=f.min_confidence, max_confidence=f.max_confidence, entity_id=f.entity,
                                source_interaction_id=f.source_interaction, older_than_hours=f.older_than_hours,
                                newer_than_hours=f.newer_than_hours)


@router.get("/candidates", response=CandidatePage, auth=require("read"),
            summary="The review queue: everything derived that waits for a person")
def list_candidates(request: HttpRequest, filters: Query[CandidateFilter], paging: Query[PageIn]):
    return page(selectors.review_items(workspace=request.workspace, filters=_filters(filters)), paging, candidate_out)


@router.post("/candidates/promote", response=BulkOut, auth=require("write"), summary="Approve many items at once")
def promote_many(request: HttpRequest, payload: BulkIn):
    result = services.review_decide_many(workspace_id=request.workspace.pk, item_ids=payload.ids, actor=_actor(request),
                                         action="approve", note=payload.note)
    return {"decided": [candidate_out(i) for i in result.decided], "skipped": result.skipped}


@router.post("/candidates/reject", response=BulkOut, auth=require("write"), summary="Reject many items at once")
def reject_many(request: HttpRequest, payload: BulkIn):
    result = services.review_decide_many(workspace_id=request.workspace.pk, item_ids=payload.ids, actor=_actor(request),
                                         action="reject", note=payload.note)
    return {"decided": [candidate_out(i) for i in result.decided], "skipped": result.skipped}


@router.get("/candidates/stats", response=StatsOut, auth=require("read"),
            summary="Reviewer statistics from the audit log: precision per rule and prompt version, queue age")
def candidate_stats(request: HttpRequest, days: int = Query(30, ge=1, le=365)):
    stats = selectors.review_stats(workspace=request.workspace, days=days)
    return {
        "days": stats.days, "pending": stats.pending, "oldest_hours": stats.oldest_hours,
        "median_age_hours": stats.median_age_hours, "by_kind": dict(stats.by_kind),
        "auto_approved": stats.auto_approved, "human_approved": stats.human_approved, "rejected": stats.rejected,
        "auto_share": stats.auto_share,
        "rules": [{"rule": r.rule, "prompt_version": r.prompt_version, "decisions": r.decisions,
                   "accepted": r.accepted, "rejected": r.rejected, "edited": r.edited, "precision": r.precision,
                   "low": r.low, "series": r.series} for r in stats.rules],
    }


@router.get("/candidates/{item_id}", response=CandidateOut, auth=require("read"), summary="One review item")
def get_candidate(request: HttpRequest, item_id: Id):
    return candidate_out(selectors.review_item_get(workspace=request.workspace, item_id=item_id))


@router.post("/candidates/{item_id}/promote", response=CandidateOut, auth=require("write"),
             summary="Approve (optionally edit first, or merge into an existing item)")
def promote_candidate(request: HttpRequest, item_id: Id, payload: PromoteIn):
    item = selectors.review_item_get(workspace=request.workspace, item_id=item_id)
    action = "merge" if payload.merge_into else "approve"
    return candidate_out(services.review_decide(item=item, actor=_actor(request), action=action, note=payload.note,
                                                changes=payload.changes, merge_into=payload.merge_into))


@router.post("/candidates/{item_id}/reject", response=CandidateOut, auth=require("write"), summary="Reject")
def reject_candidate(request: HttpRequest, item_id: Id, payload: RejectIn):
    item = selectors.review_item_get(workspace=request.workspace, item_id=item_id)
    return candidate_out(services.review_decide(item=item, actor=_actor(request), action="reject", note=payload.note))


@router.post("/candidates/{item_id}/keep-both", response=CandidateOut, auth=require("write"),
             summary="A contradiction where both were true at different times: set validity periods")
def keep_both(request: HttpRequest, item_id: Id, payload: RejectIn):
    item = selectors.review_item_get(workspace=request.workspace, item_id=item_id)
    return candidate_out(services.review_decide(item=item, actor=_actor(request), action="both", note=payload.note))


# --- claims: what derivation found about one span of one message, decided once ---------------

@router.get("/claims", response=ClaimPage, auth=require("read"),
            summary="The review queue by claim: each with its facets (memory, entity, relationship, …)")
def list_claims(request: HttpRequest, filters: Query[ClaimFilter], paging: Query[PageIn]):
    facet_filters = _filters(filters)
    facet_filters.status = None
    return page(selectors.claims(workspace=request.workspace, status=filters.status, filters=facet_filters), paging,
                claim_out)


@router.get("/claims/{claim_id}", response=ClaimOut, auth=require("read"), summary="One claim with its facets")
def get_claim(request: HttpRequest, claim_id: Id):
    return claim_out(selectors.claim_get(workspace=request.workspace, claim_id=claim_id))


def _decide_claim(request, claim_id: int, payload: ClaimDecideIn, approve: bool) -> dict:
    claim = selectors.claim_get(workspace=request.workspace, claim_id=claim_id)
    result = services.claim_decide(claim=claim, actor=_actor(request), approve=approve, note=payload.note,
                                   exclude=payload.exclude, edits=payload.edits)
    return {"claim": claim_out(selectors.claim_get(workspace=request.workspace, claim_id=claim_id)),
            "decided": [candidate_out(item) for item in result.decided], "gone": result.gone}


@router.post("/claims/{claim_id}/approve", response=ClaimDecisionOut, auth=require("write"),
             summary="Approve every facet of the claim; excluded facets are rejected, edited ones edited first")
def approve_claim(request: HttpRequest, claim_id: Id, payload: ClaimDecideIn):
    return _decide_claim(request, claim_id, payload, approve=True)


@router.post("/claims/{claim_id}/reject", response=ClaimDecisionOut, auth=require("write"),
             summary="Reject every facet of the claim; excluded facets are approved instead")
def reject_claim(request: HttpRequest, claim_id: Id, payload: ClaimDecideIn):
    return _decide_claim(request, claim_id, payload, approve=False)
