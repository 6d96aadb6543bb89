"""What the sync and the async client share, free of I/O: the operations they call, how a
call is built from arguments, when and how long to wait before a retry, and how an answer
becomes a model or an exception. The two clients differ only in how they send and sleep."""

from __future__ import annotations

import os
import random
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any
from urllib.parse import quote

import httpx
from pydantic import BaseModel, TypeAdapter, ValidationError

from mnemo_client import models as m
from mnemo_client.errors import (
    ConnectionFailed,
    InvalidRequest,
    UnexpectedResponse,
    error_from_response,
    retry_after_seconds,
)

DEFAULT_URL = "http://127.0.0.1:8000"
API_PREFIX = "/api/v1"
# The server's hard limits (README: /interactions/batch takes up to 1,000 items; pages up
# to 200 rows, settings.NINJA_PAGINATION_MAX_LIMIT).
MAX_BATCH = 1000
MAX_PAGE = 200
VERSION = "0.1.0"


@dataclass(frozen=True)
class Operation:
    """One API operation: method, path template, request model, response type. The tests
    check each against the server's OpenAPI document."""

    method: str
    path: str
    body: type[BaseModel] | None = None
    out: Any = None
    # Whether sending it twice is harmless, so a broken connection may be retried. None:
    # decided per call (logging is idempotent when every item has an external id).
    idempotent: bool | None = None

    @cached_property
    def adapter(self) -> TypeAdapter:
        return TypeAdapter(self.out)


def _op(method: str, path: str, body=None, out=None, idempotent=None) -> Operation:
    """An operation whose repeatability is known: reads and PUTs are, unless said."""
    return Operation(method, path, body, out, method in ("GET", "PUT") if idempotent is None else idempotent)


HEALTH = _op("GET", "/health", out=m.HealthOut)
STATUS = _op("GET", "/status", out=m.StatusOut)
LOG = Operation("POST", "/interactions", m.InteractionIn, m.InteractionResultOut)
LOG_BATCH = Operation("POST", "/interactions/batch", m.InteractionBatchIn, m.InteractionBatchOut)
LIST_INTERACTIONS = _op("GET", "/interactions", out=m.InteractionPage)
GET_INTERACTION = _op("GET", "/interactions/{interaction_id}", out=m.InteractionOut)
RECALL = _op("POST", "/recall", m.RecallIn, m.RecallOut, idempotent=True)
CONTEXT = _op("POST", "/context", m.ContextIn, m.PackOut, idempotent=True)
GET_PACK = _op("GET", "/packs/{pack_id}", out=m.PackOut)
REMEMBER = _op("POST", "/memories", m.MemoryIn, m.StoredOut)
LIST_MEMORIES = _op("GET", "/memories", out=m.MemoryPage)
GET_MEMORY = _op("GET", "/memories/{memory_id}", out=m.MemoryDetailOut)
LIST_ENTITIES = _op("GET", "/entities", out=m.PagedEntityOut)
GET_ENTITY = _op("GET", "/entities/{entity_id}", out=m.EntityDetailOut)
RECORD_DECISION = _op("POST", "/decisions", m.DecisionIn, m.DecisionRecordedOut)
DECISION_OUTCOME = _op("POST", "/decisions/{decision_id}/outcome", m.DecisionOutcomeIn, m.DecisionOut)
GET_DECISION = _op("GET", "/decisions/{decision_id}", out=m.DecisionDetailOut)
LIST_DECISIONS = _op("GET", "/decisions", out=m.PagedDecisionOut)
CHECK_CENSORS = _op("POST", "/censors/check", m.ActionIn, m.CensorCheckOut)
MATCH_PROCEDURES = _op("POST", "/procedures/match", m.TaskIn, list[m.ProcedureMatchOut])
GET_WORKING_MEMORY = _op("GET", "/working-memory/{session}", out=m.WorkingMemoryOut)
PUT_WORKING_MEMORY = _op("PUT", "/working-memory/{session}", m.WorkingMemoryIn, m.WorkingMemoryOut)
GET_SCRATCHPAD = _op("GET", "/scratchpads/{task}", out=m.ScratchpadOut)
PUT_SCRATCHPAD = _op("PUT", "/scratchpads/{task}", out=m.ScratchpadOut)
CHECKPOINT = _op("POST", "/scratchpads/{task}/checkpoints", m.CheckpointIn, m.CheckpointOut)
RESTORE = _op("POST", "/scratchpads/{task}/restore", m.RestoreIn, m.ScratchpadOut)
REPORT_GAP = _op("POST", "/gaps", m.GapIn, m.GapOut)
LIST_GAPS = _op("GET", "/gaps", out=m.GapPage)
REBUILD = _op("POST", "/rebuild", m.RebuildIn, m.RebuildOut)
GET_REBUILD = _op("GET", "/rebuild/{job_id}", out=m.RebuildOut)
EXPORT = _op("POST", "/export", out=m.ExportStartedOut)
GET_EXPORT = _op("GET", "/export/{job_id}", out=m.ArchiveJobOut)
GET_IMPORT = _op("GET", "/import/{job_id}", out=m.ArchiveJobOut)
RESUME_IMPORT = _op("POST", "/import/{job_id}/resume", out=m.ArchiveJobOut)

