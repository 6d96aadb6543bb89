import json
from dataclasses import asdict
from typing import Literal

from django.http import HttpRequest, HttpResponse
from ninja import Query, Router, Status

from conversations.selectors import conversation_get
from core.auth import require
from core.errors import ApiError
from core.input_types import Id
from core.pagination import PageIn, page
from core.redaction import redact_answer
from core.safe_text import SafeStr
from core.services import Actor
from memory import selectors, services
from memory.models import Memory
from memory.schemas import (
    ActionIn,
    CensorCheckOut,
    CensorIn,
    CheckpointIn,
    CheckpointOut,
    ConsolidationPolicyIn,
    ConsolidationPolicyOut,
    ConsolidationRunIn,
    ConsolidationRunOut,
    FalsePositiveIn,
    GraduationOut,
    HistoryOut,
    MemoryDetailOut,
    MemoryFilter,
    MemoryIn,
    MemoryPage,
    MemoryPatch,
    OutcomeIn,
    ProcedureIn,
    ProcedureMatchOut,
    ReasonIn,
    RestoreIn,
    StoredOut,
    TaskIn,
    TrustedStateIn,
    TrustedStateOut,
    TrustPolicyIn,
    TrustPolicyOut,
    WorkingMemoryIn,
    WorkingMemoryOut,
)
from review.services import review_or

router = Router(tags=["memories"])


def _actor(request) -> Actor:
    return Actor.for_api_key(request.auth)


# --- rendering ------------------------------------------------------------------------------

def memory_out(memory: Memory) -> dict:
    return {
        "id": memory.pk, "type": memory.type, "certainty": memory.certainty, "status": memory.status,
        "text": memory.text, "confidence": memory.confidence, "importance": memory.importance,
        "entity_id": memory.subject_id, "attribute": memory.attribute, "value": memory.value,
        "polarity": memory.polarity, "source": memory.source, "rule": memory.rule, "model": memory.model,
        "prompt_version": memory.prompt_version, "supersedes_id": memory.supersedes_id,
        "conflicts_with_id": memory.conflicts_with_id, "duplicate_of_id": memory.duplicate_of_id,
        "graduated_to_id": memory.graduated_to_id, "consolidated_into_id": memory.consolidated_into_id,
        "conversation_id": memory.conversation_id,
        "occurred_at": memory.occurred_at, "event_first": memory.event_first, "event_last": memory.event_last,
        "learned_at": memory.created_at, "reinforcement_count": memory.reinforcement_count,
        "last_confirmed_at": memory.last_confirmed_at, "access_count": memory.access_count,
        "last_accessed_at": memory.last_accessed_at, "strength": memory.strength,
        "archived_reason": memory.archived_reason, "embedded": memory.embedding is not None,
        "updated_at": memory.updated_at, "learned_from": memory.metadata.get("learned_from"),
    }


def memory_detail(memory: Memory) -> dict:
    from memory.models import Censor, Procedure

    evidence = [{"interaction_id": e.interaction_id, "external_id": e.interaction.external_id, "quote": e.quote,
                 "start": e.start, "end": e.end, "occurred_at": e.interaction.occurred_at}
                for e in selectors.memory_evidence(memory=memory)]
    return {**memory_out(memory), "evidence": evidence,
            "procedure": Procedure.objects.filter(memory=memory).first(),
            "censor": Censor.objects.filter(memory=memory).first(),
            "consolidated_from": selectors.memory_consolidated_from(memory=memory)}


def _memory(request, memory_id: int) -> Memory:
    return selectors.memory_get(workspace=request.workspace, memory_id=memory_id)


def _entity_id(request, entity_id: int | None) -> int | None:
    if entity_id is None:
        return None
    from entities.selectors import entity_get

    return entity_get(workspace=request.workspace, entity_id=entity_id).pk


