"""Test ids, and every collected test reported under pytest-xdist (hooks tests/conftest.py
takes from here)."""

from __future__ import annotations

from collections import Counter

import pytest

# --- test ids, and every collected test reported under pytest-xdist ----------------------------
#
# `make test` runs two pytest-xdist processes with --dist loadgroup. Its scheduler files each
# test under its id (a dict keyed by nodeid), so two tests with one id are one test to it: the
# second is never sent to a process, and nothing is reported about it. That is how the first
# two-process run lost 130 tests without a word: pytest 9.2 builds an item's id from its
# `originalname`, and schemathesis (4.32.5) gives all its items of tests/test_api_schema.py
# (one per API operation) the same originalname, so the 131 items had one id. And loadgroup
# keeps an xdist_group in one process by appending "@group" to the item's id through
# `item._nodeid`, which pytest 9.2 no longer has: the launcher tests' group was ignored.
# Both ids are set here, on pytest 9.2's NodeId; a repeated id stops the run at collection;
# and the controller fails a run that reports fewer tests than its processes collected.


def _name_id(item: pytest.Item):
    """The item's id as its name says: "test_x[GET /api/v1/...]" where pytest 9.2 made
    "test_x" (a plugin's item whose name carries its own parameters)."""
    from _pytest.nodes import coerce_node_id

    if item.parent is None or item.nodeid.endswith("::" + item.name):
        return None
    return coerce_node_id(f"{item.parent.nodeid}::{item.name}")


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(config, items):
    from _pytest.nodes import coerce_node_id

    for item in items:
        if (fixed := _name_id(item)) is not None:
            item._id = fixed
        if getattr(config.option, "loadgroup", False):  # set in each xdist process by --dist loadgroup
            groups = sorted({str(mark.args[0] if mark.args else mark.kwargs.get("name", "default"))
                             for mark in item.iter_markers("xdist_group")})
            suffix = "@" + "_".join(groups)
            if groups and not item.nodeid.endswith(suffix):
                item._id = coerce_node_id(item.nodeid + suffix)
    # In an xdist process an error here would reach the controller as an INTERNALERROR with
    # no message; there the controller names the repeated ids (_EveryTestReported).
    repeated = {nodeid: count for nodeid, count in Counter(item.nodeid for item in items).items() if count > 1}
    if repeated and not hasattr(config, "workerinput"):
        raise pytest.UsageError(f"{sum(repeated.values())} collected tests share {len(repeated)} ids, so pytest-xdist "
                                f"would run one of each and drop the others silently: {list(repeated.items())[:5]}")


class _EveryTestReported:
    """On the xdist controller: the ids the processes collected against the ids reported."""

    def __init__(self):
        self.collected: list[str] | None = None
        self.reported: set[str] = set()
        self.missing: list[str] = []

    @pytest.hookimpl(optionalhook=True)
    def pytest_xdist_node_collection_finished(self, node, ids):
        if self.collected is None:
            self.collected = list(ids)

    def pytest_runtest_logreport(self, report):
        self.reported.add(report.nodeid)

    def pytest_sessionfinish(self, session, exitstatus):
        # An interrupted run (Ctrl-C, -x, --maxfail) stops early on purpose.
        if self.collected is None or exitstatus not in (pytest.ExitCode.OK, pytest.ExitCode.TESTS_FAILED):
            return
        self.missing = [nodeid for nodeid in self.collected if nodeid not in self.reported]
        self.missing += sorted(nodeid for nodeid, count in Counter(self.collected).items() if count > 1)
        if self.missing:
            session.exitstatus = pytest.ExitCode.TESTS_FAILED

    def pytest_terminal_summary(self, terminalreporter):
        if self.missing:
            terminalreporter.write_sep("=", f"{len(self.collected)} tests collected, {len(self.reported)} reported: "
                                            f"{len(self.collected) - len(self.reported)} never ran", red=True)
            for nodeid in self.missing[:30]:
                terminalreporter.write_line(f"not run (or one id for several tests): {nodeid}")


def pytest_configure(config):
    if not hasattr(config, "workerinput"):  # the controller, or a run without xdist (then idle)
        config.pluginmanager.register(_EveryTestReported(), "every-test-reported")
