"""The client's models and operations against the live server's OpenAPI document: the same
fields with the same types, required-ness and defaults, the same paths, methods, request
and response schemas, query parameters the server knows. A change on either side fails
here until the other follows. Bounds (lengths, ranges) are left out on purpose: the server
enforces them and its 422 names them (see models.py)."""

from __future__ import annotations

import inspect
import re
import typing

import httpx
import pytest
from pydantic import BaseModel

from mnemo_client import _core as c
from mnemo_client import models
from mnemo_client.client import Mnemo

pytestmark = pytest.mark.django_db(transaction=True)

# Answers the server writes by hand (the scratchpad's state is spliced in byte for byte):
# documented without a schema, so there is nothing to compare them with.
UNDOCUMENTED = {models.ScratchpadOut}

CLIENT_MODELS = [value for value in vars(models).values()
                 if inspect.isclass(value) and issubclass(value, BaseModel) and not value.__name__.startswith("_")
                 and value.__module__ == models.__name__]


@pytest.fixture
def document(server) -> dict:
    # httpx's default 5 s was too short for building the document on a loaded machine (three
    # ReadTimeout errors in a two-process run at load average ~10).
    return httpx.get(f"{server}/api/v1/openapi.json", timeout=60).raise_for_status().json()


def shape(prop: dict) -> typing.Any:
    """A property's type, bounds and descriptions left out: what a client must agree on."""
    if "$ref" in prop:
        return ("ref", prop["$ref"].rsplit("/", 1)[-1])
    if "anyOf" in prop:
        return ("any of", frozenset(shape(p) for p in prop["anyOf"]))
    if "enum" in prop or "const" in prop:
        return ("one of", frozenset(prop.get("enum", [prop.get("const")])))
    kind = prop.get("type")
    if kind == "array":
        return ("array", shape(prop.get("items", {})))
    if kind == "object":
        extra = prop.get("additionalProperties")
        return ("object", shape(extra) if isinstance(extra, dict) else None)
    return (kind, prop.get("format"))


def described(schema: dict) -> dict:
    properties = schema.get("properties", {})
    return {"required": set(schema.get("required", [])),
            "fields": {name: (shape(p), p.get("default")) for name, p in properties.items()},
            "closed": schema.get("additionalProperties") is False}


def test_every_model_matches_its_schema_component(document):
    components = document["components"]["schemas"]
    compared = 0
    for model in CLIENT_MODELS:
        if model in UNDOCUMENTED:
            assert model.__name__ not in components
            continue
        assert model.__name__ in components, f"{model.__name__} is not a component of the API"
        mode = "validation" if issubclass(model, models._In) else "serialization"
        mine = model.model_json_schema(ref_template="#/components/schemas/{model}", mode=mode)
        theirs = components[model.__name__]
        assert described(mine) == described(theirs), model.__name__
        compared += 1
    assert compared >= 50


def _documented(operation: dict, status: str) -> dict:
    return operation["responses"][status].get("content", {}).get("application/json", {}).get("schema", {})


def _expected_schema(out) -> dict:
    if typing.get_origin(out) is list:
        [item] = typing.get_args(out)
        return {"type": "array", "items": {"$ref": f"#/components/schemas/{item.__name__}"}}
    return {"$ref": f"#/components/schemas/{out.__name__}"}


def test_every_operation_exists_with_the_clients_request_and_response(document):
    for op in c.OPERATIONS:
        path = document["paths"].get(c.API_PREFIX + op.path)
        assert path and op.method.lower() in path, f"{op.method} {op.path} is not in the API"
        operation = path[op.method.lower()]
        successes = [status for status in operation["responses"] if str(status).startswith("2")]
        assert successes, op
        for status in successes:
            answer = _documented(operation, status)
            if op.out in UNDOCUMENTED:
                assert answer == {}, f"{op.method} {op.path} now documents its answer: give it a model"
            else:
                assert {k: v for k, v in answer.items() if k != "title"} == _expected_schema(op.out), op
        body = operation.get("requestBody", {}).get("content", {}).get("application/json", {}).get("schema")
        if op.body is None:
            assert body in (None, {}), op  # none, or any JSON (the scratchpad's state)
        else:
            assert body == {"$ref": f"#/components/schemas/{op.body.__name__}"}, op
        in_path = {p["name"] for p in operation.get("parameters", []) if p["in"] == "path"}
        assert in_path == set(re.findall(r"{(\w+)}", op.path)), op


# Which client method sends which operation's query parameters or body fields.
QUERY_METHODS = {"list_interactions": c.LIST_INTERACTIONS, "list_memories": c.LIST_MEMORIES,
                 "search_entities": c.LIST_ENTITIES, "list_decisions": c.LIST_DECISIONS, "list_gaps": c.LIST_GAPS,
                 "get_interaction": c.GET_INTERACTION, "get_memory": c.GET_MEMORY, "put_scratchpad": c.PUT_SCRATCHPAD}
BODY_METHODS = {"log": c.LOG, "recall": c.RECALL, "context": c.CONTEXT, "remember": c.REMEMBER,
                "record_decision": c.RECORD_DECISION, "record_outcome": c.DECISION_OUTCOME,
                "check_censors": c.CHECK_CENSORS, "match_procedures": c.MATCH_PROCEDURES,
                "set_working_memory": c.PUT_WORKING_MEMORY, "checkpoint_scratchpad": c.CHECKPOINT,
                "restore_scratchpad": c.RESTORE, "report_gap": c.REPORT_GAP, "rebuild": c.REBUILD}


def _arguments(method: str, op: c.Operation) -> set[str]:
    path = set(re.findall(r"{(\w+)}", op.path))
    return set(inspect.signature(getattr(Mnemo, method)).parameters) - {"self"} - path


def test_the_methods_send_only_parameters_the_server_knows(document):
    for method, op in QUERY_METHODS.items():
        operation = document["paths"][c.API_PREFIX + op.path][op.method.lower()]
        known = {p["name"] for p in operation.get("parameters", []) if p["in"] == "query"}
        sent = _arguments(method, op) - ({"state"} if method == "put_scratchpad" else set())
        assert sent <= known, (method, sent - known)
    for method, op in BODY_METHODS.items():
        assert _arguments(method, op) <= set(op.body.model_fields), method
