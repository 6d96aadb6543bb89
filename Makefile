# Mnemo: `make run` starts everything, `make test` runs the tests. Both create .venv first.
PYTHON ?= python3.11
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: run test install bench-api clean-var

$(STAMP): pyproject.toml clients/python/pyproject.toml
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	@# torch first and pinned: the machines' pip takes the local CPU wheel for 2.13.0,
	@# while anything unpinned would pull several GB of CUDA packages.
	$(BIN)/pip install --disable-pip-version-check -q "torch==2.13.0"
	$(BIN)/pip install --disable-pip-version-check -q -e ".[dev]"
	@# The Python client and the `mnemo` command (README "Connect an agent"); its tests
	@# run in `make test`. Its own step: a relative `file:` dependency in pyproject.toml
	@# would resolve against pip's working directory, not this file.
	$(BIN)/pip install --disable-pip-version-check -q -e clients/python
	@touch $(STAMP)

install: $(STAMP)

run: $(STAMP)
	$(BIN)/python -m mnemo.launcher

# The browser tests drive Debian's Chromium (Playwright cannot download browsers here).
CHROMIUM := /usr/bin/chromium
$(CHROMIUM):
	@echo "Installing Debian's chromium for the browser tests..."
	@if [ "$$(id -u)" = 0 ]; then SUDO=; else SUDO=sudo; fi; \
	$$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq chromium >/dev/null

# Two pytest-xdist processes (each with its own embedded PostgreSQL, live server and browser;
# the launcher tests in one xdist_group); TEST_WORKERS=0 runs one. The first two-process run
# (2026-11-26) reported 2,472 of 2,602 tests: the 131 schemathesis tests had one id under
# pytest 9.2, and the scheduler ran one of them. tests/conftest.py now gives them their own
# ids, makes xdist_group work again, and fails a run that reports fewer tests than it collected.
# Its first whole run after that reported all 2,602 (53 min 56 s at nice 19, load 7-12; a
# quiet run's time is not yet measured: bench/RESULTS.md, "`make test` time").
TEST_WORKERS ?= 2
test: $(STAMP) $(CHROMIUM)
	$(BIN)/python -m pytest -n $(TEST_WORKERS) --dist loadgroup

bench-api: $(STAMP)
	$(BIN)/python bench/api_overhead.py

# Deletes the local database, broker folder and secret key: a fresh first run.
clean-var:
	rm -rf var