def _evidence(request, payload: MemoryIn) -> list[services.Evidence]:
    if payload.interaction is None:
        if payload.quote:
            raise ApiError("A quote needs the interaction it comes from.", status=422, code="validation_error",
                           details={"field": "quote"})
        return []
    from conversations.selectors import interaction_get

    interaction = interaction_get(workspace=request.workspace, interaction_id=payload.interaction)
    start = interaction.content.find(payload.quote) if payload.quote else -1
    if payload.quote and start < 0:
        raise ApiError("The quote is not in the interaction's content.", status=422, code="validation_error",
                       details={"field": "quote"})
    if start < 0:
        return [services.Evidence(interaction.pk)]
    return [services.Evidence(interaction.pk, payload.quote, start, start + len(payload.quote))]


# --- memories -------------------------------------------------------------------------------

@router.post("/memories", response={201: StoredOut, 200: StoredOut}, auth=require("write"),
             summary="Remember something")
def remember(request: HttpRequest, payload: MemoryIn):
    """The privacy filter (a secret is a 422, nothing stored), dedup (the same text or the
    same claim reinforces: 200 `reinforced`), contradiction (201 `conflict`: a candidate
    proposing to supersede) and the workspace's trust policy (active or candidate). A near
    duplicate in meaning is folded once the memory is embedded, in the background."""
    draft = services.Draft(
        type=payload.type, text=payload.text, certainty=payload.certainty, confidence=payload.confidence,
        importance=payload.importance, subject_id=_entity_id(request, payload.entity), attribute=payload.attribute,
        value=payload.value, polarity=payload.polarity, source="api", occurred_at=payload.occurred_at,
        evidence=_evidence(request, payload), metadata={"outcome": payload.outcome} if payload.outcome else {},
    )
    if payload.outcome and payload.type != "episodic":
        raise ApiError("`outcome` goes with episodic memories only.", status=422, code="validation_error",
                       details={"field": "outcome"})
    actor = _actor(request)
    if payload.type == "procedure":
        if payload.procedure is None:
            raise ApiError("A procedure needs `procedure` (name and steps).", status=422, code="validation_error",
                           details={"field": "procedure"})
        stored = services.procedure_create(workspace_id=request.workspace.pk, actor=actor, draft=draft,
                                           **payload.procedure.model_dump())
    elif payload.type == "censor":
        if payload.censor is None:
            raise ApiError("A censor needs `censor` (its trigger).", status=422, code="validation_error",
                           details={"field": "censor"})
        stored = services.censor_create(workspace_id=request.workspace.pk, actor=actor, draft=draft,
                                        **payload.censor.model_dump())
    else:
        if payload.procedure or payload.censor:
            raise ApiError("`procedure` and `censor` go with those types only.", status=422, code="validation_error")
        stored = services.memory_store(workspace_id=request.workspace.pk, draft=draft, actor=actor)
    status = 200 if stored.outcome == "reinforced" else 201
    return Status(status, {"outcome": stored.outcome, "memory": memory_detail(stored.memory)})


@router.get("/memories", response=MemoryPage, auth=require("read"), summary="List and search memories")
def list_memories(request: HttpRequest, filters: Query[MemoryFilter], paging: Query[PageIn]):
    options = filters.model_dump()
    redact = options.pop("redact")
    answer = page(selectors.memory_list(workspace=request.workspace, **options), paging, memory_out)
    return redact_answer(answer) if redact else answer


@router.get("/memories/{memory_id}", response=MemoryDetailOut, auth=require("read"), summary="One memory with its evidence")
def get_memory(request: HttpRequest, memory_id: Id, redact: bool = False):
    answer = memory_detail(_memory(request, memory_id))
    return redact_answer(MemoryDetailOut.model_validate(answer).model_dump()) if redact else answer


@router.get("/memories/{memory_id}/history", response=list[HistoryOut], auth=require("read"),
            summary="Every change to the memory and its versions, from the audit log")
def memory_history(request: HttpRequest, memory_id: Id):
    events = selectors.memory_history(memory=_memory(request, memory_id))
    return [{"id": e.pk, "at": e.at, "verb": e.verb, "actor": e.actor_label,
             "memory_id": int(e.target_id) if e.target_type == "memory.memory" else e.data.get("memory"),
             "data": e.data} for e in events]


@router.patch("/memories/{memory_id}", response=MemoryDetailOut, auth=require("write"),
              summary="Edit: a new version that supersedes this one")
