"""Issue 16: a secret is refused wherever text is stored.

The fields are not listed here: they are read from the API's OpenAPI schema (every
string in the body, query and path of every writing operation, strings in lists and
dict values included) and from the Django admin's registry (every form that can add or
change a row). A field added later is tried automatically. Each is sent one secret of
every rule family; the answer must be a 422 naming that field, and the database must not
have changed (PostgreSQL's per-transaction tuple counters, which count updates too).

A field may refuse a secret by its own constraints instead (a pattern or a maximum
length the secret cannot meet); the test checks that claim against the schema rather
than trusting a list of exceptions."""

from __future__ import annotations

import base64
import json
import re
from urllib.parse import quote

import pytest
from django.db import connection

from core.privacy import find_secrets
from mnemo.api import api as ninja_api
from tests.helpers import ApiClient


def _b64(data: dict) -> str:
    return base64.urlsafe_b64encode(json.dumps(data).encode()).decode().rstrip("=")


# One secret per rule family the issue names; each is checked to be one below.
SECRETS = {
    "github_token": "ghp_" + "aB3dE5gH7jK9mN1pQ3sT5vW7yZ9bC1dF3hJ5",
    "stripe_key": "sk_live_" + "4eC39HqLyjWDarjtT1zdp7dc",
    "aws_access_key": "AKIA" + "Z7Q4R2WX9P3L6M1N",
    "private_key": "-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA7bq3kD0vQx9mZp2LwR8tYc4NfJ1sVhU6gE3oKiB5aWdT\n"
                   "-----END RSA PRIVATE KEY-----",
    "jwt": _b64({"alg": "HS256", "typ": "JWT"}) + "." + _b64({"sub": "42", "name": "Ann"})
           + ".SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c",
    "url_password": "postgres://mnemo:Zx8kLq2vPw9@db.internal:5432/mnemo",
}

WRITING = ("post", "put", "patch", "delete")


