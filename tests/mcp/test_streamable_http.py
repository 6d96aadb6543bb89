"""/mcp over Streamable HTTP, end to end with the SDK's own client against a live server:
every tool and resource, scopes as in the REST API, another workspace's ids, bad and secret
arguments, refused keys and rate limits."""

from __future__ import annotations

import httpx
import pytest
from mcp.shared.exceptions import MCPError

from conversations.models import Interaction
from memory.models import Memory
from memory.services import memories_embed
from mnemo.mcp.tools import TOOLS
from tests.helpers import ApiClient
from tests.mcp.conftest import GITHUB_TOKEN, payload, run_mcp, tool_error

pytestmark = pytest.mark.django_db(transaction=True)

MESSAGE = {"channel": "slack", "channel_id": "ann", "sender_name": "Ann", "content": "I moved to Lisbon last spring.",
           "external_id": "m-1"}


def test_it_lists_every_tool_with_a_description_and_an_object_schema(mcp_url, read_key):
    async def session(client):
        return await client.list_tools(), await client.list_resource_templates()

    tools, templates = run_mcp(mcp_url, read_key, session)
    listed = {tool.name: tool for tool in tools.tools}
    assert set(listed) == {spec.name for spec in TOOLS} >= {
        "log_interaction", "remember", "recall", "get_context_pack", "search_entities", "get_entity",
        "record_decision", "record_decision_outcome", "check_censors", "match_procedures", "get_working_memory",
        "set_working_memory", "get_scratchpad", "put_scratchpad", "report_gap"}
    for tool in listed.values():
        assert len(tool.description) > 40 and tool.input_schema["type"] == "object"
    assert listed["recall"].annotations.read_only_hint and not listed["remember"].annotations.read_only_hint
    assert listed["log_interaction"].input_schema["required"] == ["channel", "channel_id", "content"]
    assert {t.uri_template for t in templates.resource_templates} == {
        "mnemo://conversations/{conversation_id}/context", "mnemo://entities/{entity_id}/profile"}


def test_an_agent_logs_remembers_recalls_and_gets_a_pack_it_can_inspect(mcp_url, write_key, api):
    async def session(client):
        logged = payload(await client.call_tool("log_interaction", MESSAGE))
        again = payload(await client.call_tool("log_interaction", MESSAGE))
        stored = payload(await client.call_tool("remember", {"text": "Ann prefers tea over coffee.",
                                                             "type": "preference", "entity": logged["entity_id"]}))
        recalled = payload(await client.call_tool("recall", {"query": "tea coffee", "types": ["preference"]}))
        pack = payload(await client.call_tool("get_context_pack", {"query": "What does Ann drink?",
                                                                   "budget_tokens": 300}))
        conversation = await client.read_resource(f"mnemo://conversations/{logged['conversation_id']}/context")
        profile = await client.read_resource(f"mnemo://entities/{logged['entity_id']}/profile")
        return logged, again, stored, recalled, pack, conversation, profile

    logged, again, stored, recalled, pack, conversation, profile = run_mcp(mcp_url, write_key, session)
    assert logged["status"] == "created" and (again["status"], again["id"]) == ("duplicate", logged["id"])
    assert Interaction.objects.get(pk=logged["id"]).content == MESSAGE["content"]
    assert stored["outcome"] == "created" and stored["memory"]["entity_id"] == logged["entity_id"]
    assert [r["id"] for r in recalled["results"]] == [stored["memory"]["id"]]
    assert set(pack) == {"pack_id", "text", "budget_tokens", "tokens_used", "warnings", "followed"}
    assert pack["followed"] is None  # the question names Ann
    assert "Ann prefers tea over coffee." in pack["text"] and pack["tokens_used"] <= 300
    # The pack is logged like a REST one: the REST API serves it back by its id.
    assert api.get(f"/packs/{pack['pack_id']}").json()["text"] == pack["text"]
    [content] = conversation.contents
    assert '"I moved to Lisbon last spring."' in content.text and content.mime_type == "application/json"
    assert '"channel_id": "ann"' in profile.contents[0].text


