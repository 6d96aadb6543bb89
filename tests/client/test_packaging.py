"""mnemo-client as an agent installs it: a wheel that depends on httpx and pydantic only
(the MCP SDK as an extra), ships the `mnemo` command, and imports nothing of the server."""

from __future__ import annotations

import shutil
import subprocess
import sys
import zipfile
from email.parser import Parser
from pathlib import Path

from django.conf import settings

CLIENT = Path(settings.BASE_DIR) / "clients" / "python"


def test_the_wheel_depends_on_httpx_and_pydantic_only(tmp_path):
    # Built from a copy: a build writes build/ and egg-info beside the sources.
    source = tmp_path / "source"
    shutil.copytree(CLIENT, source, ignore=shutil.ignore_patterns("build", "*.egg-info", "__pycache__"))
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q", "-w",
                    str(tmp_path), str(source)], check=True, capture_output=True, timeout=300)
    [wheel] = tmp_path.glob("mnemo_client-*.whl")
    with zipfile.ZipFile(wheel) as archive:
        names = archive.namelist()
        metadata = Parser().parsestr(archive.read(next(n for n in names if n.endswith("METADATA"))).decode())
        entry_points = archive.read(next(n for n in names if n.endswith("entry_points.txt"))).decode()
    requires = metadata.get_all("Requires-Dist")
    plain = sorted(r.split(">")[0].split("<")[0] for r in requires if "extra ==" not in r)
    assert plain == ["httpx", "pydantic"], requires
    assert [r for r in requires if "extra ==" in r and r.startswith("mcp")], requires
    assert "mnemo = mnemo_client.cli:main" in entry_points
    assert {n.split("/")[0] for n in names if not n.startswith("mnemo_client-")} == {"mnemo_client"}
    assert "mnemo_client/py.typed" in names


def test_the_client_imports_nothing_of_the_server():
    probe = ("import sys, mnemo_client, mnemo_client.cli; "
             "server = {'django', 'ninja', 'mnemo', 'core', 'celery'} & {m.split('.')[0] for m in sys.modules}; "
             "sys.exit(', '.join(sorted(server)) or None)")
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, cwd="/", timeout=120)
    assert done.returncode == 0, done.stderr