def edit_memory(request: HttpRequest, memory_id: Id, payload: MemoryPatch):
    memory = _memory(request, memory_id)
    changes = payload.model_dump(exclude={"note", "entity"}, exclude_unset=True)
    if "entity" in payload.model_fields_set:
        changes["subject_id"] = _entity_id(request, payload.entity)
    new = services.memory_revise(memory=memory, actor=_actor(request), note=payload.note, **changes)
    return memory_detail(new)


@router.post("/memories/{memory_id}/invalidate", response=MemoryDetailOut, auth=require("write"),
             summary="Mark a memory wrong (kept, no longer served)")
def invalidate_memory(request: HttpRequest, memory_id: Id, payload: ReasonIn):
    return memory_detail(services.memory_invalidate(memory=_memory(request, memory_id), actor=_actor(request),
                                                    reason=payload.reason))


@router.post("/memories/{memory_id}/restore", response=MemoryDetailOut, auth=require("write"),
             summary="Bring back a memory decay archived (active again, full strength)")
def restore_memory(request: HttpRequest, memory_id: Id, payload: ReasonIn):
    return memory_detail(services.memory_unarchive(memory=_memory(request, memory_id), actor=_actor(request),
                                                   note=payload.reason))


@router.post("/memories/{memory_id}/promote", response=MemoryDetailOut, auth=require("write"),
             summary="Approve a candidate memory")
def promote_memory(request: HttpRequest, memory_id: Id, payload: ReasonIn):
    # An alias of POST /candidates/{id}/promote (seed 000): the decision goes through the queue.
    memory, actor = _memory(request, memory_id), _actor(request)
    review_or(workspace_id=request.workspace.pk, kinds=("memory", "conflict"), target_id=memory.pk, actor=actor,
              action="approve", note=payload.reason,
              fallback=lambda: services.memory_approve(memory=memory, actor=actor, note=payload.reason))
    return memory_detail(_memory(request, memory_id))


@router.post("/memories/{memory_id}/reject", response=MemoryDetailOut, auth=require("write"),
             summary="Reject a candidate memory")
def reject_memory(request: HttpRequest, memory_id: Id, payload: ReasonIn):
    memory, actor = _memory(request, memory_id), _actor(request)
    review_or(workspace_id=request.workspace.pk, kinds=("memory", "conflict"), target_id=memory.pk, actor=actor,
              action="reject", note=payload.reason,
              fallback=lambda: services.memory_reject(memory=memory, actor=actor, note=payload.reason))
    return memory_detail(_memory(request, memory_id))


@router.post("/memories/{memory_id}/graduate", response={201: GraduationOut}, auth=require("write"),
             summary="Graduate a fact to an entity candidate (returns the proposal)")
def graduate_memory(request: HttpRequest, memory_id: Id):
    graduation = services.memory_graduate(memory=_memory(request, memory_id), actor=_actor(request))
    return Status(201, graduation)


@router.get("/graduations", response=list[GraduationOut], auth=require("read"), summary="Graduation proposals")
def list_graduations(request: HttpRequest, paging: Query[PageIn],
                     status: Literal["pending", "graduated", "rejected"] | None = "pending"):
    rows = selectors.graduations(workspace=request.workspace, status=status or None).order_by("-created_at", "-id")
    return list(rows[paging.offset:paging.offset + paging.limit])


@router.post("/graduations/{graduation_id}/accept", response=GraduationOut, auth=require("write"),
             summary="Accept a graduation proposal")
def accept_graduation(request: HttpRequest, graduation_id: Id):
    graduation, actor = selectors.graduation_get(workspace=request.workspace, graduation_id=graduation_id), _actor(request)
    review_or(workspace_id=request.workspace.pk, kinds=("graduation",), target_id=graduation.pk, actor=actor,
              action="approve", fallback=lambda: services.graduation_accept(graduation=graduation, actor=actor))
    return selectors.graduation_get(workspace=request.workspace, graduation_id=graduation_id)


@router.post("/graduations/{graduation_id}/reject", response=GraduationOut, auth=require("write"),
             summary="Reject a graduation proposal")
