"""Process supervision for `make run`, the parts that need no Django: pid files, the
kernel's parent-death signal, process-group kills, the restart backoff.

The patterns are the ones process managers use: every child runs in its own session
(its pid is its process group, so one `killpg` reaches the processes it forked), the
kernel kills it when the launcher dies (`PR_SET_PDEATHSIG`, as Celery's own pool does
for its children), and a pid file per process, checked against the process's start
time, lets the next start recognise leftovers without ever killing a reused pid.
"""

from __future__ import annotations

import ctypes
import errno
import json
import os
import signal
import socket
import time
from dataclasses import dataclass
from pathlib import Path

import psutil

PR_SET_PDEATHSIG = 1  # <linux/prctl.h>
_libc = ctypes.CDLL(None, use_errno=True)


def die_with_parent(signum: int = signal.SIGKILL) -> None:
    """In a child between fork and exec (Popen's preexec_fn): have the kernel send it
    `signum` when the parent dies, even by SIGKILL. The signal follows the death of the
    *thread* that forked, so children must be started from the launcher's main thread.
    The setting survives exec, but not a change of user; the children here never do."""
    if _libc.prctl(PR_SET_PDEATHSIG, signum, 0, 0, 0) != 0:
        err = ctypes.get_errno()
        raise OSError(err, os.strerror(err))


# -- pid files ------------------------------------------------------------------------------
_START_TIME_TOLERANCE = 0.05  # seconds: psutil's create_time is rounded to clock ticks


@dataclass(frozen=True)
class Recorded:
    name: str
    pid: int
    create_time: float

    def process(self) -> psutil.Process | None:
        """The recorded process if it still runs: same pid *and* same start time (a pid
        alone may have been reused by anything since)."""
        try:
            process = psutil.Process(self.pid)
            if not self.started(process) or process.status() == psutil.STATUS_ZOMBIE:
                return None
            return process
        except psutil.NoSuchProcess:
            return None

    def started(self, process: psutil.Process) -> bool:
        """Whether `process` (under this pid) is the one recorded, not a reuse of its pid."""
        return abs(process.create_time() - self.create_time) <= _START_TIME_TOLERANCE


class PidFiles:
    """One JSON file per supervised process under `var/run/`: name, pid, start time."""

    def __init__(self, directory: Path):
        self.directory = Path(directory)

    def write(self, name: str, pid: int) -> Recorded:
        self.directory.mkdir(parents=True, exist_ok=True)
        record = Recorded(name=name, pid=pid, create_time=psutil.Process(pid).create_time())
        path = self.directory / f"{name}.json"
        temporary = path.with_suffix(".tmp")
        temporary.write_text(json.dumps({"name": name, "pid": pid, "create_time": record.create_time}))
        temporary.replace(path)  # a reader never sees half a file
        return record

    def remove(self, name: str) -> None:
        (self.directory / f"{name}.json").unlink(missing_ok=True)

    def read_all(self) -> list[Recorded]:
        records = []
        for path in sorted(self.directory.glob("*.json")):
            try:
                data = json.loads(path.read_text())
                records.append(Recorded(name=str(data["name"]), pid=int(data["pid"]),
                                        create_time=float(data["create_time"])))
            except (OSError, ValueError, KeyError, TypeError):
                path.unlink(missing_ok=True)  # unreadable: it can identify nothing
        return records


def group_alive(pgid: int) -> bool:
    """Whether any process of the group still runs. Zombies don't count: an orphan that
    died waits for its new parent (often init) to reap it, and is harmless meanwhile."""
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    for process in psutil.process_iter(["status"]):
        try:
            if process.info["status"] != psutil.STATUS_ZOMBIE and os.getpgid(process.pid) == pgid:
                return True
        except ProcessLookupError:
            continue
    return False


def kill_group(pgid: int, signum: int = signal.SIGKILL) -> bool:
    """Signal every process of a group; whether the group existed."""
    try:
        os.killpg(pgid, signum)
    except ProcessLookupError:
        return False
    return True


def wait_group_gone(pgid: int, timeout: float) -> bool:
    deadline = time.monotonic() + timeout
    while group_alive(pgid):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)
    return True


def stop_leftover(record: Recorded, *, grace: float) -> bool:
    """Stop what is left of a recorded process and the processes it forked (its group,
    since it was started in its own session). Returns whether anything was running.

    A group id cannot be handed to a new process while any member of the group lives, so
    once the recorded leader is gone its group, if it still exists, holds only leftovers.
    A live process under the recorded pid with another start time is someone else's:
    it is left alone."""
    try:
        reused = not record.started(psutil.Process(record.pid))
    except psutil.NoSuchProcess:
        reused = False
    if reused:
        return False
    if not group_alive(record.pid):
        return False
    kill_group(record.pid, signal.SIGTERM)
    kill_group(record.pid, signal.SIGCONT)  # a stopped process acts on SIGTERM only once continued
    if not wait_group_gone(record.pid, grace):
        kill_group(record.pid, signal.SIGKILL)
        wait_group_gone(record.pid, 5)
    return True


# -- restarts -------------------------------------------------------------------------------
@dataclass
class Backoff:
    """Capped exponential backoff between restarts, and when to give up (supervisord's
    startsecs/startretries, circus's max_retry): a process that ran for `stable_seconds`
    counts as having started fine, so only crashes in a row within that time add up."""

    first_delay: float = 1.0
    cap: float = 30.0
    stable_seconds: float = 60.0
    max_quick_crashes: int = 5
    quick_crashes: int = 0

    def after_exit(self, ran_for: float) -> float | None:
        """The delay before the next start, or None: a crash loop, give up."""
        if ran_for >= self.stable_seconds:
            self.quick_crashes = 0
        self.quick_crashes += 1
        if self.quick_crashes > self.max_quick_crashes:
            return None
        return min(self.cap, self.first_delay * 2 ** (self.quick_crashes - 1))


# -- the port -------------------------------------------------------------------------------
def port_holder(host: str, port: int) -> str | None:
    """None when `host:port` can be bound as gunicorn binds it (SO_REUSEADDR, so
    connections in TIME_WAIT don't count); otherwise who holds it, as well as it can tell."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind((host, port))
            return None
        except OSError as exc:
            if exc.errno != errno.EADDRINUSE:
                return f"it cannot be bound: {exc.strerror}"
    try:
        for conn in psutil.net_connections(kind="tcp"):
            if conn.status == psutil.CONN_LISTEN and conn.laddr and conn.laddr.port == port and conn.pid:
                try:
                    cmdline = " ".join(psutil.Process(conn.pid).cmdline())[:120]
                except psutil.Error:
                    cmdline = "?"
                return f"pid {conn.pid} ({cmdline})"
    except psutil.AccessDenied:
        pass
    return "another process"