def changes_in_this_transaction() -> int:
    """Rows inserted, updated or deleted so far in the test's transaction, in any table but
    the sessions (where the dashboard keeps its flash messages) and the rate limits'
    counters (every API request counts, refused or not)."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT coalesce(sum(n_tup_ins + n_tup_upd + n_tup_del), 0) FROM pg_stat_xact_user_tables"
                       " WHERE relname NOT IN ('django_session', 'mnemo_ratelimit_cache')")
        return int(cursor.fetchone()[0])


# --- the fields, from the OpenAPI schema -------------------------------------------------------

_SCHEMA = ninja_api.get_openapi_schema()
_COMPONENTS = _SCHEMA["components"]["schemas"]


def _resolve(schema: dict) -> dict:
    while "$ref" in schema:
        schema = _COMPONENTS[schema["$ref"].rsplit("/", 1)[1]]
    return schema


def _variants(schema: dict) -> list[dict]:
    schema = _resolve(schema)
    subs = schema.get("anyOf") or schema.get("oneOf") or schema.get("allOf")
    if subs:
        return [v for sub in subs for v in _variants(sub)]
    return [schema]


def _is_free_string(schema: dict) -> bool:
    return schema.get("type") == "string" and "enum" not in schema and "const" not in schema and "format" not in schema


def _sample(schema: dict):
    """A valid value for a schema: what the baseline request holds in every required field."""
    variant = next(v for v in _variants(schema) if v.get("type") != "null")
    if "enum" in variant:
        return variant["enum"][0]
    if "const" in variant:
        return variant["const"]
    kind = variant.get("type")
    if kind == "string":
        if variant.get("format") == "date-time":
            return "2030-01-01T00:00:00Z"
        return "cli" if "pattern" in variant else "plain words"[:variant.get("maxLength", 99)]
    if kind == "integer":
        return max(1, variant.get("minimum", 1))
    if kind == "number":
        return min(max(0.5, variant.get("minimum", 0)), variant.get("maximum", 1))
    if kind == "boolean":
        return False
    if kind == "array":
        return [_sample(variant["items"])] * variant.get("minItems", 0)
    if kind == "object" or "properties" in variant:
        return {name: _sample(sub) for name, sub in variant.get("properties", {}).items()
                if name in variant.get("required", [])}
    raise AssertionError(f"no sample for {variant}")


def _body_targets(schema: dict, path: tuple = ()) -> list[tuple[tuple, dict]]:
    """(where, string schema) for every free-text string a body can hold. `where` is a
    tuple of property names, "[]" for a list item and "{}" for a dict value."""
    found = []
    for variant in _variants(schema):
        if _is_free_string(variant):
            found.append((path, variant))
        elif variant.get("type") == "array":
            found += _body_targets(variant["items"], (*path, "[]"))
        elif variant.get("type") == "object" or "properties" in variant:
            for name, sub in variant.get("properties", {}).items():
                found += _body_targets(sub, (*path, name))
            extra = variant.get("additionalProperties")
            if isinstance(extra, dict) and extra:
                found += _body_targets(extra, (*path, "{}"))
            elif extra is True or (not variant.get("properties") and extra is None):
                found.append(((*path, "{}"), {"type": "string"}))  # free-form JSON: any value may be text
    return found


def _with_value(body_schema: dict, where: tuple, value):
    """The baseline body with `value` placed at `where` (creating the containers on the way)."""
    def place(schema, rest):
        if not rest:
            return value
        variant = next(v for v in _variants(schema) if v.get("type") != "null")
        head, *tail = rest
        if head == "[]":
            return [place(variant["items"], tail)]
        if head == "{}":
            extra = variant.get("additionalProperties")
            key = "text" if isinstance(extra, dict) and extra else "note"  # review `changes` edits `text`
            return {key: place(extra if isinstance(extra, dict) else {}, tail)}
        base = _sample(variant)
        base[head] = place(variant["properties"][head], tail)
        return base
    return place(body_schema, list(where))


def _field_name(where: tuple, schema: dict | None = None) -> str:
    """The field an error names for a value placed at `where` by _with_value (the same key
    for a dict value: "text" in a typed dict such as review `changes`, else "note")."""
    name = ""
    for part in where:
        variant = next((v for v in _variants(schema) if v.get("type") != "null"), {}) if schema else {}
        if part == "[]":
            name, schema = name + "[0]", variant.get("items")
        elif part == "{}":
            extra = variant.get("additionalProperties")
            typed = isinstance(extra, dict) and bool(extra)
            name, schema = name + (".text" if typed else ".note"), extra if typed else None
        else:
            name, schema = (name + f".{part}" if name else part), variant.get("properties", {}).get(part)
    return name


def _uploads_only(content: dict) -> bool:
    """A multipart body whose every field is a binary file."""
    if set(content) != {"multipart/form-data"}:
        return False
    schema = content["multipart/form-data"]["schema"]
    schema = _SCHEMA["components"]["schemas"][schema["$ref"].rsplit("/", 1)[-1]] if "$ref" in schema else schema
    return all(field.get("format") == "binary" for field in schema.get("properties", {}).values())


def _write_fields() -> list[pytest.param]:
    cases = []
    for url, operations in _SCHEMA["paths"].items():
        for method, operation in operations.items():
            if method not in WRITING:
                continue
            body_schema = None
            targets = []
            content = operation.get("requestBody", {}).get("content", {})
            if "application/json" in content:
                body_schema = content["application/json"]["schema"]
                targets += [("body", where, schema) for where, schema in _body_targets(body_schema)]
            elif content:
                # An upload (POST /import: a workspace archive) holds files only; the
                # importer scans every value inside for secrets (tests/core/test_archive.py).
                assert _uploads_only(content), (method, url, content)
            for parameter in operation.get("parameters", []):
                for variant in _variants(parameter["schema"]):
                    if _is_free_string(variant):
                        targets.append((parameter["in"], (parameter["name"],), variant))
            for part, where, schema in targets:
                case = (method, url, operation, body_schema, part, where, schema)
                cases.append(pytest.param(case, id=f"{method.upper()} {url} {part}:{_field_name(where, body_schema if part == 'body' else None)}"))
    return cases


WRITE_FIELDS = _write_fields()


def _request(method: str, url: str, operation: dict, body_schema, part: str, where: tuple, secret: str):
    path_values = {}
    query = {}
    for parameter in operation.get("parameters", []):
        value = _sample(parameter["schema"]) if parameter.get("required") or parameter["in"] == "path" else None
        if value is not None:
            (path_values if parameter["in"] == "path" else query)[parameter["name"]] = value
    body = _sample(body_schema) if body_schema else None
    if part == "body":
        body = _with_value(body_schema, where, secret)
    elif part == "path":
        path_values[where[0]] = secret
    else:
        query[where[0]] = secret
    url = re.sub(r"\{(\w+)\}", lambda m: quote(str(path_values[m.group(1)]), safe=""), url)
    if query:
        url += "?" + "&".join(f"{k}={quote(str(v), safe='')}" for k, v in query.items())
    return method, url, body


def _refused_by_own_constraints(schema: dict, secret: str) -> bool:
    """The field's pattern or maximum length cannot hold this secret."""
    too_long = "maxLength" in schema and len(secret) > schema["maxLength"]
    unmatched = "pattern" in schema and not re.search(schema["pattern"], secret)
    return too_long or unmatched


