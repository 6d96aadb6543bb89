"""`Mnemo` (sync) and `AsyncMnemo` (async): the same methods with the same arguments; on
AsyncMnemo each is awaited (and the iterators are async iterators).

Each method is written once, in `_Endpoints`, as the call it makes; the two clients only
send calls (`_call`), the sync one with httpx.Client and time.sleep between retries, the
async one with httpx.AsyncClient and asyncio.sleep. Batches and pages, which make several
calls, are the only methods written twice, around the same pure helpers in `_core`."""

from __future__ import annotations

import asyncio
import itertools
import time
from collections.abc import AsyncIterator, Callable, Iterable, Iterator
from datetime import datetime
from typing import Any

import httpx

from mnemo_client import _core as c
from mnemo_client import models as m

Progress = Callable[[m.InteractionBatchOut], None]


class _Endpoints:
    """The API's operations. On AsyncMnemo each returns an awaitable of the same result."""

    def _call(self, call: c.Call) -> Any:
        raise NotImplementedError

    # --- service ----------------------------------------------------------------------

    def health(self) -> m.HealthOut:
        """Liveness: the server answers (no key needed)."""
        return self._call(c.call(c.HEALTH))

    def status(self) -> m.StatusOut:
        """Background work pending in the key's workspace; `idle` when all is processed."""
        return self._call(c.call(c.STATUS))

    # --- interactions -----------------------------------------------------------------

    def log(self, content: str, *, channel: str, channel_id: str, external_id: str | None = None,
            sender_name: str | None = None, sender_kind: str | None = None, thread: str | None = None,
            direction: str | None = None, occurred_at: datetime | str | None = None,
            metadata: dict[str, Any] | None = None) -> m.InteractionResultOut:
        """Log one message. With `external_id`, logging it again answers `duplicate` with
        the first id (and a broken connection is retried safely)."""
        body = {"content": content, "channel": channel, "channel_id": channel_id, "external_id": external_id,
                "sender_name": sender_name, "sender_kind": sender_kind, "thread": thread, "direction": direction,
                "occurred_at": occurred_at, "metadata": metadata}
        return self._call(c.call(c.LOG, body=body, idempotent=bool(external_id)))

    def list_interactions(self, *, entity: int | None = None, channel: str | None = None,
                          conversation: int | None = None, since: datetime | str | None = None,
                          until: datetime | str | None = None, q: str | None = None, redact: bool | None = None,
                          limit: int | None = None, offset: int | None = None) -> m.InteractionPage:
        """One page, newest first; `q` is full text (web-search syntax)."""
        return self._call(c.call(c.LIST_INTERACTIONS, params=_query(locals())))

    def get_interaction(self, interaction_id: int, *, redact: bool | None = None) -> m.InteractionOut:
        return self._call(c.call(c.GET_INTERACTION, path={"interaction_id": interaction_id},
                                 params={"redact": redact}))

    # --- recall and context packs -----------------------------------------------------

    def recall(self, query: str, *, types: list[str] | None = None, entity: int | None = None,
               conversation: int | None = None, channel: str | None = None, agent: int | None = None,
               metadata: dict[str, Any] | None = None, limit: int | None = None,
               min_confidence: float | None = None, include_candidates: bool | None = None,
               include_archived: bool | None = None, recency_weight: float | None = None, as_of: datetime | str | None = None,
               redact: bool | None = None) -> m.RecallOut:
        """Search every kind of memory; each result names its source interactions."""
        return self._call(c.call(c.RECALL, body=_fields(locals())))

    def context(self, query: str, *, budget_tokens: int | None = None, budgets: dict[str, float] | None = None,
                session: str | None = None, types: list[str] | None = None, entity: int | None = None,
                conversation: int | None = None, channel: str | None = None, agent: int | None = None,
                metadata: dict[str, Any] | None = None, limit: int | None = None,
                min_confidence: float | None = None, include_candidates: bool | None = None,
                include_archived: bool | None = None, recency_weight: float | None = None, as_of: datetime | str | None = None,
                redact: bool | None = None) -> m.PackOut:
        """A token-budgeted context pack: `text` is ready to paste, `pack_id` finds it again."""
        return self._call(c.call(c.CONTEXT, body=_fields(locals())))

    def get_pack(self, pack_id: str) -> m.PackOut:
        """A served pack as logged: what was included, what was dropped and why."""
        return self._call(c.call(c.GET_PACK, path={"pack_id": pack_id}))

    # --- memories ---------------------------------------------------------------------

    def remember(self, text: str = "", *, type: str | None = None, certainty: str | None = None,
                 confidence: float | None = None, importance: float | None = None, entity: int | None = None,
                 interaction: int | None = None, quote: str | None = None, attribute: str | None = None,
                 value: str | None = None, polarity: int | None = None, occurred_at: datetime | str | None = None,
                 procedure: dict[str, Any] | m.ProcedureIn | None = None,
                 censor: dict[str, Any] | m.CensorIn | None = None, outcome: str | None = None) -> m.StoredOut:
        """Store a memory: `outcome` is created, reinforced (the same thing again) or
        conflict (a candidate proposing to supersede what it contradicts)."""
        return self._call(c.call(c.REMEMBER, body=_fields(locals())))

    def list_memories(self, *, type: str | None = None, status: str | None = None, entity: int | None = None,
                      certainty: str | None = None, min_confidence: float | None = None,
                      max_confidence: float | None = None, text: str | None = None, rule: str | None = None,
                      interaction: int | None = None, redact: bool | None = None, limit: int | None = None,
                      offset: int | None = None) -> m.MemoryPage:
        return self._call(c.call(c.LIST_MEMORIES, params=_query(locals())))

    def get_memory(self, memory_id: int, *, redact: bool | None = None) -> m.MemoryDetailOut:
        """One memory with its evidence (the quoted spans of the interactions it came from)."""
        return self._call(c.call(c.GET_MEMORY, path={"memory_id": memory_id}, params={"redact": redact}))

    # --- entities ---------------------------------------------------------------------

    def search_entities(self, q: str | None = None, *, kind: str | None = None, status: str | None = None,
                        include_merged: bool | None = None, limit: int | None = None,
                        offset: int | None = None) -> m.PagedEntityOut:
        """Entities by name or alias (typo-tolerant), one page."""
        return self._call(c.call(c.LIST_ENTITIES, params=_query(locals())))

    def get_entity(self, entity_id: int) -> m.EntityDetailOut:
        """One entity with its channel identities and current profile."""
        return self._call(c.call(c.GET_ENTITY, path={"entity_id": entity_id}))

    # --- decisions --------------------------------------------------------------------

    def record_decision(self, description: str, *, confidence: float, options: list[str] | None = None,
                        chosen: str | None = None) -> m.DecisionRecordedOut:
        """Record a decision; `similar` tells how the nearest earlier ones turned out."""
        return self._call(c.call(c.RECORD_DECISION, body=_fields(locals())))

    def record_outcome(self, decision_id: int, outcome: str, *, result: str | None = None) -> m.DecisionOut:
        """How the decision turned out (success, partial, failure); once (Conflict after)."""
        return self._call(c.call(c.DECISION_OUTCOME, path={"decision_id": decision_id},
                                 body={"outcome": outcome, "result": result}))

    def get_decision(self, decision_id: int) -> m.DecisionDetailOut:
        return self._call(c.call(c.GET_DECISION, path={"decision_id": decision_id}))

    def list_decisions(self, *, outcome: str | None = None, limit: int | None = None,
                       offset: int | None = None) -> m.PagedDecisionOut:
        return self._call(c.call(c.LIST_DECISIONS, params=_query(locals())))

    # --- censors and procedures -------------------------------------------------------

    def check_censors(self, action: str) -> m.CensorCheckOut:
        """Before acting: `verdict` allow, warn or block, with the censors that matched."""
        return self._call(c.call(c.CHECK_CENSORS, body={"action": action}))

    def match_procedures(self, task: str, *, limit: int | None = None) -> list[m.ProcedureMatchOut]:
        """Procedures that fit a task, best first."""
        return self._call(c.call(c.MATCH_PROCEDURES, body={"task": task, "limit": limit}))

    # --- working memory and scratchpads -----------------------------------------------

    def get_working_memory(self, session: str) -> m.WorkingMemoryOut:
        return self._call(c.call(c.GET_WORKING_MEMORY, path={"session": session}))

    def set_working_memory(self, session: str, items: list[dict[str, Any] | m.FocusItemIn], *,
                           capacity: int | None = None, task: str | None = None) -> m.WorkingMemoryOut:
        """Replace a session's focus; what does not fit is evicted to long-term memory."""
        return self._call(c.call(c.PUT_WORKING_MEMORY, path={"session": session},
                                 body={"items": items, "capacity": capacity, "task": task}))

    def get_scratchpad(self, task: str) -> m.ScratchpadOut:
        return self._call(c.call(c.GET_SCRATCHPAD, path={"task": task}))

    def put_scratchpad(self, task: str, state: Any, *, expected_version: int | None = None) -> m.ScratchpadOut:
        """Store a task's state (any JSON value, kept exactly). With `expected_version`, a
        write based on an older version raises Conflict."""
        return self._call(c.call(c.PUT_SCRATCHPAD, path={"task": task}, json=state,
                                 params={"expected_version": expected_version}))

    def checkpoint_scratchpad(self, task: str, *, label: str | None = None) -> m.CheckpointOut:
        return self._call(c.call(c.CHECKPOINT, path={"task": task}, body={"label": label}))

    def restore_scratchpad(self, task: str, *, checkpoint_id: int | None = None,
                           label: str | None = None) -> m.ScratchpadOut:
        """Go back to a checkpoint, named by id or by label."""
        return self._call(c.call(c.RESTORE, path={"task": task},
                                 body={"checkpoint_id": checkpoint_id, "label": label}))

    # --- capability gaps --------------------------------------------------------------

    def report_gap(self, description: str, *, category: str | None = None, reason: str | None = None,
                   interaction_id: int | None = None) -> m.GapOut:
        """"I lacked a tool for X": the same need reported again raises its frequency."""
        return self._call(c.call(c.REPORT_GAP, body=_fields(locals())))

    def list_gaps(self, *, status: str | None = None, category: str | None = None, q: str | None = None,
                  redact: bool | None = None, limit: int | None = None, offset: int | None = None) -> m.GapPage:
        """Capability gaps, most frequent first."""
        return self._call(c.call(c.LIST_GAPS, params=_query(locals())))

    # --- administration (an admin key) -------------------------------------------------

    def rebuild(self, layers: list[str] | None = None) -> m.RebuildOut:
        """Re-derive the workspace's layers from its interaction log, in the background
        (every layer that can be, or those named); follow it with get_rebuild. A failed
        rebuild is resumed; one queued or running is a Conflict."""
        return self._call(c.call(c.REBUILD, body={"layers": layers}))

    def get_rebuild(self, rebuild_id: str) -> m.RebuildOut:
        """A rebuild's status, phase, interactions done of total, and what it forgot."""
        return self._call(c.call(c.GET_REBUILD, path={"job_id": rebuild_id}))

    def export_workspace(self) -> m.ExportStartedOut:
        """Export the workspace to an archive in the background; `download_url` works once."""
        return self._call(c.call(c.EXPORT))

    def get_export(self, job_id: str) -> m.ArchiveJobOut:
        return self._call(c.call(c.GET_EXPORT, path={"job_id": job_id}))

    def get_import(self, job_id: str) -> m.ArchiveJobOut:
        """An import's state (answered while the workspace is hidden by the import)."""
        return self._call(c.call(c.GET_IMPORT, path={"job_id": job_id}))

    def resume_import(self, job_id: str) -> m.ArchiveJobOut:
        """Carry on an import whose worker stopped (beat does it too for a killed one); a
        Conflict while it runs, once it finished, or when nothing is left to resume."""
        return self._call(c.call(c.RESUME_IMPORT, path={"job_id": job_id}))