# Every operation above; tests/client/test_schema_drift.py checks each against the API.
OPERATIONS = tuple(value for value in dict(globals()).values() if isinstance(value, Operation))


@dataclass
class Call:
    """One request, ready to send (and to send again)."""

    op: Operation
    path: str
    params: dict[str, Any] | None = None
    json: Any = None
    content: bytes | None = None
    idempotent: bool = False

    def request(self, http: httpx.Client | httpx.AsyncClient) -> httpx.Request:
        if self.content is not None:
            return http.build_request(self.op.method, self.path, params=self.params, content=self.content,
                                      headers={"Content-Type": "application/json"})
        return http.build_request(self.op.method, self.path, params=self.params, json=self.json)


def call(op: Operation, *, path: dict[str, Any] | None = None, params: dict[str, Any] | None = None,
         body: dict[str, Any] | None = None, json: Any = None, content: bytes | None = None,
         idempotent: bool | None = None) -> Call:
    """A call of `op`. `body` holds the request model's fields (None means "not given", so
    the server's default applies); they are checked against the model before sending."""
    for name, value in (path or {}).items():
        # Servers decode %2F before routing (WSGI hands over the decoded path), so a slash
        # inside a name can never reach the right endpoint.
        if "/" in str(value):
            raise _refused([{"loc": [name], "msg": "cannot contain '/'", "type": "value_error"}])
    url = op.path.format(**{k: quote(str(v), safe="") for k, v in (path or {}).items()})
    if body is not None:
        json = dump(op.body, body)
    query = {k: v for k, v in (params or {}).items() if v is not None}
    return Call(op, url, query or None, json, content, op.idempotent if idempotent is None else idempotent)


def dump(model: type[BaseModel], values: dict[str, Any] | BaseModel) -> dict[str, Any]:
    """The request body: the given fields only, validated by the model (InvalidRequest, as
    the server would answer, when they do not fit it)."""
    if isinstance(values, model):
        return values.model_dump(mode="json", exclude_unset=True)
    try:
        instance = model.model_validate({k: v for k, v in values.items() if v is not None})
    except ValidationError as exc:
        raise _refused([{"loc": list(err["loc"]), "msg": err["msg"], "type": err["type"]}
                        for err in exc.errors()]) from None
    return instance.model_dump(mode="json", exclude_unset=True)


def _refused(errors: list[dict[str, Any]]) -> InvalidRequest:
    """A request refused here, in the shape of the server's 422 (status None: not sent)."""
    fields = ", ".join(".".join(str(p) for p in err["loc"]) or "body" for err in errors)
    return InvalidRequest(status=None, code="validation_error",
                          message=f"The request did not validate (checked before sending): {fields}.",
                          details={"errors": errors})


def parse(c: Call, response: httpx.Response) -> Any:
    """The answer as the operation's model, or the exception its error envelope names."""
    if response.status_code >= 400:
        raise error_from_response(response)
    if c.op.out is None:
        return None
    try:
        data = response.json()
    except ValueError:
        raise UnexpectedResponse(f"{c.op.method} {c.path} answered {response.status_code} without JSON",
                                 status=response.status_code, body=response.text[:2000]) from None
    try:
        return c.op.adapter.validate_python(data)
    except ValidationError as exc:
        raise UnexpectedResponse(f"{c.op.method} {c.path} answered a body this client cannot read: {exc}",
                                 status=response.status_code, body=response.text[:2000]) from exc