def reject_graduation(request: HttpRequest, graduation_id: Id, payload: ReasonIn):
    graduation, actor = selectors.graduation_get(workspace=request.workspace, graduation_id=graduation_id), _actor(request)
    review_or(workspace_id=request.workspace.pk, kinds=("graduation",), target_id=graduation.pk, actor=actor,
              action="reject", note=payload.reason,
              fallback=lambda: services.graduation_reject(graduation=graduation, actor=actor, note=payload.reason))
    return selectors.graduation_get(workspace=request.workspace, graduation_id=graduation_id)


# --- procedures and censors -----------------------------------------------------------------

@router.post("/procedures", response={201: StoredOut, 200: StoredOut}, auth=require("write"),
             summary="Remember a procedure")
def create_procedure(request: HttpRequest, payload: ProcedureIn):
    stored = services.procedure_create(workspace_id=request.workspace.pk, actor=_actor(request), **payload.model_dump())
    return Status(200 if stored.outcome == "reinforced" else 201,
                  {"outcome": stored.outcome, "memory": memory_detail(stored.memory)})


@router.post("/procedures/match", response=list[ProcedureMatchOut], auth=require("read"),
             summary="Procedures for a task, core band first")
def match_procedures(request: HttpRequest, payload: TaskIn):
    found = services.procedures_match(workspace_id=request.workspace.pk, task=payload.task, limit=payload.limit)
    return [{"id": m["procedure"].pk, "name": m["procedure"].name, "score": m["score"],
             "similarity": m["similarity"], "lexical": m["lexical"],
             "effectiveness": m["procedure"].effectiveness, "activation_count": m["procedure"].activation_count,
             "bands": [
                 {"band": "core", "items": {"steps": m["procedure"].steps, "tools": m["procedure"].tools}},
                 {"band": "upper", "items": {"goals": m["procedure"].goals}},
                 {"band": "lower", "items": {"notes": m["procedure"].notes}},
             ]} for m in found]


@router.post("/procedures/{memory_id}/outcome", response=MemoryDetailOut, auth=require("write"),
             summary="Report how using a procedure went")
def procedure_outcome(request: HttpRequest, memory_id: Id, payload: OutcomeIn):
    procedure = selectors.procedure_get(workspace=request.workspace, memory_id=memory_id)
    procedure = services.procedure_outcome(procedure=procedure, outcome=payload.outcome, actor=_actor(request),
                                           note=payload.note)
    return memory_detail(procedure.memory)


@router.post("/censors", response={201: StoredOut, 200: StoredOut}, auth=require("write"), summary="Add a censor")
def create_censor(request: HttpRequest, payload: CensorIn):
    stored = services.censor_create(workspace_id=request.workspace.pk, actor=_actor(request), **payload.model_dump())
    return Status(200 if stored.outcome == "reinforced" else 201,
                  {"outcome": stored.outcome, "memory": memory_detail(stored.memory)})


@router.post("/censors/check", response=CensorCheckOut, auth=require("write"),
             summary="Check an intended action against the censors")
def check_censors(request: HttpRequest, payload: ActionIn):
    """Each match counts as an activation (hence `write`); a warning censor past its
    threshold escalates to block. `overridable` is false when an `absolute` censor matched:
    that block admits no override."""
    matches = services.censors_check(workspace_id=request.workspace.pk, action=payload.action, actor=_actor(request))
    return {**services.censors_verdict(matches), "matches": [{
        "id": m["censor"].pk, "trigger": m["censor"].trigger, "reason": m["censor"].reason,
        "action": m["censor"].action, "score": m["score"], "lexical": m["lexical"], "similarity": m["similarity"],
        "activation_count": m["censor"].activation_count, "escalated": m["censor"].escalated_at is not None,
    } for m in matches]}


@router.post("/censors/{memory_id}/false-positive", response=MemoryDetailOut, auth=require("write"),
             summary="Report a censor match that should not have fired")
def censor_false_positive(request: HttpRequest, memory_id: Id, payload: FalsePositiveIn):
    censor = selectors.censor_get(workspace=request.workspace, memory_id=memory_id)
    censor = services.censor_false_positive(censor=censor, actor=_actor(request), note=payload.note)
    return memory_detail(censor.memory)


# --- working memory and scratchpads ---------------------------------------------------------