def _fields(arguments: dict[str, Any]) -> dict[str, Any]:
    """A method's arguments as request fields (`self` aside)."""
    return {k: v for k, v in arguments.items() if k != "self"}


def _query(arguments: dict[str, Any]) -> dict[str, Any]:
    """Query parameters: datetimes as ISO 8601 (httpx would send str())."""
    return {k: v.isoformat() if isinstance(v, datetime) else v for k, v in _fields(arguments).items()}


_PAGED = {"interactions": c.LIST_INTERACTIONS, "memories": c.LIST_MEMORIES, "entities": c.LIST_ENTITIES,
          "decisions": c.LIST_DECISIONS, "gaps": c.LIST_GAPS}


def _pager(what: str, page_size: int, filters: dict[str, Any]) -> c.Pager:
    if what not in _PAGED:
        raise ValueError(f"cannot iterate {what!r}: one of {', '.join(_PAGED)}")
    return c.Pager(_PAGED[what], _query(filters), page_size)


class Mnemo(_Endpoints):
    """The sync client. `url` defaults to $MNEMO_URL (else http://127.0.0.1:8000) and
    `api_key` to $MNEMO_API_KEY. Use it as a context manager, or call close()."""

    def __init__(self, url: str | None = None, api_key: str | None = None, *, timeout: float = 30.0,
                 retry: c.RetryPolicy = c.RetryPolicy(), transport: httpx.BaseTransport | None = None):
        self.retry = retry
        self._http = httpx.Client(base_url=c.api_url(url), headers=c.headers(api_key), timeout=timeout,
                                  transport=transport)
        self._sleep = time.sleep

    @property
    def url(self) -> str:
        return str(self._http.base_url)

    def __enter__(self) -> Mnemo:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        self._http.close()

    def _call(self, call: c.Call) -> Any:
        for attempt in itertools.count():
            try:
                outcome = self._http.send(call.request(self._http))
            except httpx.TransportError as exc:
                outcome = exc
            wait = self.retry.next_wait(call, attempt, outcome)
            if wait is None:
                return c.parse(call, outcome)
            self._sleep(wait)

    def log_batch(self, items: Iterable[m.InteractionIn | dict[str, Any]], *, chunk_size: int = c.MAX_BATCH,
                  on_progress: Progress | None = None) -> m.InteractionBatchOut:
        """Log many interactions, in chunks of up to 1,000. Results come in input order
        with the input's indexes; give every item an `external_id` and the whole batch can
        be sent again safely (what was stored answers `duplicate`). `on_progress` gets the
        totals so far after each chunk."""
        totals = c.BatchTotals()
        for start, call in c.batch_calls(items, chunk_size):
            totals.add(start, self._call(call))
            if on_progress:
                on_progress(totals.out())
        return totals.out()

    def iterate(self, what: str, *, page_size: int = c.MAX_PAGE, **filters: Any) -> Iterator[Any]:
        """Every row of a list ("interactions", "memories", "entities", "decisions", "gaps"),
        fetched a page at a time; `filters` are the list method's."""
        pager = _pager(what, page_size, filters)
        while not pager.done:
            yield from pager.take(self._call(pager.next_call()))


