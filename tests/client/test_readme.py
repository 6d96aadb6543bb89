"""Every snippet of the README's "Connect an agent" section runs against a live server, in
order, as a reader would paste it: ```python blocks with the venv's Python, ```sh blocks
with bash (-e, pipefail) and the venv's `mnemo` first on PATH, MNEMO_URL and MNEMO_API_KEY
set. The outputs the README states in its comments are checked. Only the "### MCP"
subsection may hold other snippets: its client configuration (JSON), whose command is
started here as the client would start it and asked for its tools."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from django.conf import settings


pytestmark = pytest.mark.django_db(transaction=True)

README = Path(settings.BASE_DIR) / "README.md"
FENCE = re.compile(r"^```(\w*)\n(.*?)^```", re.S | re.M)
# What the README's comments promise a snippet prints: (a line of the snippet, the output).
PROMISED = [
    ("first = mnemo.log_batch(items)", "2 2"),
    ("AKIAIOSFODNN7EXAMPLE", "422 secret_detected aws_access_key"),
    ("AKIAIOSFODNN7EXAMPLE", "{'error': {'code': 'not_found', 'message': 'Memory 1000000000 not found.'"),
    ("mnemo batch ops.jsonl", "created 2, duplicate 0, rejected 0\ncreated 0, duplicate 2, rejected 0"),
    ("mnemo.context(", "Ana prefers tea over coffee."),
    ("mnemo recall", "eu-west-3"),
    ("iterate(\"gaps\")", "book a meeting room 1"),
    ("streamable_http_client(", "15 tools"),
]


def section(text: str, title: str) -> str:
    start = text.index(f"\n## {title}\n")
    end = text.find("\n## ", start + 1)
    return text[start:end if end != -1 else None]


def snippets() -> list[tuple[str, str, str]]:
    """(language, code, subsection) for each fenced block of the section."""
    found, subsection = [], ""
    text = section(README.read_text(), "Connect an agent")
    position = 0
    for match in FENCE.finditer(text):
        headings = re.findall(r"^### (.+)$", text[position:match.start()], re.M)
        subsection = headings[-1] if headings else subsection
        position = match.end()
        found.append((match.group(1), match.group(2), subsection))
    return found


def test_the_section_holds_python_and_sh_snippets_and_an_mcp_placeholder():
    blocks = snippets()
    assert sum(lang == "python" for lang, _, _ in blocks) >= 4
    assert sum(lang == "sh" for lang, _, _ in blocks) >= 2
    assert all(lang in ("python", "sh") for lang, _, where in blocks if where != "MCP"), blocks
    assert "\n### MCP\n" in section(README.read_text(), "Connect an agent")


def test_every_snippet_runs_against_a_live_server(server, key, tmp_path, eager_tasks):
    env = {k: v for k, v in os.environ.items() if not k.startswith("MNEMO_")}
    env.update(MNEMO_URL=server, MNEMO_API_KEY=key, PATH=f"{Path(sys.executable).parent}:{env.get('PATH', '')}")
    outputs = []
    for lang, code, _ in (block for block in snippets() if block[0] in ("python", "sh")):
        command = [sys.executable, "-c", code] if lang == "python" else ["bash", "-e", "-o", "pipefail", "-c", code]
        done = subprocess.run(command, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)
        assert done.returncode == 0, f"{lang} snippet failed:\n{code}\n--- stderr:\n{done.stderr}"
        assert "Traceback" not in done.stderr, done.stderr
        outputs.append((code, done.stdout))
    for line, output in PROMISED:
        assert any(line in code and output in printed for code, printed in outputs), (line, output)


def test_the_mcp_client_configuration_starts_a_working_stdio_server(server, key):
    import asyncio
    import json

    from mcp import Client
    from mcp.client.stdio import StdioServerParameters

    [config] = [json.loads(code) for lang, code, where in snippets() if lang == "json" and where == "MCP"]
    entry = config["mcpServers"]["mnemo"]
    env = {k: v for k, v in os.environ.items() if not k.startswith("MNEMO_")}
    env.update(entry["env"], MNEMO_URL=server, MNEMO_API_KEY=key,
               PATH=f"{Path(sys.executable).parent}:{env.get('PATH', '')}")
    params = StdioServerParameters(command=entry["command"], args=entry["args"], env=env)

    async def tools():
        async with Client(params) as client:
            return await client.list_tools()

    assert "recall" in {tool.name for tool in asyncio.run(tools()).tools}