@dataclass(frozen=True)
class RetryPolicy:
    """Retries of 429 (rate limited) and 503 (database busy, provider down when the server
    says retrying helps), and of connection failures: always when the request never left
    (connect errors), otherwise only for idempotent calls. The wait is the server's
    Retry-After when it sends one (up to `max_retry_after`; a longer wait is raised as the
    error at once), else exponential backoff with jitter."""

    max_retries: int = 3
    backoff: float = 0.5
    max_backoff: float = 8.0
    max_retry_after: float = 60.0

    def _wait(self, attempt: int, retry_after: float | None) -> float | None:
        if attempt >= self.max_retries:
            return None
        if retry_after is not None:
            return retry_after if retry_after <= self.max_retry_after else None
        ceiling = min(self.max_backoff, self.backoff * 2 ** attempt)
        return ceiling / 2 + random.uniform(0, ceiling / 2)

    def after_response(self, attempt: int, response: httpx.Response) -> float | None:
        """Seconds to wait before sending again, or None to take the answer as it is."""
        if response.status_code == 429:
            return self._wait(attempt, retry_after_seconds(response))
        if response.status_code == 503:
            try:
                retryable = response.json()["error"]["details"].get("retryable", True)
            except (ValueError, KeyError, TypeError, AttributeError):
                retryable = True
            return self._wait(attempt, retry_after_seconds(response)) if retryable is not False else None
        return None

    def after_error(self, attempt: int, error: httpx.TransportError, idempotent: bool) -> float | None:
        never_sent = isinstance(error, (httpx.ConnectError, httpx.ConnectTimeout))
        return self._wait(attempt, None) if never_sent or idempotent else None

    def next_wait(self, c: Call, attempt: int, outcome: httpx.Response | httpx.TransportError) -> float | None:
        """After one attempt (an answer, or the transport's error): seconds to wait before
        the next, or None when the answer is final. ConnectionFailed when the transport
        failed and may not, or may no longer, be retried."""
        if isinstance(outcome, httpx.Response):
            return self.after_response(attempt, outcome)
        wait = self.after_error(attempt, outcome, c.idempotent)
        if wait is None:
            raise ConnectionFailed(f"{c.op.method} {c.path}: {outcome!r}") from outcome
        return wait


def api_url(url: str | None) -> str:
    """The API's base URL from a site URL (`http://host:8000`, with or without `/api/v1`),
    $MNEMO_URL, or the address `make run` listens on."""
    base = (url or os.environ.get("MNEMO_URL") or DEFAULT_URL).rstrip("/")
    return (base if base.endswith(API_PREFIX) else base + API_PREFIX) + "/"


def headers(api_key: str | None) -> dict[str, str]:
    key = api_key if api_key is not None else os.environ.get("MNEMO_API_KEY")
    found = {"Accept": "application/json", "User-Agent": f"mnemo-client/{VERSION}"}
    if key:
        found["Authorization"] = f"Bearer {key}"
    return found


# --- batches and pages ------------------------------------------------------------------------

def _item_json(item: m.InteractionIn | dict[str, Any]) -> Any:
    # Dicts go as they are: the server judges each item on its own and rejects only the bad
    # ones, which validating here would turn into one error for the whole batch.
    return item.model_dump(mode="json", exclude_unset=True) if isinstance(item, BaseModel) else item


def batch_calls(items: Iterable[m.InteractionIn | dict[str, Any]], chunk_size: int) -> Iterator[tuple[int, Call]]:
    """(index of the chunk's first item, its call) for each chunk of up to `chunk_size`.
    A chunk whose items all carry an external id is idempotent: resending it after a broken
    connection answers `duplicate` for what was already stored."""
    if not 1 <= chunk_size <= MAX_BATCH:
        raise ValueError(f"chunk_size must be 1 to {MAX_BATCH}")
    chunk: list[Any] = []
    start = 0
    for item in items:
        chunk.append(_item_json(item))
        if len(chunk) == chunk_size:
            yield start, _batch_call(chunk)
            start, chunk = start + len(chunk), []
    if chunk:
        yield start, _batch_call(chunk)


def _batch_call(chunk: list[Any]) -> Call:
    keyed = all(isinstance(item, dict) and item.get("external_id") for item in chunk)
    return call(LOG_BATCH, json={"items": chunk}, idempotent=keyed)


@dataclass
class BatchTotals:
    """The results of a batch sent in chunks, as if it had been one (indexes run on)."""

    created: int = 0
    duplicate: int = 0
    rejected: int = 0
    results: list[m.InteractionResultOut] = field(default_factory=list)

    def add(self, start: int, answer: m.InteractionBatchOut) -> None:
        self.created += answer.created
        self.duplicate += answer.duplicate
        self.rejected += answer.rejected
        self.results.extend(r.model_copy(update={"index": start + r.index}) for r in answer.results)

    def out(self) -> m.InteractionBatchOut:
        return m.InteractionBatchOut(created=self.created, duplicate=self.duplicate, rejected=self.rejected,
                                     results=self.results)


@dataclass
class Pager:
    """Offset paging over a newest-first list. A row written meanwhile pushes older rows
    down a place, so the next page may start with rows already seen: they are skipped."""

    op: Operation
    params: dict[str, Any]
    page_size: int
    offset: int = 0
    seen: set[int] = field(default_factory=set)
    done: bool = False

    def __post_init__(self) -> None:
        if not 1 <= self.page_size <= MAX_PAGE:
            raise ValueError(f"page_size must be 1 to {MAX_PAGE}")

    def next_call(self) -> Call:
        return call(self.op, params={**self.params, "limit": self.page_size, "offset": self.offset})

    def take(self, page: Any) -> list[Any]:
        fresh = [item for item in page.items if item.id not in self.seen]
        self.seen = {item.id for item in page.items}
        self.offset += len(page.items)
        self.done = not page.items or self.offset >= page.count
        return fresh
