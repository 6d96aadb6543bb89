"""The MCP tools and resources: each one is a REST operation's own function, called
in-process with the /mcp request (its key, workspace and actor), so the services and
selectors it calls, its 404s for another workspace's ids, its redaction and its answer's
shape are the REST API's, not a copy of them. Arguments are validated with the REST
operation's input schema (its `SafeStr` fields refuse secrets as the REST API does), and
each tool needs the scope its REST operation needs."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from typing import Any
from uuid import UUID

from django.http import HttpRequest, HttpResponseBase
from ninja import Schema, Status
from ninja.responses import NinjaJSONEncoder
from pydantic import ConfigDict, Field, JsonValue, TypeAdapter

from context import api as context_api
from context.schemas import ContextIn, FollowedOut, RecallIn, RecallOut, WarningOut
from conversations import api as conversations_api
from conversations.schemas import ContextOut, InteractionIn, InteractionResultOut, ReadOptions
from core.errors import NotFound
from core.input_types import BIGINT_MAX, BigInt, Id
from core.pagination import PageIn, page
from core.safe_text import SafeStr
from core.services import Actor
from entities import api as entities_api
from entities import api_decisions
from entities import selectors as entity_selectors
from entities.schemas import EntityDetailOut, EntityFilter, EntityOut
from gaps import api as gaps_api
from memory import api as memory_api
from memory import services as memory_services
from memory.schemas import (
    ActionIn,
    CensorCheckOut,
    MemoryIn,
    ProcedureMatchOut,
    StoredOut,
    TaskIn,
    WorkingMemoryIn,
    WorkingMemoryOut,
)


@dataclass(frozen=True)
class ToolSpec:
    name: str
    description: str
    scope: str  # the scope of the REST operation it calls
    args: type[Schema]  # validates the arguments; its JSON schema is the tool's input schema
    run: Callable[[HttpRequest, Any], Any]  # (the /mcp request, validated args) -> the REST answer
    out: Any  # the REST operation's response schema (None: the operation renders its answer itself)

    def answer(self, request: HttpRequest, args: Any) -> Any:
        return rendered(self.out, self.run(request, args))


def rendered(out: Any, result: Any) -> Any:
    """A REST operation's result as the JSON its answer carries, through `out`: validated and
    dumped by the response schema, encoded by ninja's encoder (timestamps as REST writes them)."""
    if isinstance(result, HttpResponseBase):  # rendered by the operation (a context pack, a scratchpad)
        result = json.loads(result.content)
    if isinstance(result, Status):
        result = result.value
    if out is None:
        return result
    adapter = _adapter(out)
    return json.loads(json.dumps(adapter.dump_python(adapter.validate_python(result)), cls=NinjaJSONEncoder))


@cache
def _adapter(out: Any) -> TypeAdapter:
    return TypeAdapter(out)


def _payload(args: Schema, schema: type[Schema], *path_fields: str) -> Schema:
    """The REST body schema out of arguments that also carry the operation's path fields."""
    return schema.model_validate(args.model_dump(exclude=set(path_fields)))


# --- argument schemas for operations that take more than a body -----------------------------

class EntitySearchArgs(EntityFilter, PageIn):
    model_config = ConfigDict(extra="forbid")


class EntityPage(Schema):
    count: int
    items: list[EntityOut]


class EntityArgs(Schema):
    model_config = ConfigDict(extra="forbid")
    entity_id: Id = Field(description="The entity's id (from recall, search_entities or log_interaction)")


class DecisionOutcomeArgs(api_decisions.DecisionOutcomeIn):
    decision_id: Id = Field(description="The id record_decision answered")


class SessionArgs(Schema):
    model_config = ConfigDict(extra="forbid")
    session: str = Field(min_length=1, max_length=200, description="The agent session's key")


class WorkingMemoryArgs(WorkingMemoryIn):
    session: SafeStr = Field(min_length=1, max_length=200, description="The agent session's key")


class ScratchpadArgs(Schema):
    model_config = ConfigDict(extra="forbid")
    task: str = Field(min_length=1, max_length=200, description="The task's key")


class ScratchpadPutArgs(Schema):
    model_config = ConfigDict(extra="forbid")
    task: SafeStr = Field(min_length=1, max_length=200, description="The task's key")
    state: JsonValue = Field(description="The task's whole state: any JSON value, stored as given")
    expected_version: BigInt | None = Field(None, description="Refuse the write (conflict) unless the scratchpad is "
                                                                "at this version: no overwriting a newer state")


