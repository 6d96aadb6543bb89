"""Schemathesis against the whole API, in process (Django's WSGI app, the real database):
every operation, valid and invalid inputs generated from the OpenAPI document, must answer
without a server error, with a status the document lists, the content type it lists and
a body that matches its schema (issue 16: the schema and the server agree).

Bounded so it fits in `make test`: schemathesis's coverage phase (a finite, deterministic
set per operation: each bound, each missing or wrongly typed field, NUL characters) plus
EXAMPLES_PER_OPERATION random ones, derandomized (the same cases every run), no shrinking,
no example database, no stateful sequences. About 5,000 requests; 2-3 minutes on the shared
2-core machine, of which the coverage phase is about 1 minute.

Only the first checks of the issue are run: no server error, the status code, the content
type and the body as documented. Ids in generated paths mostly name nothing, so most
operations answer 404 or 422 here; their success paths are in each app's test_api.py."""

from __future__ import annotations

import pytest
import schemathesis
from django.core import signals
from django.core.wsgi import get_wsgi_application
from django.db import close_old_connections
from schemathesis.checks import not_a_server_error
from schemathesis.specs.openapi.checks import (
    content_type_conformance,
    response_schema_conformance,
    status_code_conformance,
)

EXAMPLES_PER_OPERATION = 6

CONFIG = schemathesis.Config.from_dict({
    "generation": {
        "mode": "all",  # valid inputs and invalid ones
        "max-examples": EXAMPLES_PER_OPERATION,
        "deterministic": True,
        "no-shrink": True,
        "database": "none",
    },
    "phases": {"stateful": {"enabled": False}},
    "suppress-health-check": ["all"],
})

CHECKS = [not_a_server_error, status_code_conformance, content_type_conformance, response_schema_conformance]


# Loaded at collection (pytest-django has configured Django by then); the document needs
# no database. Not schemathesis.pytest.from_fixture: its lazy loader sets `node._nodeid`,
# which pytest 9.2 no longer has (AttributeError in schemathesis 4.32.5).
schema = schemathesis.openapi.from_wsgi("/api/v1/openapi.json", get_wsgi_application(), config=CONFIG)


@pytest.fixture(autouse=True)
def _connection_kept_open(db):
    # As Django's test Client does: a request ending must not close the connection that
    # holds the test's transaction.
    signals.request_started.disconnect(close_old_connections)
    signals.request_finished.disconnect(close_old_connections)
    try:
        yield
    finally:
        signals.request_started.connect(close_old_connections)
        signals.request_finished.connect(close_old_connections)


@pytest.fixture
def admin_key(workspace, make_key) -> str:
    # Every scope, so each operation is reached past its scope check.
    _, key = make_key(workspace, scopes="read,write,admin", name="schemathesis")
    return key


@schema.parametrize()
def test_no_operation_answers_a_server_error_or_off_its_schema(case, admin_key):
    case.call_and_validate(headers={"Authorization": f"Bearer {admin_key}"}, checks=CHECKS)


def test_every_operation_documents_its_error_answers_in_the_error_shape():
    from mnemo.api import api

    document = api.get_openapi_schema(path_prefix="/api/v1")
    operations = [(path, method, op) for path, ops in document["paths"].items() for method, op in ops.items()]
    assert len(operations) > 80
    for path, method, operation in operations:
        expected = {422, 429} | ({401, 403, 404, 503} if operation.get("security") else set())
        expected |= {409} if method in ("post", "put", "patch", "delete") else set()
        expected |= {413} if "requestBody" in operation else set()
        assert expected <= set(operation["responses"]), (method, path)
        for status in expected:
            schema = operation["responses"][status]["content"]["application/json"]["schema"]
            assert schema == {"$ref": "#/components/schemas/ErrorOut"}, (method, path, status)


def test_the_constraints_the_services_enforce_are_in_the_schema():
    from context.services import MAX_BUDGET, MIN_BUDGET, RECALL_TYPES
    from entities.kinds import PREDICATES, all_kinds
    from mnemo.api import api

    schemas = api.get_openapi_schema(path_prefix="/api/v1")["components"]["schemas"]
    assert schemas["EntityIn"]["properties"]["kind"]["enum"] == all_kinds()
    assert schemas["RelationshipIn"]["properties"]["predicate"]["enum"] == list(PREDICATES)
    budget = schemas["ContextIn"]["properties"]["budget_tokens"]
    assert (budget["minimum"], budget["maximum"]) == (MIN_BUDGET, MAX_BUDGET)
    assert schemas["RecallIn"]["properties"]["types"]["anyOf"][0]["items"]["enum"] == list(RECALL_TYPES)
    steps = schemas["ProcedureIn"]["properties"]["steps"]
    assert steps["minItems"] == 1 and steps["items"]["pattern"] == r"\S"


def test_the_document_has_no_duplicated_keys(client):
    """Swagger UI reads the JSON as YAML and refuses a key written twice in one object (a
    string "200" beside ninja's own 200 once hid every operation of /api/v1/docs)."""
    import json

    def once(pairs):
        keys = [key for key, _ in pairs]
        assert len(keys) == len(set(keys)), sorted(k for k in set(keys) if keys.count(k) > 1)
        return dict(pairs)

    json.loads(client.get("/api/v1/openapi.json").content, object_pairs_hook=once)
