"""The `mnemo` command, run as a subprocess (the installed console script) against the live
server: human output, --json, stdin, JSON Lines batches and their progress, and the exit
codes (0 done, 1 API error, 2 usage, 3 cannot connect, 4 batch lines rejected)."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
import types
from pathlib import Path

import httpx
import pytest

from conversations.models import Interaction
from memory.models import Memory
from mnemo_client import Mnemo, cli
from tests.client.conftest import process

pytestmark = pytest.mark.django_db(transaction=True)

MNEMO = Path(sys.executable).parent / "mnemo"


def mnemo(*args: str, url: str | None = None, key: str | None = None, stdin: str | None = None):
    assert MNEMO.exists(), "the console script is installed with clients/python (make install)"
    env = {k: v for k, v in os.environ.items() if not k.startswith("MNEMO_")}
    env.update({k: v for k, v in (("MNEMO_URL", url), ("MNEMO_API_KEY", key)) if v})
    # A bound, not a measurement: a hung command fails the test instead of the whole run.
    return subprocess.run([str(MNEMO), *args], input=stdin, capture_output=True, text=True, env=env, timeout=120)


def lines(*items: dict) -> str:
    return "".join(json.dumps(item) + "\n" for item in items)


def message(i: int, **extra) -> dict:
    return {"channel": "slack", "channel_id": "U042", "content": f"note {i} on the billing export", **extra}


def test_log_prints_what_happened_and_json_for_scripts(server, key, workspace):
    done = mnemo("log", "Deploys freeze on Fridays.", "--channel", "slack", "--channel-id", "U042",
                 "--external-id", "s:1", "--metadata", '{"run_id": "r1"}', url=server, key=key)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("created interaction ")
    again = mnemo("--json", "log", "Deploys freeze on Fridays.", "--channel", "slack", "--channel-id", "U042",
                  "--external-id", "s:1", url=server, key=key)
    answer = json.loads(again.stdout)
    assert again.returncode == 0 and answer["status"] == "duplicate"
    assert Interaction.objects.get(pk=answer["id"]).metadata == {"run_id": "r1"}


def test_log_reads_the_message_from_stdin_and_flags_after_the_command(server, key, workspace):
    done = mnemo("log", "-", "--json", url=server, key=key, stdin="from a pipe\n")
    assert done.returncode == 0, done.stderr
    row = Interaction.objects.get(pk=json.loads(done.stdout)["id"])
    assert (row.content.strip(), row.channel) == ("from a pipe", "cli")


def test_batch_logs_a_file_with_progress_and_a_second_run_stores_nothing(server, key, workspace, tmp_path):
    path = tmp_path / "log.jsonl"
    # Two identical lines are two messages: their derived external ids differ.
    path.write_text(lines(*(message(i) for i in range(4)), message(3)) + "\n")
    first = mnemo("batch", str(path), "--chunk-size", "2", url=server, key=key)
    assert first.returncode == 0, first.stderr
    assert first.stdout.strip() == "created 5, duplicate 0, rejected 0"
    progress = [line for line in first.stderr.splitlines() if line.startswith("mnemo batch:")]
    assert len(progress) == 2 and "% of the file" in progress[0] and "created 2" in progress[0]
    again = mnemo("batch", str(path), "--chunk-size", "2", "--quiet", url=server, key=key)
    assert (again.returncode, again.stdout.strip(), again.stderr) == (0, "created 0, duplicate 5, rejected 0", "")
    ids = set(Interaction.objects.filter(workspace=workspace).values_list("external_id", flat=True))
    assert len(ids) == 5 and all(i.startswith("jsonl:") for i in ids)


def test_batch_keeps_given_external_ids_or_none_when_asked(server, key, workspace):
    given = mnemo("batch", url=server, key=key, stdin=lines(message(1, external_id="mine:1")))
    assert given.returncode == 0, given.stderr
    assert Interaction.objects.get(workspace=workspace).external_id == "mine:1"
    for _ in range(2):
        assert mnemo("batch", "-", "--no-auto-ids", url=server, key=key, stdin=lines(message(2))).returncode == 0
    assert Interaction.objects.filter(workspace=workspace, external_id=None).count() == 2


def test_batch_names_the_lines_it_rejected_and_exits_4(server, key, workspace):
    stdin = lines(message(1)) + "{not json\n" + "[1, 2]\n" + lines(message(2, content="AKIAIOSFODNN7EXAMPLE"))
    done = mnemo("batch", url=server, key=key, stdin=stdin)
    assert done.returncode == 4
    assert "created 1, duplicate 0, rejected 3" in done.stdout
    assert "line 2: malformed_json" in done.stdout and "line 3: malformed_json" in done.stdout
    assert "line 4: secret_detected" in done.stdout and "AKIAIOSFODNN7EXAMPLE" not in done.stdout
    as_json = mnemo("--json", "batch", url=server, key=key, stdin=stdin)
    answer = json.loads(as_json.stdout)
    assert as_json.returncode == 4 and (answer["duplicate"], answer["rejected"]) == (1, 3)
    assert [r["line"] for r in answer["results"] if r["status"] == "rejected"] == [2, 3, 4]
    assert Interaction.objects.filter(workspace=workspace).count() == 1


def test_recall_context_remember_and_status(server, key, workspace):
    remembered = mnemo("remember", "Ana prefers tea over coffee.", "--type", "preference", url=server, key=key)
    assert remembered.returncode == 0 and remembered.stdout.startswith("created memory ")
    as_json = json.loads(mnemo("remember", "The VPN needs a hardware key.", "--json", url=server, key=key).stdout)
    assert as_json["outcome"] == "created" and as_json["memory"]["type"] == "fact"
    process()
    recalled = mnemo("recall", "What does Ana drink?", "--limit", "3", url=server, key=key)
    assert recalled.returncode == 0 and "tea" in recalled.stdout
    results = json.loads(mnemo("recall", "hardware key", "--json", url=server, key=key).stdout)["results"]
    assert any("hardware key" in r["text"] for r in results)
    pack = mnemo("context", "What does Ana drink?", "--budget", "300", url=server, key=key)
    assert pack.returncode == 0 and "tea" in pack.stdout and "tokens" in pack.stderr
    pack_json = json.loads(mnemo("context", "tea", "--json", url=server, key=key).stdout)
    assert pack_json["tokens_used"] <= pack_json["budget_tokens"] == 2000
    status = mnemo("status", url=server, key=key)
    assert status.returncode == 0 and "workspace  Acme (acme)" in status.stdout
    assert json.loads(mnemo("status", "--json", url=server, key=key).stdout)["workspace"]["slug"] == "acme"
    assert Memory.objects.filter(workspace=workspace).count() == 2


def test_flags_override_the_environment(server, key):
    done = mnemo("--url", server, "--key", key, "status", "--timeout", "20", url="http://127.0.0.1:9",
                 key="mn_wrong_key")
    assert done.returncode == 0, done.stderr


def test_an_api_refusal_exits_1_with_the_error_on_stderr(server, key, read_key, outsider_key, workspace):
    bad = mnemo("context", "q", "--budget", "5", url=server, key=key)
    assert (bad.returncode, bad.stdout) == (1, "")
    assert "422 validation_error" in bad.stderr and "budget_tokens" in bad.stderr
    as_json = mnemo("--json", "context", "q", "--budget", "5", url=server, key=key)
    assert as_json.returncode == 1 and json.loads(as_json.stderr)["error"]["code"] == "validation_error"
    denied = mnemo("remember", "x", url=server, key=read_key)
    assert denied.returncode == 1 and "403 forbidden" in denied.stderr and "write" in denied.stderr
    entity = json.loads(mnemo("log", "hi", "--json", url=server, key=key).stdout)["entity_id"]
    hidden = mnemo("recall", "hi", "--entity", str(entity), url=server, key=outsider_key)
    assert hidden.returncode == 1 and "404 not_found" in hidden.stderr
    unknown = mnemo("status", url=server, key="mn_nope_nope")
    assert unknown.returncode == 1 and "401 unauthorized" in unknown.stderr
    assert Memory.objects.filter(workspace=workspace).count() == 0


def test_usage_errors_exit_2(server, key, tmp_path):
    assert mnemo("status", url=server).returncode == 2  # no key
    assert "MNEMO_API_KEY" in mnemo("status", url=server).stderr
    assert mnemo("recall", url=server, key=key).returncode == 2  # no query
    assert mnemo("remember", "x", "--type", "rumour", url=server, key=key).returncode == 2
    assert mnemo("log", "x", "--metadata", "[1]", url=server, key=key).returncode == 2
    missing = mnemo("batch", str(tmp_path / "none.jsonl"), url=server, key=key)
    assert missing.returncode == 2 and "cannot read" in missing.stderr
    assert mnemo("batch", "--chunk-size", "5000", url=server, key=key, stdin="").returncode == 2
    assert mnemo("frobnicate", url=server, key=key).returncode == 2


def test_an_unreachable_server_exits_3(unused_port):
    done = mnemo("status", url=f"http://127.0.0.1:{unused_port}", key="mn_k_s")
    assert done.returncode == 3 and "cannot reach" in done.stderr


# --- mcp: the bridge is another module (mnemo_client.mcp_stdio), imported only when asked --------

def test_mcp_without_the_bridge_module_is_a_usage_error(monkeypatch, capsys):
    monkeypatch.setitem(sys.modules, "mnemo_client.mcp_stdio", None)  # import fails as if absent
    assert cli.main(["--url", "http://127.0.0.1:1", "--key", "k", "mcp"]) == 2
    assert "pip install 'mnemo-client[mcp]'" in capsys.readouterr().err


def test_mcp_without_the_mcp_sdk_is_a_usage_error(monkeypatch, capsys):
    # Whether the bridge exists yet or not, without the SDK it cannot load.
    monkeypatch.delitem(sys.modules, "mnemo_client.mcp_stdio", raising=False)
    monkeypatch.setitem(sys.modules, "mcp", None)
    assert cli.main(["--key", "k", "mcp"]) == 2
    assert "is missing" in capsys.readouterr().err


def test_mcp_hands_the_url_and_key_to_the_bridge(monkeypatch):
    calls = []
    bridge = types.ModuleType("mnemo_client.mcp_stdio")
    bridge.main = lambda url, api_key: calls.append((url, api_key)) or 0
    monkeypatch.setitem(sys.modules, "mnemo_client.mcp_stdio", bridge)
    monkeypatch.setenv("MNEMO_API_KEY", "mn_env_key")
    assert cli.main(["--url", "http://mnemo.test:8000/api/v1", "mcp"], out=io.StringIO()) == 0
    assert calls == [("http://mnemo.test:8000", "mn_env_key")]
    bridge.main = lambda url, api_key: 1
    assert cli.main(["mcp"]) == 1


def test_an_answer_the_client_cannot_read_exits_1(monkeypatch, capsys):
    transport = httpx.MockTransport(lambda request: httpx.Response(200, text="<html>a login page</html>"))
    monkeypatch.setattr(cli, "Mnemo", lambda url, key, timeout: Mnemo(url, key, transport=transport))
    assert cli.main(["--key", "k", "status"]) == 1
    assert "without JSON" in capsys.readouterr().err


def test_ctrl_c_exits_130(monkeypatch):
    def interrupted(client, args, out):
        raise KeyboardInterrupt

    monkeypatch.setitem(cli.COMMANDS, "status", interrupted)
    assert cli.main(["--key", "k", "status"]) == 130


def test_a_bridge_that_fails_on_another_missing_module_is_not_hidden(monkeypatch):
    def broken(name):
        raise ModuleNotFoundError("No module named 'yaml'", name="yaml")

    monkeypatch.setattr(cli, "import_module", broken)
    with pytest.raises(ModuleNotFoundError):
        cli.main(["--key", "k", "mcp"])
