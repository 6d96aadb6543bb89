"""Registries other apps fill from their AppConfig.ready(), so core can report on work
it does not own without reaching into other apps' tables.

- pending work: "<kind of work>" -> count of items still waiting for background
  processing in a workspace (GET /api/v1/status; every count 0 = all processing done).
- workspace counts: "<label>" -> number shown on the dashboard home page.
"""

from __future__ import annotations

from collections.abc import Callable

from core.models import Workspace

Counter = Callable[[Workspace], int]

_pending: dict[str, Counter] = {}
_counts: dict[str, Counter] = {}


def register_pending(kind: str, counter: Counter) -> None:
    _pending[kind] = counter


def register_count(label: str, counter: Counter) -> None:
    _counts[label] = counter


def pending_counts(workspace: Workspace) -> dict[str, int]:
    return {kind: int(counter(workspace)) for kind, counter in sorted(_pending.items())}


def workspace_counts(workspace: Workspace) -> dict[str, int]:
    return {label: int(counter(workspace)) for label, counter in _counts.items()}
