from django.http import HttpRequest
from ninja import Query, Router, Status
from pydantic import ValidationError as PydanticValidationError

from conversations import selectors, services
from conversations.schemas import (
    ContextOut,
    ConversationFilter,
    ConversationOut,
    ConversationPage,
    InteractionBatchIn,
    InteractionBatchOut,
    InteractionFilter,
    InteractionIn,
    InteractionOut,
    InteractionPage,
    InteractionResultOut,
    ReadOptions,
    SummaryOut,
)
from core.auth import require
from core.errors import ApiError
from core.input_types import Id
from core.pagination import PageIn, page
from core.redaction import redact_answer
from core.safe_text import SECRET_CODE
from core.services import Actor

router = Router(tags=["interactions"])


def _item(payload: InteractionIn) -> services.InteractionItem:
    return services.InteractionItem(**payload.model_dump())


def _item_error(index: int, raw, exc: PydanticValidationError) -> services.ItemResult:
    errors = [{"loc": list(err["loc"]), "msg": err["msg"], "type": err["type"]} for err in exc.errors()]
    fields = ", ".join(".".join(str(part) for part in err["loc"]) or "item" for err in errors)
    external_id = raw.get("external_id") if isinstance(raw, dict) and isinstance(raw.get("external_id"), str) else None
    secret = next((err for err in exc.errors() if err["type"] == SECRET_CODE), None)
    if secret is not None:
        field = ".".join(str(part) for part in secret["loc"]) + (f".{secret['ctx']['at']}" if secret["ctx"]["at"] else "")
        # The answer never repeats the refused value, not even as the item's external_id.
        if secret["loc"][:1] == ("external_id",):
            external_id = None
        return services.ItemResult(index=index, status="rejected", external_id=external_id, error={
            "code": SECRET_CODE, "message": f"{field} {secret['msg']}", "field": field, "rule": secret["ctx"]["rule"],
        })
    return services.ItemResult(index=index, status="rejected", external_id=external_id, error={
        "code": "validation_error", "message": f"invalid: {fields}", "field": fields, "errors": errors,
    })


@router.post("/interactions", response={201: InteractionResultOut, 200: InteractionResultOut},
             auth=require("write"), summary="Log one interaction")
def log_interaction(request: HttpRequest, payload: InteractionIn):
    """201 when created, 200 with `status: duplicate` and the original id when the
    `external_id` was logged before. A secret in the content is a 422 naming the rule;
    nothing is stored."""
    [result] = services.interactions_log(
        workspace=request.workspace, items=[_item(payload)], actor=Actor.for_api_key(request.auth), api_key=request.auth,
    )
    if result.status == "rejected":
        error = result.error
        raise ApiError(error["message"], status=422, code=error["code"],
                       details={k: v for k, v in error.items() if k in {"field", "rule"}})
    return Status(201 if result.status == "created" else 200, result)


@router.post("/interactions/batch", response=InteractionBatchOut, auth=require("write"),
             summary="Log up to 1,000 interactions")
def log_interactions(request: HttpRequest, payload: InteractionBatchIn):
    """One result per item, in order. Only bad items are rejected; the others are stored
    (all in one transaction). Retrying a batch returns `duplicate` for items with an
    `external_id` already logged."""
    items = []
    for index, raw in enumerate(payload.items):
        try:
            items.append(_item(InteractionIn.model_validate(raw)))
        except PydanticValidationError as exc:
            items.append(_item_error(index, raw, exc))
    results = services.interactions_log(
        workspace=request.workspace, items=items, actor=Actor.for_api_key(request.auth), api_key=request.auth,
    )
    counts = {status: sum(1 for r in results if r.status == status) for status in ("created", "duplicate", "rejected")}
    return {**counts, "results": results}


def _interaction_out(row) -> dict:
    return InteractionOut.from_orm(row).model_dump(mode="json")


@router.get("/interactions", response=InteractionPage, auth=require("read"), summary="List and search interactions")
def list_interactions(request: HttpRequest, filters: Query[InteractionFilter], paging: Query[PageIn]):
    """Newest first. `q` is full-text (web-search syntax: words, "phrases", -exclusions)."""
    qs = selectors.interaction_list(workspace=request.workspace, **filters.model_dump(exclude={"redact"}))
    answer = page(qs, paging, _interaction_out)
    return redact_answer(answer) if filters.redact else answer


@router.get("/interactions/{interaction_id}", response=InteractionOut, auth=require("read"), summary="One interaction")
def get_interaction(request: HttpRequest, interaction_id: Id, options: Query[ReadOptions]):
    row = selectors.interaction_get(workspace=request.workspace, interaction_id=interaction_id, channel=options.channel)
    answer = _interaction_out(row)
    return redact_answer(answer) if options.redact else answer


conversations_router = Router(tags=["conversations"])


def _conversation_out(row) -> dict:
    return ConversationOut.from_orm(row).model_dump(mode="json")


@conversations_router.get("/conversations", response=ConversationPage, auth=require("read"), summary="List conversations")
def list_conversations(request: HttpRequest, filters: Query[ConversationFilter], paging: Query[PageIn]):
    qs = selectors.conversation_list(workspace=request.workspace, **filters.model_dump(exclude={"redact"}))
    answer = page(qs, paging, _conversation_out)
    return redact_answer(answer) if filters.redact else answer


@conversations_router.get("/conversations/{conversation_id}", response=ConversationOut, auth=require("read"),
                          summary="One conversation with its current summary")
def get_conversation(request: HttpRequest, conversation_id: Id, options: Query[ReadOptions]):
    row = selectors.conversation_get(workspace=request.workspace, conversation_id=conversation_id, channel=options.channel)
    answer = _conversation_out(row)
    return redact_answer(answer) if options.redact else answer


@conversations_router.get("/conversations/{conversation_id}/summaries", response=list[SummaryOut],
                          auth=require("read"), summary="The summary chain, oldest first")
def list_summaries(request: HttpRequest, conversation_id: Id, options: Query[ReadOptions]):
    """Each summary supersedes the one before it; the last is current."""
    row = selectors.conversation_get(workspace=request.workspace, conversation_id=conversation_id, channel=options.channel)
    answer = [SummaryOut.from_orm(s).model_dump(mode="json") for s in selectors.summary_chain(conversation=row)]
    return redact_answer(answer) if options.redact else answer


@conversations_router.get("/conversations/{conversation_id}/context", response=ContextOut, auth=require("read"),
                          summary="Current summary + the last N interactions")
def get_context(request: HttpRequest, conversation_id: Id, options: Query[ReadOptions],
                recent: int = Query(10, ge=0, le=100)):
    """What a channel bot loads before replying: the last `recent` (0–100) interactions."""
    row = selectors.conversation_get(workspace=request.workspace, conversation_id=conversation_id, channel=options.channel)
    answer = ContextOut.from_orm({
        "conversation": row,
        "summary": row.current_summary,
        "recent": selectors.recent_interactions(conversation=row, limit=recent),
    }).model_dump(mode="json")
    return redact_answer(answer) if options.redact else answer
