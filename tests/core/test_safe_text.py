"""The one guard (core/safe_text.py, core/privacy/guard.py): the walk over nested values,
the services that refuse a secret whoever calls them, and the batch endpoint, whose items
are validated one by one against InteractionIn (so they do not show in the OpenAPI walk of
test_secrets_everywhere.py)."""

from __future__ import annotations

import pytest
from pydantic import TypeAdapter, ValidationError

from conversations.models import Interaction
from conversations.schemas import InteractionIn
from core import services as core_services
from core.privacy.guard import first_secret
from core.safe_text import SafeContent, SafeJson, SafeStr, SecretRefused
from entities import decisions
from entities import services as entity_services
from memory import services as memory_services
from tests.core.test_secrets_everywhere import SECRETS, changes_in_this_transaction

GITHUB = SECRETS["github_token"]


# --- the walk ----------------------------------------------------------------------------------

def test_it_finds_a_secret_deep_inside_json_without_recursing():
    value: dict = {"leaf": f"token {GITHUB}"}
    for _ in range(20_000):  # far past Python's recursion limit
        value = {"next": [value]}
    at, match = first_secret(value)
    assert match.rule == "github_token"
    assert at == "…[0]" + ".next[0]" * 5 + ".leaf"  # only the innermost levels of the path


def test_a_dict_entry_is_read_with_its_key_as_the_stored_json_reads():
    # `{"api_key": "…"}` names its secret by the key, as `api_key: …` does in prose.
    assert first_secret({"api_key": "Zx81kLmq0PpW3rTy7uVb"})[1].rule == "assigned_secret"
    assert first_secret({"colour": "Zx81kLmq0PpW3rTy7uVb"}) is None
    at, match = first_secret({"headers": {GITHUB: 1}})
    assert match.rule == "github_token" and at == "headers.<key>"  # the path never repeats the secret


def test_a_secret_inside_a_private_block_counts_only_where_the_block_is_removed():
    text = f"deploy with <private>{GITHUB}</private> tonight"
    assert first_secret(text) is not None
    assert first_secret(text, private_allowed=True) is None
    assert TypeAdapter(SafeContent).validate_python(text) == text  # the service removes the block
    with pytest.raises(ValidationError, match="github_token"):
        TypeAdapter(SafeStr).validate_python(text)


def test_plain_values_pass_untouched():
    for value in ("Ada Lovelace", "", "password_length = 12", "the token bucket refills at 5/s"):
        assert TypeAdapter(SafeStr).validate_python(value) == value
    assert TypeAdapter(SafeJson).validate_python({"tags": ["a", "b"], "n": 3}) == {"tags": ["a", "b"], "n": 3}


# --- the services ------------------------------------------------------------------------------

@pytest.fixture
def ada(workspace):
    return entity_services.entity_create(workspace=workspace, kind="person", name="Ada")


@pytest.mark.parametrize("rule", sorted(SECRETS))
def test_the_services_refuse_a_secret_whoever_calls_them(workspace, ada, rule):
    secret = SECRETS[rule]
    calls = {
        "entity name": lambda: entity_services.entity_create(workspace=workspace, kind="project", name=secret),
        "entity aliases": lambda: entity_services.entity_update(entity=ada, aliases=["Ada L.", secret]),
        "entity description": lambda: entity_services.entity_update(entity=ada, description=f"see {secret}"),
        "display name": lambda: entity_services.identity_link(entity=ada, channel="cli", channel_id="ada",
                                                              display_name=secret),
        "profile value": lambda: entity_services.profile_set(entity=ada, key="employer", value=secret),
        "decision": lambda: decisions.decision_record(workspace=workspace, description=secret, confidence=0.5),
        "memory value": lambda: memory_services.memory_store(workspace_id=workspace.pk, draft=memory_services.Draft(
            type="identity", text="Ada works at Acme.", certainty="verbatim", subject_id=ada.pk,
            attribute="employer", value=secret)),
        "checkpoint label": lambda: memory_services.scratchpad_checkpoint(
            scratchpad=memory_services.scratchpad_put(workspace=workspace, task="t", raw_state="{}",
                                                      actor=core_services.SYSTEM),
            actor=core_services.SYSTEM, label=secret),
        "trusted-state note": lambda: memory_services.trusted_state_set(
            workspace=workspace, key="k", value="v", note=secret, actor=core_services.SYSTEM),
        "api key name": lambda: core_services.api_key_create(workspace=workspace, name=secret, scopes="read"),
    }
    for what, call in calls.items():
        before = changes_in_this_transaction()
        with pytest.raises(SecretRefused) as refused:
            call()
        assert refused.value.rule == rule, what
        assert secret not in str(refused.value.messages), what
        if what != "checkpoint label":  # its scratchpad is written first, on purpose
            assert changes_in_this_transaction() == before, what


# --- the batch endpoint ------------------------------------------------------------------------

def _item_string_fields() -> list[str]:
    properties = InteractionIn.model_json_schema()["properties"]
    return [name for name, schema in properties.items()
            if any(v.get("type") in ("string", "object") and "enum" not in v and "format" not in v
                   for v in schema.get("anyOf", [schema]))]


def test_the_batch_refuses_the_item_naming_field_and_rule_and_stores_the_rest(api):
    fields = _item_string_fields()
    assert {"external_id", "channel_id", "sender_name", "thread", "content", "metadata"} <= set(fields)
    for name in fields:
        for rule, secret in SECRETS.items():
            bad = {"channel": "cli", "channel_id": "ada", "content": "hello",
                   name: {"note": secret} if name == "metadata" else secret}
            good = {"channel": "cli", "channel_id": "ada", "content": f"fine {name} {rule}"}
            body = api.post("/interactions/batch", {"items": [bad, good]}).json()
            refused, stored = body["results"]
            assert refused["status"] == "rejected" and stored["status"] == "created", body
            if refused["error"]["code"] == "secret_detected":
                assert refused["error"]["rule"] == rule and refused["error"]["field"].startswith(name), body
            else:  # the channel's pattern (lowercase letters, digits, _ . -) cannot hold it
                assert name == "channel" and refused["error"]["field"] == "channel", body
            assert secret not in str(body)
    assert not Interaction.objects.filter(content__contains="hello").exists()
