"""A progress line on stderr for the archive and rebuild commands (tqdm is not a
dependency): the table being written or read (or the layers being rebuilt) and its rows so
far, out of a total when one is known, redrawn in place at most ~5 times a second."""

from __future__ import annotations

import sys
import time


class StderrProgress:
    def __init__(self, stream=None):
        self.stream = stream or sys.stderr
        self._last = 0.0
        self._table = None

    def __call__(self, table: str, rows: int, total: int | None = None, unit: str = "rows") -> None:
        now = time.monotonic()
        if table != self._table:
            if self._table is not None:
                self.stream.write("\n")
            self._table, self._last = table, 0.0
        if now - self._last >= 0.2:
            done = f"{rows:,} / {total:,} {unit} ({rows / total:.0%})" if total else f"{rows:,} {unit}"
            self.stream.write(f"\r  {table}: {done}")
            self.stream.flush()
            self._last = now

    def close(self) -> None:
        if self._table is not None:
            self.stream.write("\n")