def _focus(item) -> dict:
    return {"key": item.key, "content": item.content, "kind": item.kind, "attention": item.attention,
            "memory_id": item.ref_memory_id, "status": item.status, "loaded_at": item.loaded_at,
            "evicted_at": item.evicted_at}


def _session_out(session, evicted=None) -> dict:
    in_focus, recent = selectors.working_items(session=session)
    return {"session": session.key, "task": session.task, "capacity": session.capacity,
            "items": [_focus(i) for i in in_focus],
            "evicted": [_focus(i) for i in (evicted if evicted is not None else recent)],
            "updated_at": session.updated_at}


@router.get("/working-memory/{session}", response=WorkingMemoryOut, auth=require("read"),
            summary="A session's focus (and what was recently evicted)")
def get_working_memory(request: HttpRequest, session: str):
    return _session_out(selectors.working_session_get(workspace=request.workspace, key=session))


@router.put("/working-memory/{session}", response=WorkingMemoryOut, auth=require("write"),
            summary="Replace a session's focus; overflow is evicted to long-term memory")
def put_working_memory(request: HttpRequest, session: SafeStr, payload: WorkingMemoryIn):
    """`evicted` in the answer lists what this call evicted (stored as memories)."""
    items = [services.FocusItem(**i.model_dump()) for i in payload.items]
    row, evicted = services.working_memory_put(workspace=request.workspace, session_key=session, items=items,
                                               actor=_actor(request), capacity=payload.capacity, task=payload.task)
    return _session_out(row, evicted)


def pad_response(pad, status: int = 200) -> HttpResponse:
    # The state is spliced in as the text the agent sent: byte-for-byte what went in.
    body = (f'{{"task": {json.dumps(pad.task)}, "version": {pad.version}, '
            f'"updated_at": {json.dumps(pad.updated_at.isoformat())}, "state": {pad.state}}}')
    return HttpResponse(body, status=status, content_type="application/json")


@router.get("/scratchpads/{task}", auth=require("read"), summary="A task's exact state",
            openapi_extra={"responses": {200: {"description": "{task, version, updated_at, state}"}}})
def get_scratchpad(request: HttpRequest, task: str):
    return pad_response(selectors.scratchpad_get(workspace=request.workspace, task=task))


@router.put("/scratchpads/{task}", auth=require("write"), summary="Store a task's state (the body is the state)",
            openapi_extra={"requestBody": {"content": {"application/json": {"schema": {}}}, "required": True}})
def put_scratchpad(request: HttpRequest, task: SafeStr, expected_version: int | None = None):
    """The request body is the state, any JSON value, stored exactly as sent. With
    `?expected_version=N` a write based on an older version is a 409."""
    try:
        raw = request.body.decode("utf-8")
    except UnicodeDecodeError:
        raise ApiError("The state must be UTF-8 JSON.", status=422, code="validation_error") from None
    pad = services.scratchpad_put(workspace=request.workspace, task=task, raw_state=raw, actor=_actor(request),
                                  expected_version=expected_version)
    return pad_response(pad)


@router.post("/scratchpads/{task}/checkpoints", response={201: CheckpointOut}, auth=require("write"),
             summary="Checkpoint the current state")
def create_checkpoint(request: HttpRequest, task: SafeStr, payload: CheckpointIn):
    pad = selectors.scratchpad_get(workspace=request.workspace, task=task)
    return Status(201, services.scratchpad_checkpoint(scratchpad=pad, actor=_actor(request), label=payload.label))


@router.get("/scratchpads/{task}/checkpoints", response=list[CheckpointOut], auth=require("read"),
            summary="A task's checkpoints, newest first")
def list_checkpoints(request: HttpRequest, task: str, paging: Query[PageIn]):
    pad = selectors.scratchpad_get(workspace=request.workspace, task=task)
    return list(pad.checkpoints.order_by("-id")[paging.offset:paging.offset + paging.limit])


