"""The cache that holds the rate-limit counters (core/ratelimit.py) when no Redis is
configured: Django's DatabaseCache with an atomic `add` and `incr` on PostgreSQL.

DatabaseCache inherits BaseCache.incr, a get followed by a set: two gunicorn workers that
increment one counter at once both read n and both write n + 1, so a burst of concurrent
requests is undercounted. Here `incr` reads the row with SELECT ... FOR UPDATE and rewrites
it in the same transaction, so concurrent increments of one counter queue behind each
other's row lock and none is lost; it keeps the expiry that `add` set (the end of the
window), where `set` would reset it to the default timeout.

DatabaseCache's `add` counts the whole table on every call (to cull past MAX_ENTRIES, by
deleting a third of the rows, live counters too). Here `add` is one INSERT ... ON CONFLICT
that also takes over an expired row, and each new row (one per client and window) deletes
the expired ones through the index on `expires`.

Both write in a transaction of their own with `synchronous_commit` off for it alone: a
counter need not wait for its WAL record to reach the disk (a commit's fsync, ~7 ms on the
VM, twice per API call, was the largest cost of a request's limit checks). A crash may
lose the last few increments, which only lets a few more requests through; the row stays
consistent. Inside a caller's transaction (a test, a view in an atomic block) nothing is
changed: SET LOCAL would make the caller's own commit asynchronous too."""

from __future__ import annotations

import base64
import contextlib
import pickle
from datetime import datetime, timezone

from django.core.cache.backends.base import DEFAULT_TIMEOUT
from django.core.cache.backends.db import DatabaseCache
from django.db import connections, router, transaction
from django.utils.timezone import now


@contextlib.contextmanager
def _counter_transaction(db, connection):
    """A transaction whose commit does not wait for the WAL flush (module docstring)."""
    outermost = not connection.in_atomic_block
    with transaction.atomic(using=db), connection.cursor() as cursor:
        if outermost:
            cursor.execute("SET LOCAL synchronous_commit TO OFF")
        yield cursor


class AtomicDatabaseCache(DatabaseCache):
    def _encode(self, value) -> str:
        return base64.b64encode(pickle.dumps(value, self.pickle_protocol)).decode("latin1")

    def _connection(self):
        db = router.db_for_write(self.cache_model_class)
        return db, connections[db], connections[db].ops.quote_name(self._table)

    def add(self, key, value, timeout=DEFAULT_TIMEOUT, version=None):
        key = self.make_and_validate_key(key, version=version)
        timeout = self.get_backend_timeout(timeout)
        expires = datetime.max.replace(tzinfo=timezone.utc) if timeout is None else (
            datetime.fromtimestamp(timeout, tz=timezone.utc))
        current = now()
        db, connection, table = self._connection()
        with _counter_transaction(db, connection) as cursor:
            cursor.execute(
                f"INSERT INTO {table} (cache_key, value, expires) VALUES (%s, %s, %s) "
                f"ON CONFLICT (cache_key) DO UPDATE SET value = EXCLUDED.value, expires = EXCLUDED.expires "
                f"WHERE {table}.expires < %s RETURNING cache_key",
                [key, self._encode(value), expires, current],
            )
            added = cursor.fetchone() is not None
            if added:
                cursor.execute(f"DELETE FROM {table} WHERE expires < %s", [current])
        return added

    def incr(self, key, delta=1, version=None):
        key = self.make_and_validate_key(key, version=version)
        db, connection, table = self._connection()
        with _counter_transaction(db, connection) as cursor:
            cursor.execute(f"SELECT value, expires FROM {table} WHERE cache_key = %s FOR UPDATE", [key])
            row = cursor.fetchone()
            # The column is timestamptz: PostgreSQL returns an aware datetime.
            if row is None or row[1] < now():
                raise ValueError(f"Key '{key}' not found")
            value = pickle.loads(base64.b64decode(row[0].encode())) + delta
            cursor.execute(f"UPDATE {table} SET value = %s WHERE cache_key = %s", [self._encode(value), key])
        return value