@pytest.fixture
def full_api(workspace, make_key, settings):
    settings.MNEMO_API_KEY_TOUCH_SECONDS = 10**9  # the key's last-used touch would count as a change
    _, key = make_key(workspace, scopes="read,write,admin", name="all scopes")
    client = ApiClient(key)
    client.get("/status")
    return client


def _send(client: ApiClient, method: str, url: str, body):
    raw = json.dumps(body) if body is not None else ""
    call = getattr(client.client, method)
    return call(url, raw, content_type="application/json", headers=client.headers)


def test_the_secrets_used_here_are_each_caught_by_their_rule():
    for rule, secret in SECRETS.items():
        assert [match.rule for match in find_secrets(secret)] == [rule]


def test_the_schema_walk_finds_the_fields_the_issue_names():
    # If the walk stopped seeing fields, every test below would pass vacuously.
    seen = {case.id for case in WRITE_FIELDS}
    for expected in ("POST /api/v1/entities body:description", "POST /api/v1/entities body:aliases[0]",
                     "PATCH /api/v1/entities/{entity_id} body:name", "POST /api/v1/entities/{entity_id}/profile body:value",
                     "POST /api/v1/decisions body:options[0]", "POST /api/v1/memories body:attribute",
                     "POST /api/v1/scratchpads/{task}/checkpoints body:label", "PUT /api/v1/trusted-state/{key} body:note",
                     "POST /api/v1/keys body:name", "POST /api/v1/interactions body:external_id",
                     "POST /api/v1/interactions body:metadata.note", "PUT /api/v1/trusted-state/{key} path:key",
                     "POST /api/v1/candidates/{item_id}/promote body:changes.text",
                     "PUT /api/v1/working-memory/{session} body:items[0].content"):
        assert expected in seen


def test_the_transaction_counter_sees_a_write(full_api):
    before = changes_in_this_transaction()
    assert full_api.post("/entities", {"kind": "project", "name": "Apollo", "description": "plain"}).status_code == 201
    assert changes_in_this_transaction() > before


@pytest.mark.parametrize("case", WRITE_FIELDS)
def test_it_rejects_a_secret_in_every_write_field_and_stores_nothing(full_api, case):
    method, url, operation, body_schema, part, where, schema = case
    field = _field_name(where, body_schema if part == "body" else None)
    for rule, secret in SECRETS.items():
        if part == "path" and "/" in secret:
            continue  # a path segment cannot hold a slash: the URL would name another route
        method_, target, body = _request(method, url, operation, body_schema, part, where, secret)
        before = changes_in_this_transaction()
        response = _send(full_api, method_, target, body)
        assert response.status_code == 422, (rule, response.content)
        error = response.json()["error"]
        assert changes_in_this_transaction() == before, (rule, "something was written")
        assert secret not in response.content.decode(), rule
        if error["code"] == "secret_detected":
            assert error["details"]["field"] == field and error["details"]["rule"] == rule, error
        else:
            # Refused by the field's own pattern or length: only that field is wrong, and the
            # schema confirms the secret could never fit it.
            assert error["code"] == "validation_error", error
            assert _refused_by_own_constraints(schema, secret), (rule, error)
            last = {"[]": 0, "{}": field.rsplit(".", 1)[-1]}.get(where[-1], where[-1])
            assert all(e["loc"][-1] == last for e in error["details"]["errors"]), error


def test_enum_path_and_body_values_are_never_secrets():
    # Enumerated strings are skipped above: none of the allowed values may be a secret.
    def enums(schema):
        for variant in _variants(schema):
            yield from variant.get("enum", [])
            for sub in variant.get("properties", {}).values():
                yield from enums(sub)
            if "items" in variant:
                yield from enums(variant["items"])
    values = set()
    for operations in _SCHEMA["paths"].values():
        for method, operation in operations.items():
            if method in WRITING:
                for parameter in operation.get("parameters", []):
                    values |= set(enums(parameter["schema"]))
                if "application/json" in operation.get("requestBody", {}).get("content", {}):
                    values |= set(enums(operation["requestBody"]["content"]["application/json"]["schema"]))
    assert "approve" in values
    assert not [value for value in values if isinstance(value, str) and find_secrets(value)]