@router.post("/scratchpads/{task}/restore", auth=require("write"), summary="Go back to a checkpoint")
def restore_checkpoint(request: HttpRequest, task: SafeStr, payload: RestoreIn):
    if (payload.checkpoint_id is None) == (payload.label is None):
        raise ApiError("Give either checkpoint_id or label.", status=422, code="validation_error")
    pad = selectors.scratchpad_get(workspace=request.workspace, task=task)
    checkpoint = selectors.checkpoint_get(scratchpad=pad, checkpoint_id=payload.checkpoint_id, label=payload.label)
    return pad_response(services.scratchpad_restore(scratchpad=pad, checkpoint=checkpoint, actor=_actor(request)))


# --- trusted state and the trust policy -----------------------------------------------------

def _trusted(row) -> dict:
    return {"key": row.key, "value": row.value, "version": row.version, "deleted": row.deleted,
            "set_by": row.set_by_label, "note": row.note, "created_at": row.created_at}


@router.get("/trusted-state", response=list[TrustedStateOut], auth=require("read"),
            summary="The current trusted state (curated by people)")
def list_trusted_state(request: HttpRequest):
    return [_trusted(r) for r in selectors.trusted_state_current(workspace=request.workspace)]


@router.get("/trusted-state/{key}", response=list[TrustedStateOut], auth=require("read"),
            summary="Every version of one key, newest first")
def trusted_state_history(request: HttpRequest, key: str):
    return [_trusted(r) for r in selectors.trusted_state_history(workspace=request.workspace, key=key)]


@router.put("/trusted-state/{key}", response=TrustedStateOut, auth=require("admin"),
            summary="Set a trusted value (admin keys; people use the dashboard)")
def put_trusted_state(request: HttpRequest, key: SafeStr, payload: TrustedStateIn):
    return _trusted(services.trusted_state_set(workspace=request.workspace, key=key, value=payload.value,
                                               note=payload.note, actor=_actor(request)))


@router.delete("/trusted-state/{key}", response=TrustedStateOut, auth=require("admin"),
               summary="Remove a trusted key (a new version marks it removed)")
def delete_trusted_state(request: HttpRequest, key: SafeStr):
    return _trusted(services.trusted_state_set(workspace=request.workspace, key=key, value="", delete=True,
                                               actor=_actor(request)))


@router.get("/trust-policy", response=TrustPolicyOut, auth=require("read"), summary="What is promoted automatically")
def get_trust_policy(request: HttpRequest):
    return services.trust_policy_for(request.workspace.pk)


@router.put("/trust-policy", response=TrustPolicyOut, auth=require("admin"), summary="Change the trust policy")
def put_trust_policy(request: HttpRequest, payload: TrustPolicyIn):
    return services.trust_policy_set(workspace=request.workspace, actor=_actor(request), **payload.model_dump())


# --- consolidation (issue 19 part 1) --------------------------------------------------------

def _consolidation_policy(settings) -> dict:
    return {**asdict(settings), "source_types": list(settings.source_types)}


@router.get("/consolidation-policy", response=ConsolidationPolicyOut, auth=require("read"),
            summary="What consolidation groups into patterns")
def get_consolidation_policy(request: HttpRequest):
    return _consolidation_policy(services.consolidation_policy_for(request.workspace.pk))


@router.put("/consolidation-policy", response=ConsolidationPolicyOut, auth=require("admin"),
            summary="Change the consolidation policy")
def put_consolidation_policy(request: HttpRequest, payload: ConsolidationPolicyIn):
    return _consolidation_policy(services.consolidation_policy_set(workspace=request.workspace, actor=_actor(request),
                                                                   **payload.model_dump()))


@router.post("/consolidation/run", response=ConsolidationRunOut, auth=require("admin"),
             summary="Run consolidation now (one bounded run, audited)")
def run_consolidation(request: HttpRequest, payload: ConsolidationRunIn):
    if payload.conversation_id is not None:
        conversation_get(workspace=request.workspace, conversation_id=payload.conversation_id)  # 404 for others'
    # Audited with who asked (the scheduled and conversation-close runs are JobRuns). No LLM
    # call inside a request: patterns made here are worded extractively.
    counts = services.memories_consolidate(workspace_id=request.workspace.pk, conversation_id=payload.conversation_id,
                                           max_seeds=payload.max_seeds, use_llm=False)
    services.consolidation_run_record(workspace_id=request.workspace.pk, actor=_actor(request), counts=counts,
                                      trigger="api")
    return counts
