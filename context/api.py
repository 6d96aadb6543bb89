from uuid import UUID

from django.http import HttpRequest, JsonResponse
from ninja import Router
from ninja.responses import NinjaJSONEncoder

from context import selectors, services
from context.schemas import ContextIn, PackOut, RecallIn, RecallOut
from conversations.selectors import conversation_get
from core.auth import require
from core.redaction import redact_answer
from core.services import Actor
from entities.selectors import entity_get

router = Router(tags=["context"])


def _scope(request, payload: RecallIn) -> dict:
    """Ids in the request must belong to the key's workspace (404 otherwise)."""
    if payload.entity is not None:
        entity_get(workspace=request.workspace, entity_id=payload.entity)
    if payload.conversation is not None:
        conversation_get(workspace=request.workspace, conversation_id=payload.conversation)
    if payload.agent is not None:
        entity_get(workspace=request.workspace, entity_id=payload.agent)
    return {"query": payload.query, "workspace_id": request.workspace.pk,
            "types": tuple(payload.types) if payload.types else None, "entity_id": payload.entity,
            "conversation_id": payload.conversation, "channel": payload.channel, "agent_id": payload.agent,
            "metadata": payload.metadata, "limit": payload.limit,
            "min_confidence": payload.min_confidence, "include_candidates": payload.include_candidates,
            "include_archived": payload.include_archived, "recency_weight": payload.recency_weight,
            "as_of": payload.as_of}


@router.post("/recall", response=RecallOut, auth=require("read"), summary="Search every kind of memory")
def recall(request: HttpRequest, payload: RecallIn):
    """Hybrid retrieval (embedding + full text) over interactions, memories and summaries,
    scored with a per-dimension breakdown; each result names its source interactions."""
    recalled = services.recall_answer(services.RecallRequest(**_scope(request, payload)))
    answer = {"results": [i.as_dict() for i in recalled.items],
              "followed": selectors.followed(workspace_id=request.workspace.pk, entity_id=recalled.followed)}
    return redact_answer(RecallOut.model_validate(answer).model_dump()) if payload.redact else answer


def _pack_out(log) -> dict:
    return {"pack_id": log.pk, "query": log.query, "as_of": log.as_of, "created_at": log.created_at,
            "budget_tokens": log.budget_tokens, "tokens_used": log.tokens_used,
            "sections": [{"dropped_unlisted": 0, **section} for section in log.sections],  # older logs lack it
            "warnings": log.warnings, "text": log.text,
            "followed": selectors.followed(workspace_id=log.workspace_id, entity_id=log.followed_entity_id)}


def _pack_response(answer: dict, redact: bool):
    """A pack as PackOut describes it. Built here from the pack log, so it is sent as it is:
    validating its hundreds of nested items against the schema again took ~9 ms a request
    (the tests check the shape against the schema)."""
    if redact:
        return redact_answer(PackOut.model_validate(answer).model_dump())
    return JsonResponse(answer, encoder=NinjaJSONEncoder)


@router.post("/context", response=PackOut, auth=require("read"), summary="A token-budgeted context pack")
def context(request: HttpRequest, payload: ContextIn):
    """Sections in trust order (trusted state, identity, preference, entities, retrieval)
    within `budget_tokens`; the token count of `text` never exceeds it. Logged: see
    GET /packs/{pack_id}."""
    scope = _scope(request, payload)
    pack = services.context_pack(services.PackRequest(**scope, budget_tokens=payload.budget_tokens,
                                                      budgets=payload.budgets, session=payload.session),
                                 actor=Actor.for_api_key(request.auth))
    return _pack_response(_pack_out(pack), payload.redact)


@router.get("/packs/{pack_id}", response=PackOut, auth=require("read"),
            summary="A served pack: what was included, what was dropped and why")
def get_pack(request: HttpRequest, pack_id: UUID):
    return _pack_response(_pack_out(selectors.pack_get(workspace=request.workspace, pack_id=pack_id)), False)