class PackTextOut(Schema):
    pack_id: UUID
    text: str = Field(description="The pack rendered for a prompt, within the budget")
    budget_tokens: int
    tokens_used: int
    warnings: list[WarningOut]
    followed: FollowedOut | None = Field(None, description="the entity the pack followed although the query "
                                                           "named nobody (as /context says it)")


# --- what each tool runs ---------------------------------------------------------------------

def _search_entities(request: HttpRequest, args: EntitySearchArgs) -> dict:
    # GET /entities pages with ninja's @paginate, which only a routed request drives; the
    # same selector, paged by the helper the other lists use.
    filters = args.model_dump(include=set(EntityFilter.model_fields))
    rows = entity_selectors.entity_list(workspace=request.workspace, **filters)
    return page(rows, PageIn(limit=args.limit, offset=args.offset), EntityOut.from_orm)


def _put_scratchpad(request: HttpRequest, args: ScratchpadPutArgs):
    # The REST operation stores its raw body; here the state arrives as parsed JSON.
    pad = memory_services.scratchpad_put(workspace=request.workspace, task=args.task,
                                         raw_state=json.dumps(args.state, ensure_ascii=False),
                                         actor=Actor.for_api_key(request.auth), expected_version=args.expected_version)
    return memory_api.pad_response(pad)


