"""The MCP server (the official SDK's low-level `Server`): lists the tools and resources of
mnemo.mcp.tools and runs them for the request being served.

Each call runs synchronously in the thread serving the /mcp request (asgiref's
thread-sensitive mode), so it uses that request's database connection, as a REST call
does. Whatever a REST call would answer with an error (a missing scope, bad or secret
arguments, another workspace's id, a conflict) comes back as a tool error whose text is
the REST error envelope, made by the REST API's own exception handlers."""

from __future__ import annotations

import json
from contextvars import ContextVar
from typing import Any

import mcp_types as types
from asgiref.sync import sync_to_async
from django.http import HttpRequest
from mcp.server.lowlevel import Server
from mcp.shared.exceptions import MCPError
from ninja.errors import ValidationError as NinjaValidationError
from pydantic import ValidationError

from core.auth import check_scope
from core.errors import NotFound
from mnemo.api import api
from mnemo.mcp.tools import RESOURCES, TOOLS, TOOLS_BY_NAME

# The Django request the tool calls of one /mcp request run for (set by mnemo.mcp.views).
current_request: ContextVar[HttpRequest] = ContextVar("mnemo_mcp_request")

RESOURCE_NOT_FOUND = -32002  # the MCP specification's code for an unknown resource

INSTRUCTIONS = (
    "Mnemo is this agent's memory, shared with a team that reviews it. Log what you hear and say "
    "(log_interaction), fetch a context pack before answering (get_context_pack), recall or remember "
    "specific things, check censors before risky actions, and report what you could not do (report_gap)."
)


def _envelope(request: HttpRequest, exc: Exception) -> dict:
    """The REST API's error envelope for `exc`: {"error": {"code", "message", "details"}}."""
    return json.loads(api.on_exception(request, exc).content)


def _arguments_invalid(exc: ValidationError) -> NinjaValidationError:
    # As the REST API sees a body's errors, under "arguments" instead of "body".
    return NinjaValidationError([{**err, "loc": ("arguments", *err["loc"])} for err in exc.errors()])


def _text(value: Any) -> list[types.TextContent]:
    return [types.TextContent(text=json.dumps(value, ensure_ascii=False))]


def call_tool(request: HttpRequest, name: str, arguments: dict | None) -> types.CallToolResult:
    tool = TOOLS_BY_NAME.get(name)
    try:
        if tool is None:
            raise NotFound(f"No tool named {name!r}.", details={"tools": sorted(TOOLS_BY_NAME)})
        check_scope(request.auth, tool.scope)
        try:
            args = tool.args.model_validate(arguments or {})
        except ValidationError as exc:
            raise _arguments_invalid(exc) from None
        answer = tool.answer(request, args)
    except Exception as exc:  # everything the REST API answers with an error, answered the same way
        envelope = _envelope(request, exc)
        return types.CallToolResult(content=_text(envelope), structured_content=envelope, is_error=True)
    return types.CallToolResult(content=_text(answer),
                                structured_content=answer if isinstance(answer, dict) else {"result": answer})


def read_resource(request: HttpRequest, uri: str) -> str:
    try:
        check_scope(request.auth, "read")
        for resource in RESOURCES:
            answer = resource.answer(request, uri)
            if answer is not None:
                return json.dumps(answer, ensure_ascii=False)
        raise NotFound(f"No resource {uri!r}.")
    except Exception as exc:
        envelope = _envelope(request, exc)
        code = RESOURCE_NOT_FOUND if envelope["error"]["code"] == "not_found" else types.INVALID_PARAMS
        raise MCPError(code=code, message=envelope["error"]["message"], data=envelope) from None


def _tool(spec) -> types.Tool:
    return types.Tool(
        name=spec.name, description=spec.description, input_schema=spec.args.model_json_schema(),
        annotations=types.ToolAnnotations(read_only_hint=spec.scope == "read"),
    )


_TOOL_LIST = types.ListToolsResult(tools=[_tool(spec) for spec in TOOLS])
_TEMPLATES = types.ListResourceTemplatesResult(resource_templates=[
    types.ResourceTemplate(name=r.name, uri_template=r.uri_template, description=r.description,
                           mime_type="application/json")
    for r in RESOURCES
])


async def _list_tools(ctx, params) -> types.ListToolsResult:
    return _TOOL_LIST


async def _call_tool(ctx, params: types.CallToolRequestParams) -> types.CallToolResult:
    return await sync_to_async(call_tool, thread_sensitive=True)(current_request.get(), params.name, params.arguments)


async def _list_resources(ctx, params) -> types.ListResourcesResult:
    # Conversations and entities are many: they are offered through the templates.
    return types.ListResourcesResult(resources=[])


async def _list_templates(ctx, params) -> types.ListResourceTemplatesResult:
    return _TEMPLATES


async def _read_resource(ctx, params: types.ReadResourceRequestParams) -> types.ReadResourceResult:
    uri = str(params.uri)
    text = await sync_to_async(read_resource, thread_sensitive=True)(current_request.get(), uri)
    return types.ReadResourceResult(contents=[types.TextResourceContents(uri=uri, mime_type="application/json",
                                                                         text=text)])


server = Server(
    "mnemo", version="1", title="Mnemo", instructions=INSTRUCTIONS,
    on_list_tools=_list_tools, on_call_tool=_call_tool, on_list_resources=_list_resources,
    on_list_resource_templates=_list_templates, on_read_resource=_read_resource,
)