def test_every_other_tool_answers_what_its_rest_operation_answers(mcp_url, write_key, api):
    procedure = api.post("/procedures", {"name": "Deploy", "steps": ["run the tests", "tag a release"]}).json()
    api.post("/censors", {"trigger": "force push to main", "reason": "it broke the release", "action": "block"})
    entity = api.post("/entities", {"kind": "project", "name": "Atlas"}).json()
    memories_embed()  # the worker's part: procedures are matched by meaning

    async def session(client):
        answers = {}
        for name, arguments in [
            ("search_entities", {"q": "Atlas"}),
            ("get_entity", {"entity_id": entity["id"]}),
            ("record_decision", {"description": "Use PostgreSQL for Atlas", "options": ["PostgreSQL", "MySQL"],
                                 "chosen": "PostgreSQL", "confidence": 0.8}),
            ("check_censors", {"action": "force push to main"}),
            ("match_procedures", {"task": "deploy a release"}),
            ("set_working_memory", {"session": "s-1", "items": [{"content": "the user wants a summary",
                                                                  "attention": 0.9}]}),
            ("get_working_memory", {"session": "s-1"}),
            ("put_scratchpad", {"task": "t-1", "state": {"step": 2, "done": ["a"]}}),
            ("put_scratchpad", {"task": "t-1", "state": [1, 2], "expected_version": 1}),
            ("get_scratchpad", {"task": "t-1"}),
            ("report_gap", {"description": "export invoices as PDF", "reason": "no PDF tool", "category": "feature"}),
        ]:
            result = await client.call_tool(name, arguments)
            assert not result.is_error, (name, result)
            answers.setdefault(name, []).append(payload(result))
        decision = answers["record_decision"][0]["decision"]
        result = await client.call_tool("record_decision_outcome", {"decision_id": decision["id"],
                                                                    "outcome": "success", "result": "fast enough"})
        answers["record_decision_outcome"] = [payload(result)]
        return answers

    answers = run_mcp(mcp_url, write_key, session)
    assert answers["search_entities"][0]["count"] == 1
    assert answers["search_entities"][0]["items"][0]["name"] == "Atlas"
    assert answers["get_entity"][0] == api.get(f"/entities/{entity['id']}").json()
    assert answers["check_censors"][0]["verdict"] == "block"
    assert answers["match_procedures"][0][0]["id"] == procedure["memory"]["id"]
    assert answers["match_procedures"][0] == api.post("/procedures/match", {"task": "deploy a release"}).json()
    assert answers["get_working_memory"][0]["items"][0]["content"] == "the user wants a summary"
    assert [pad["version"] for pad in answers["put_scratchpad"]] == [1, 2]
    assert answers["get_scratchpad"][0]["state"] == [1, 2] == api.get("/scratchpads/t-1").json()["state"]
    assert answers["report_gap"][0]["frequency"] == 1
    assert answers["record_decision_outcome"][0]["outcome"] == "success"


def test_a_read_key_cannot_call_a_writing_tool_and_nothing_is_stored(mcp_url, read_key):
    async def session(client):
        refused = [await client.call_tool(name, arguments) for name, arguments in [
            ("log_interaction", MESSAGE), ("remember", {"text": "a fact"}), ("check_censors", {"action": "deploy"}),
            ("put_scratchpad", {"task": "t", "state": {}}), ("report_gap", {"description": "a need"}),
        ]]
        return refused, await client.call_tool("recall", {"query": "anything"})

    refused, recalled = run_mcp(mcp_url, read_key, session)
    for result in refused:
        error = tool_error(result, "forbidden")
        # The REST API's words for the same refusal.
        assert error == {"code": "forbidden", "message": "This API key lacks the 'write' scope.",
                         "details": {"required_scope": "write"}}
    assert payload(recalled) == {"results": [], "followed": None}
    assert not Interaction.objects.exists() and not Memory.objects.exists()


def test_a_write_only_key_can_write_but_not_read(mcp_url, workspace, make_key):
    _, key = make_key(workspace, scopes="write")

    async def session(client):
        return await client.call_tool("log_interaction", MESSAGE), await client.call_tool("recall", {"query": "x"})

    logged, recalled = run_mcp(mcp_url, key, session)
    assert payload(logged)["status"] == "created"
    assert tool_error(recalled, "forbidden")["details"] == {"required_scope": "read"}