TOOLS: tuple[ToolSpec, ...] = (
    ToolSpec(
        "log_interaction",
        "Log one message this agent heard or said (Mnemo's immutable log; memories, entities and summaries "
        "are derived from it in the background). Give the channel, the sender's handle there and the content; "
        "an external_id makes retries safe (a known one answers `duplicate`). A secret in any field is "
        "refused and nothing is stored; <private>…</private> blocks are removed before storing.",
        "write", InteractionIn, conversations_api.log_interaction, InteractionResultOut,
    ),
    ToolSpec(
        "remember",
        "Remember something explicitly: a fact, preference, identity, episodic memory, procedure or censor. "
        "The same text or claim reinforces the existing memory (`reinforced`); a contradiction becomes a "
        "candidate proposing to supersede it (`conflict`). The workspace's trust policy decides whether it is "
        "active at once or waits for review.",
        "write", MemoryIn, memory_api.remember, StoredOut,
    ),
    ToolSpec(
        "recall",
        "Search everything Mnemo knows for a query: memories of every type, raw interactions, conversation "
        "summaries, entities and relationships, ranked by meaning and words with a score breakdown; each "
        "result names the interactions it came from. Filter by types, entity, conversation or channel. "
        "`followed` names the person the results were ranked for when the query named nobody but referred "
        "to someone (\"the person who…\", \"she\").",
        "read", RecallIn, context_api.recall, RecallOut,
    ),
    ToolSpec(
        "get_context_pack",
        "Get a token-budgeted context pack for a query, ready to paste into a prompt: trusted state, what is "
        "known about the people and things involved, and the most relevant memories and turns, in trust "
        "order within budget_tokens. Answers the pack's text and its pack_id (the served pack is logged and "
        "can be inspected), warnings from censors or open capability gaps near the query, and `followed` "
        "(as recall's).",
        "read", ContextIn, context_api.context, PackTextOut,
    ),
    ToolSpec(
        "search_entities",
        "Find entities (people, agents, organisations, projects, components, decisions, facts, …) by name or "
        "alias, tolerant of typos; filter by kind and status. Paged with limit and offset.",
        "read", EntitySearchArgs, _search_entities, EntityPage,
    ),
    ToolSpec(
        "get_entity",
        "One entity with its channel identities and its current profile values.",
        "read", EntityArgs, lambda request, args: entities_api.get_entity(request, args.entity_id), EntityDetailOut,
    ),
    ToolSpec(
        "record_decision",
        "Record a decision this agent is making: what is decided, the options, the one chosen and how sure "
        "the agent is (confidence 0–1). Answers the decision and how the most similar earlier decisions "
        "turned out; report the outcome later with record_decision_outcome.",
        "write", api_decisions.DecisionIn, api_decisions.record_decision, api_decisions.DecisionRecordedOut,
    ),
    ToolSpec(
        "record_decision_outcome",
        "Review how a recorded decision turned out: success, partial or failure, with what happened. Once "
        "per decision (a second review is a conflict); feeds the calibration of stated confidence.",
        "write", DecisionOutcomeArgs,
        lambda request, args: api_decisions.record_outcome(
            request, args.decision_id, _payload(args, api_decisions.DecisionOutcomeIn, "decision_id")),
        api_decisions.DecisionOut,
    ),
    ToolSpec(
        "check_censors",
        "Before acting, check the intended action against the censors (learned \"never do X again\" rules). "
        "Answers the verdict allow, warn or block and the censors that matched. Each match counts as an "
        "activation (so this needs the write scope); a warning repeated past its threshold escalates to block.",
        "write", ActionIn, memory_api.check_censors, CensorCheckOut,
    ),
    ToolSpec(
        "match_procedures",
        "Find the stored procedures (how-tos with steps, tools, goals and notes) that fit a task, best first, "
        "each with its effectiveness so far.",
        "read", TaskIn, memory_api.match_procedures, list[ProcedureMatchOut],
    ),
    ToolSpec(
        "get_working_memory",
        "Read a session's working memory: the items in focus (at most its capacity) and those recently "
        "evicted to long-term memory.",
        "read", SessionArgs, lambda request, args: memory_api.get_working_memory(request, args.session),
        WorkingMemoryOut,
    ),
    ToolSpec(
        "set_working_memory",
        "Replace a session's working memory with these items (content, attention 0–1, optional key and kind). "
        "Beyond the capacity (7 by default) the lowest-attention items, and items left out, are evicted to "
        "long-term memory; nothing is deleted.",
        "write", WorkingMemoryArgs,
        lambda request, args: memory_api.put_working_memory(request, args.session,
                                                            _payload(args, WorkingMemoryIn, "session")),
        WorkingMemoryOut,
    ),
    ToolSpec(
        "get_scratchpad",
        "Read a task's scratchpad: its state exactly as last stored, and its version.",
        "read", ScratchpadArgs, lambda request, args: memory_api.get_scratchpad(request, args.task), None,
    ),
    ToolSpec(
        "put_scratchpad",
        "Store a task's whole state (any JSON) in its scratchpad, replacing the previous state; give "
        "expected_version to refuse overwriting a newer state. Answers the new version.",
        "write", ScratchpadPutArgs, _put_scratchpad, None,
    ),
    ToolSpec(
        "report_gap",
        "Report a capability gap: something this agent could not do, said as the need (\"export invoices as "
        "PDF\"), with why. The same need in other words joins the existing gap; past the workspace's threshold "
        "it becomes a TODO for the team.",
        "write", gaps_api.GapIn, gaps_api.report_gap, gaps_api.GapOut,
    ),
)

TOOLS_BY_NAME = {tool.name: tool for tool in TOOLS}


# --- resources ------------------------------------------------------------------------------

@dataclass(frozen=True)
class ResourceSpec:
    name: str
    uri_template: str
    pattern: re.Pattern
    description: str
    run: Callable[[HttpRequest, int], Any]
    out: Any

    def answer(self, request: HttpRequest, uri: str) -> Any | None:
        """None when the URI is not one of this template's."""
        match = self.pattern.fullmatch(uri)
        if match is None:
            return None
        object_id = int(match.group(1))
        if object_id > BIGINT_MAX:  # beyond any id PostgreSQL could hold
            raise NotFound("Not found.")
        return rendered(self.out, self.run(request, object_id))


RESOURCES: tuple[ResourceSpec, ...] = (
    ResourceSpec(
        "conversation-context", "mnemo://conversations/{conversation_id}/context",
        re.compile(r"mnemo://conversations/([1-9][0-9]{0,18})/context"),
        "A conversation's current summary and its last 10 interactions: what to load before replying in it.",
        lambda request, pk: conversations_api.get_context(request, pk, ReadOptions(), recent=10), ContextOut,
    ),
    ResourceSpec(
        "entity-profile", "mnemo://entities/{entity_id}/profile",
        re.compile(r"mnemo://entities/([1-9][0-9]{0,18})/profile"),
        "An entity with its channel identities and current profile values.",
        entities_api.get_entity, EntityDetailOut,
    ),
)
