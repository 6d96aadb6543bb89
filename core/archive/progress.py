"""A progress line on stderr for the archive commands (tqdm is not a dependency): the
table being written or read and its rows so far, redrawn in place at most ~5 times a second."""

from __future__ import annotations

import sys
import time


class StderrProgress:
    def __init__(self, stream=None):
        self.stream = stream or sys.stderr
        self._last = 0.0
        self._table = None

    def __call__(self, table: str, rows: int) -> None:
        now = time.monotonic()
        if table != self._table:
            if self._table is not None:
                self.stream.write("\n")
            self._table, self._last = table, 0.0
        if now - self._last >= 0.2:
            self.stream.write(f"\r  {table}: {rows:,} rows")
            self.stream.flush()
            self._last = now

    def close(self) -> None:
        if self._table is not None:
            self.stream.write("\n")