def test_an_outsider_sees_not_found_for_our_ids_and_none_of_our_data(mcp_url, write_key, outsider_key, api):
    logged = api.post("/interactions", MESSAGE).json()
    decision = api.post("/decisions", {"description": "Ship on Friday", "confidence": 0.6}).json()["decision"]
    api.put("/scratchpads/plan", {"secret-plan": True})

    async def session(client):
        results = [await client.call_tool(name, arguments) for name, arguments in [
            ("get_entity", {"entity_id": logged["entity_id"]}),
            ("record_decision_outcome", {"decision_id": decision["id"], "outcome": "failure"}),
            ("remember", {"text": "Ann is an outsider's contact", "entity": logged["entity_id"]}),
            ("recall", {"query": "Lisbon", "conversation": logged["conversation_id"]}),
            ("get_scratchpad", {"task": "plan"}),
        ]]
        seen = [await client.call_tool("recall", {"query": "Lisbon spring"}),
                await client.call_tool("search_entities", {"q": "ann"})]
        refusals = []
        for uri in (f"mnemo://entities/{logged['entity_id']}/profile",
                    f"mnemo://conversations/{logged['conversation_id']}/context"):
            with pytest.raises(MCPError) as refused:
                await client.read_resource(uri)
            refusals.append(refused.value)
        return results, seen, refusals

    results, seen, refusals = run_mcp(mcp_url, outsider_key, session)
    for result in results[:-1]:
        assert tool_error(result, "not_found")["message"] == "Not found."
    assert tool_error(results[-1], "not_found")["message"] == "Scratchpad 'plan' not found."  # as REST says
    assert payload(seen[0]) == {"results": [], "followed": None} and payload(seen[1]) == {"count": 0, "items": []}
    for error in refusals:
        assert error.error.code == -32002 and error.error.message == "Not found."
    assert api.get(f"/decisions/{decision['id']}").json()["outcome"] is None
    assert not Memory.objects.exists()


def test_errors_carry_the_rest_envelope_word_for_word(mcp_url, write_key, api):
    async def session(client):
        return (await client.call_tool("get_entity", {"entity_id": 999999}),
                await client.call_tool("put_scratchpad", {"task": "t", "state": 1, "expected_version": 7}),
                await client.call_tool("put_scratchpad", {"task": "t", "state": 2, "expected_version": 7}))

    missing, created, stale = run_mcp(mcp_url, write_key, session)
    assert {"error": tool_error(missing, "not_found")} == api.get("/entities/999999").json()
    assert payload(created)["version"] == 1  # a new scratchpad has no version to be stale against
    rest = api.put("/scratchpads/t", 3, expected_version=7)
    assert {"error": tool_error(stale, "conflict")} == {"error": {**rest.json()["error"],
                                                                  "message": "The scratchpad is at version 1, not 7.",
                                                                  "details": {"version": 1}}}
    assert rest.json()["error"]["message"] == "The scratchpad is at version 1, not 7."


@pytest.mark.parametrize("name, arguments, field", [
    ("log_interaction", {"channel": "slack", "channel_id": "ann"}, "content"),  # missing
    ("log_interaction", {**MESSAGE, "direction": "sideways"}, "direction"),  # not one of the choices
    ("log_interaction", {**MESSAGE, "workspace": 2}, "workspace"),  # not an argument: the key decides
    ("recall", {"query": "x", "limit": "many"}, "limit"),
    ("recall", {"query": "x", "entity": 2**63}, "entity"),  # beyond bigint
    ("get_entity", {"entity_id": -1}, "entity_id"),
    ("get_context_pack", {"query": "x", "budget_tokens": 10}, "budget_tokens"),
    ("set_working_memory", {"session": "s", "items": "not a list"}, "items"),
    ("record_decision", {"description": "x", "confidence": 7}, "confidence"),
    ("put_scratchpad", {"task": "t"}, "state"),
])
def test_bad_arguments_are_a_validation_error_never_a_crash(mcp_url, write_key, name, arguments, field):
    async def session(client):
        return await client.call_tool(name, arguments)

    error = tool_error(run_mcp(mcp_url, write_key, session), "validation_error")
    assert error["message"] == "The request did not validate."
    assert any(e["loc"] == ["arguments", field] for e in error["details"]["errors"]), error
    assert not Interaction.objects.exists()


def test_an_unknown_tool_is_a_not_found_tool_error(mcp_url, read_key):
    async def session(client):
        return await client.call_tool("drop_database", {})

    error = tool_error(run_mcp(mcp_url, read_key, session), "not_found")
    assert error["message"] == "No tool named 'drop_database'." and "recall" in error["details"]["tools"]


