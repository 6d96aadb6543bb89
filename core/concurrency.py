"""Concurrent writers: the one lock order every writer follows, and the bounded retry of
the conflicts PostgreSQL may still raise (issue 16).

Lock order
==========
A transaction that takes more than one lock takes them in this order, and several rows of
one table in ascending id (`order_by("pk")` before `select_for_update`); it never takes a
lock of an earlier rank after one of a later rank:

1. The workspace's ingest lock (`lock_workspaces("ingest")`): logging interactions and
   erasing an entity.
2. Backlog rows (`InteractionBacklog`): the worker claims them with SKIP LOCKED, so
   claiming never waits, and leases them in a transaction of its own; it locks them
   again in the transaction that writes what it derived; erasure locks those of the
   erased interactions. A rebuild's `RebuildJob` row ranks here too: the rebuild takes
   the ingest lock, then its job row, then the memory lock (conversations.rebuild).
3. The workspace's memory lock (`lock_workspaces("memory")`): storing, folding and
   erasing memories. The worker takes it for the workspaces of the rows it re-locked
   before it runs the layers' `write` (`conversations.services.interactions_index`), so
   what they write is written under it.

No provider call (an LLM, the embedder) runs while any of these is held: the worker's
layers call them in `prepare`, between the claiming and the writing transaction
(core.layers).
4. Entities (`Entity` rows), then identities, profile values, relationships.
5. Conversations (`Conversation` rows), then the per-conversation episode lock.
6. Memories (`Memory` rows, then their procedure/censor rows).
7. Review claims (`Claim` rows; opening an item first takes the per-interaction claim
   lock, review.services), then review items (`ReviewItem` rows).
8. Audit rows (insert-only, never locked).

Rules that keep the order cheap to follow:

- A row that is locked to be updated, not deleted, is locked `FOR NO KEY UPDATE`
  (`select_for_update(no_key=True)`): it then does not block the `FOR KEY SHARE` lock that
  inserting a row referencing it takes (an interaction naming its conversation and
  sender, a memory naming the one it contradicts, any row naming its workspace). Those
  foreign-key locks were the hidden half of the deadlocks in issue 16.
- Workspace locks are advisory locks keyed by (class, workspace id): never a lock on the
  `Workspace` row, which every insert references.

Retrying
========
PostgreSQL may still abort a transaction as the victim of a deadlock (40P01) or a
serialization failure (40001): both are safe to retry from the start of the transaction.
`retry_on_conflict` does that around a service entry point — the function that owns the
transaction — a bounded number of times with jittered exponential backoff (tenacity).
Inside an outer atomic block it does not retry: the aborted transaction is the outer
one's, and only its owner can start it again. When the retries are spent the error
propagates; the API answers it 503 with Retry-After (mnemo/api.py), the worker retries the
task later."""

from __future__ import annotations

import functools
import logging

import psycopg.errors
from django.db import connection
from tenacity import Retrying, retry_if_exception, stop_after_attempt, wait_random_exponential

logger = logging.getLogger("mnemo.concurrency")

ATTEMPTS = 5  # the first try and four retries: a deadlock victim rarely loses twice
_RETRYABLE = (psycopg.errors.DeadlockDetected, psycopg.errors.SerializationFailure)


# The workspace-wide advisory locks, in their rank order (the module docstring). The keys
# are (class, workspace id) pairs, so workspaces never wait for each other.
_WORKSPACE_LOCKS = {
    "ingest": "SELECT pg_advisory_xact_lock(7001, %s)",
    "memory": "SELECT pg_advisory_xact_lock(hashtext('mnemo.memory'), %s)",
}


def lock_workspaces(*names: str, workspace_ids) -> None:
    """Take the named workspace locks (held until the transaction ends) in rank order, each
    over the workspaces in ascending id. Call inside a transaction."""
    unknown = set(names) - set(_WORKSPACE_LOCKS)
    if unknown:
        raise ValueError(f"unknown workspace locks: {sorted(unknown)}")
    with connection.cursor() as cursor:
        for name, statement in _WORKSPACE_LOCKS.items():
            if name in names:
                for workspace_id in sorted(set(workspace_ids)):
                    cursor.execute(statement, [workspace_id])


def is_retryable_conflict(exc: BaseException) -> bool:
    """A deadlock or serialization failure, raised by psycopg or wrapped by Django
    (django.db.OperationalError carries the psycopg error as its __cause__)."""
    seen = set()
    while exc is not None and id(exc) not in seen:
        if isinstance(exc, _RETRYABLE):
            return True
        seen.add(id(exc))
        exc = exc.__cause__
    return False


def _log_retry(state) -> None:
    logger.warning("retrying after a conflict", extra={
        "function": getattr(state.fn, "__qualname__", str(state.fn)), "attempt": state.attempt_number,
        "error": str(state.outcome.exception()).splitlines()[0],
    })


def retry_on_conflict(fn):
    """Decorate a service that owns its transaction (put it above @transaction.atomic)."""

    @functools.wraps(fn)
    def run(*args, **kwargs):
        if connection.in_atomic_block:
            return fn(*args, **kwargs)
        retrying = Retrying(
            stop=stop_after_attempt(ATTEMPTS),
            wait=wait_random_exponential(multiplier=0.05, max=1.0),
            retry=retry_if_exception(is_retryable_conflict),
            before_sleep=_log_retry,
            reraise=True,
        )
        return retrying(fn, *args, **kwargs)

    return run
