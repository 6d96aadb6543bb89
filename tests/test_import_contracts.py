"""The import contracts of issue 17 (pyproject.toml, [tool.importlinter]), checked by
import-linter as `make test` runs: the apps form layers with no import cycle between them
(imports inside functions included), pure modules import no Django, the apps read each
other only through services, selectors and search modules (never another app's models),
review imports no owner app, provider SDKs stay behind core.providers."""

from __future__ import annotations

import subprocess
import sys
import textwrap
import tomllib
from pathlib import Path

import grimp

ROOT = Path(__file__).resolve().parents[1]
LINT_IMPORTS = Path(sys.executable).parent / "lint-imports"
# The layering the team agreed (a higher one may import a lower one, never the reverse);
# webhooks (issue 18) sits under every app that announces an event.
LAYERS = ["mnemo", "context", "gaps", "memory", "conversations", "entities", "review", "webhooks", "core"]


def _contracts() -> dict[str, dict]:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["importlinter"]
    return {contract["id"]: contract for contract in config["contracts"]}


def test_the_apps_are_layered_in_the_agreed_order():
    contracts = _contracts()
    assert contracts["layers"]["type"] == "layers" and contracts["layers"]["layers"] == LAYERS
    assert set(_contracts()["pure"]["forbidden_modules"]) >= {"django"}


def test_an_import_inside_a_function_counts(tmp_path):
    """What makes the layers contract mean "no cycle, counting imports inside functions":
    grimp, which import-linter builds its graph with, records an import in a function body
    as an import of the module."""
    package = tmp_path / "layered"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "high.py").write_text("VALUE = 1\n")
    (package / "low.py").write_text(textwrap.dedent("""\
        def reach_up():
            from layered import high  # hidden in a function

            return high.VALUE
        """))
    sys.path.insert(0, str(tmp_path))
    try:
        graph = grimp.build_graph("layered", cache_dir=None)
    finally:
        sys.path.remove(str(tmp_path))
    assert graph.direct_import_exists(importer="layered.low", imported="layered.high")


def test_the_import_contracts_hold():
    result = subprocess.run([str(LINT_IMPORTS), "--no-cache", "--no-logo"], cwd=ROOT, capture_output=True,
                            text=True, timeout=300)
    report = result.stdout + result.stderr
    assert "Contracts:" in report, report  # it ran and read the contracts
    # On failure import-linter names each broken contract and every import that breaks it
    # (module, imported module, line): the message below is that report.
    assert result.returncode == 0, "import contracts broken:\n" + report