def test_a_secret_in_an_argument_is_refused_as_the_rest_api_refuses_it(mcp_url, write_key, api):
    async def session(client):
        return [await client.call_tool(name, arguments) for name, arguments in [
            ("log_interaction", {**MESSAGE, "content": f"deploy with {GITHUB_TOKEN}"}),
            ("log_interaction", {**MESSAGE, "metadata": {"headers": {"auth": GITHUB_TOKEN}}}),
            ("remember", {"text": f"the token is {GITHUB_TOKEN}"}),
            ("put_scratchpad", {"task": "t", "state": {"token": GITHUB_TOKEN}}),
            ("set_working_memory", {"session": GITHUB_TOKEN, "items": []}),
            ("recall", {"query": GITHUB_TOKEN}),
        ]]

    results = run_mcp(mcp_url, write_key, session)
    errors = [tool_error(result, "secret_detected") for result in results]
    assert [e["details"]["field"] for e in errors[:3]] == ["content", "metadata.headers.auth", "text"]
    assert all(e["details"]["rule"] == "github_token" for e in errors)
    # Word for word what REST says, and the token is never repeated.
    rest = api.post("/interactions", {**MESSAGE, "content": f"deploy with {GITHUB_TOKEN}"}).json()["error"]
    assert errors[0]["message"] == rest["message"] and errors[0]["details"]["field"] == rest["details"]["field"]
    assert all(GITHUB_TOKEN not in str(e) for e in errors)
    assert not Interaction.objects.exists() and not Memory.objects.exists()
    assert api.get("/scratchpads/t").status_code == 404


def test_redaction_applies_as_in_rest(mcp_url, write_key, api):
    api.post("/interactions", {**MESSAGE, "content": "Write to ann@example.com about Lisbon."})

    async def session(client):
        return (payload(await client.call_tool("recall", {"query": "Lisbon", "redact": True})),
                payload(await client.call_tool("recall", {"query": "Lisbon"})))

    redacted, plain = run_mcp(mcp_url, write_key, session)
    assert "ann@example.com" in plain["results"][0]["text"]
    assert "ann@example.com" not in redacted["results"][0]["text"]


def test_a_nul_character_is_refused_before_any_tool_runs(mcp_url, write_key):
    async def session(client):
        return await client.call_tool("log_interaction", {**MESSAGE, "content": "a\x00b"})

    with pytest.raises(MCPError) as refused:
        run_mcp(mcp_url, write_key, session)
    assert "NUL character" in refused.value.error.message
    assert not Interaction.objects.exists()


def _post(url: str, key: str | None, body) -> httpx.Response:
    headers = {"Accept": "application/json, text/event-stream"}
    if key:
        headers["Authorization"] = f"Bearer {key}"
    return httpx.post(url, json=body, headers=headers, timeout=60)


CALL = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "recall", "arguments": {"query": "x"}}}


@pytest.mark.parametrize("key", [None, "mn_wrong_key", "Bearer"])
def test_no_valid_key_is_a_401_the_client_reports(mcp_url, key):
    answer = _post(mcp_url, key, CALL)
    assert answer.status_code == 401 and answer.headers["WWW-Authenticate"] == "Bearer"
    error = answer.json()["error"]
    assert error["message"].startswith("A valid API key is required")
    assert error["data"]["error"]["code"] == "unauthorized"

    async def session(client):
        return await client.list_tools()

    with pytest.raises(MCPError) as refused:
        run_mcp(mcp_url, key, session)
    assert refused.value.error.message.startswith("A valid API key is required")


def test_the_rest_rate_limits_count_mcp_calls_too(mcp_url, read_key, settings):
    settings.MNEMO_RATE_LIMIT_PER_KEY = "3/m"
    answers = [_post(mcp_url, read_key, CALL) for _ in range(4)]
    assert [a.status_code for a in answers] == [200, 200, 200, 429]
    assert int(answers[3].headers["Retry-After"]) >= 1
    assert answers[3].json()["error"]["data"]["error"]["code"] == "rate_limited"
    # The key's budget is one: REST calls with it are refused now too.
    assert ApiClient(read_key).get("/status").status_code == 429


def test_a_raw_handshake_era_client_is_served_without_a_session(mcp_url, read_key):
    init = {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "curl", "version": "1"}}}
    answer = _post(mcp_url, read_key, init)
    assert answer.status_code == 200 and "mcp-session-id" not in answer.headers
    assert answer.json()["result"]["serverInfo"]["name"] == "mnemo"
    called = _post(mcp_url, read_key, CALL).json()["result"]
    assert called["isError"] is False and called["structuredContent"] == {"results": [], "followed": None}
    garbage = httpx.post(mcp_url, content=b"{not json", timeout=60, headers={
        "Authorization": f"Bearer {read_key}", "Content-Type": "application/json",
        "Accept": "application/json, text/event-stream"})
    assert garbage.status_code < 500 and garbage.json()["error"]["code"] == -32700