class AsyncMnemo(_Endpoints):
    """The async client: Mnemo's methods, awaited. `async with AsyncMnemo() as mnemo:`."""

    def __init__(self, url: str | None = None, api_key: str | None = None, *, timeout: float = 30.0,
                 retry: c.RetryPolicy = c.RetryPolicy(), transport: httpx.AsyncBaseTransport | None = None):
        self.retry = retry
        self._http = httpx.AsyncClient(base_url=c.api_url(url), headers=c.headers(api_key), timeout=timeout,
                                       transport=transport)
        self._sleep = asyncio.sleep

    @property
    def url(self) -> str:
        return str(self._http.base_url)

    async def __aenter__(self) -> AsyncMnemo:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        await self._http.aclose()

    async def _call(self, call: c.Call) -> Any:
        for attempt in itertools.count():
            try:
                outcome = await self._http.send(call.request(self._http))
            except httpx.TransportError as exc:
                outcome = exc
            wait = self.retry.next_wait(call, attempt, outcome)
            if wait is None:
                return c.parse(call, outcome)
            await self._sleep(wait)

    async def log_batch(self, items: Iterable[m.InteractionIn | dict[str, Any]], *,
                        chunk_size: int = c.MAX_BATCH, on_progress: Progress | None = None) -> m.InteractionBatchOut:
        """Mnemo.log_batch, awaited."""
        totals = c.BatchTotals()
        for start, call in c.batch_calls(items, chunk_size):
            totals.add(start, await self._call(call))
            if on_progress:
                on_progress(totals.out())
        return totals.out()

    async def iterate(self, what: str, *, page_size: int = c.MAX_PAGE, **filters: Any) -> AsyncIterator[Any]:
        """Mnemo.iterate as an async iterator: `async for memory in mnemo.iterate("memories")`."""
        pager = _pager(what, page_size, filters)
        while not pager.done:
            for item in pager.take(await self._call(pager.next_call())):
                yield item
