"""tests/collection_ids.py in a scratch run of two pytest-xdist processes (what `make test`
runs): two tests given one id — as schemathesis's items were under pytest 9.2 — get their own
back and all run; a run where one id still stands for two tests fails and names it, instead
of passing with a test never run."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

TESTS = """
def test_a():
    pass

def test_b():
    pass

def test_c():
    pass

def test_d():
    pass
"""

# Gives test_b test_a's id: before ours (tryfirst), which repairs it, or after it (a wrapper's
# second half runs after every hook), which the controller must catch.
SHARED_ID = """
import pytest
from _pytest.nodes import coerce_node_id

pytest_plugins = ["tests.collection_ids"]  # the hooks under test (this conftest is the scratch run's root)


def _share(items):
    first = next(i for i in items if i.name == "test_a")
    second = next(i for i in items if i.name == "test_b")
    second._id = coerce_node_id(first.nodeid)


@pytest.hookimpl({when})
def pytest_collection_modifyitems(items):
    {body}
"""


def _run(tmp_path: Path, when: str, body: str) -> subprocess.CompletedProcess:
    (tmp_path / "test_scratch.py").write_text(TESTS)
    (tmp_path / "conftest.py").write_text(SHARED_ID.replace("{when}", when).replace("{body}", body))
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    env.pop("PYTEST_XDIST_WORKER", None)
    return subprocess.run([sys.executable, "-m", "pytest", "-n", "2", "--dist", "loadgroup", "-p", "no:cacheprovider",
                           "-p", "no:django", "-q", "-rA", str(tmp_path)],
                          cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)


def test_two_tests_given_one_id_get_their_own_back_and_both_run(tmp_path):
    run = _run(tmp_path, "tryfirst=True", "_share(items)")
    assert run.returncode == 0, run.stdout + run.stderr
    assert "4 passed" in run.stdout
    assert "PASSED test_scratch.py::test_b" in run.stdout


def test_a_run_that_leaves_a_test_unreported_fails_and_names_it(tmp_path):
    run = _run(tmp_path, "hookwrapper=True", "yield\n    _share(items)")
    assert run.returncode == 1, run.stdout + run.stderr
    assert "never ran" in run.stdout
    assert "test_scratch.py::test_a" in run.stdout
