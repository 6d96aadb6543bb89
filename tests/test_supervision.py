"""The launcher's supervision pieces (mnemo/supervision.py) against real processes: the
kernel's parent-death signal, leftovers recognised by pid file and start time, the
restart backoff, who holds the port."""

from __future__ import annotations

import signal
import socket
import subprocess
import sys
import time

import psutil
import pytest

from mnemo import supervision


def _gone(pid: int, timeout: float = 10) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            if psutil.Process(pid).status() == psutil.STATUS_ZOMBIE:
                return True
        except psutil.NoSuchProcess:
            return True
        time.sleep(0.05)
    return False


def _session_with_grandchild() -> tuple[subprocess.Popen, int]:
    """A process in its own session that forked a grandchild, like gunicorn's master."""
    proc = subprocess.Popen(["sh", "-c", "sleep 300 & echo $!; wait"], stdout=subprocess.PIPE, text=True,
                            start_new_session=True)
    return proc, int(proc.stdout.readline())


def test_a_child_dies_with_its_parent_even_when_the_parent_is_killed_9():
    parent = subprocess.Popen([sys.executable, "-c", (
        "import subprocess, sys, time\n"
        "from mnemo import supervision\n"
        "child = subprocess.Popen(['sleep', '300'], start_new_session=True, preexec_fn=supervision.die_with_parent)\n"
        "print(child.pid, flush=True)\n"
        "time.sleep(300)\n"
    )], stdout=subprocess.PIPE, text=True)
    child = int(parent.stdout.readline())
    assert psutil.Process(child).status() != psutil.STATUS_ZOMBIE
    parent.kill()
    parent.wait()
    assert _gone(child)


def test_a_recorded_leftover_is_stopped_with_everything_it_forked(tmp_path):
    leader, grandchild = _session_with_grandchild()
    files = supervision.PidFiles(tmp_path / "run")
    record = files.write("web", leader.pid)
    [read] = files.read_all()
    assert read == record

    assert supervision.stop_leftover(read, grace=5)
    leader.wait(timeout=10)
    assert _gone(grandchild)


def test_the_group_of_a_dead_leader_is_still_cleaned_up(tmp_path):
    leader, grandchild = _session_with_grandchild()
    record = supervision.PidFiles(tmp_path / "run").write("worker", leader.pid)
    leader.kill()
    leader.wait()

    assert supervision.stop_leftover(record, grace=5)
    assert _gone(grandchild)


def test_a_reused_pid_is_left_alone(tmp_path):
    stranger, grandchild = _session_with_grandchild()
    try:
        # The pid file names this pid, but a process that started at another time.
        record = supervision.Recorded(name="web", pid=stranger.pid,
                                      create_time=psutil.Process(stranger.pid).create_time() - 100)
        assert record.process() is None
        assert not supervision.stop_leftover(record, grace=1)
        assert stranger.poll() is None and psutil.pid_exists(grandchild)
    finally:
        supervision.kill_group(stranger.pid, signal.SIGKILL)
        stranger.wait()


def test_an_unreadable_pid_file_is_dropped(tmp_path):
    files = supervision.PidFiles(tmp_path)
    (tmp_path / "beat.json").write_text('{"name": "beat", "pid": ')
    assert files.read_all() == []
    assert not (tmp_path / "beat.json").exists()


def test_backoff_doubles_up_to_its_cap_and_gives_up_on_a_crash_loop():
    backoff = supervision.Backoff(first_delay=1, cap=6, stable_seconds=60, max_quick_crashes=5)
    assert [backoff.after_exit(ran_for=2) for _ in range(5)] == [1, 2, 4, 6, 6]
    assert backoff.after_exit(ran_for=2) is None


def test_backoff_starts_over_after_a_run_that_lasted():
    backoff = supervision.Backoff(first_delay=1, cap=30, stable_seconds=60, max_quick_crashes=3)
    assert [backoff.after_exit(ran_for=1) for _ in range(3)] == [1, 2, 4]
    assert backoff.after_exit(ran_for=61) == 1
    assert backoff.after_exit(ran_for=1) == 2


def test_the_port_holder_is_named():
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen()
        port = listener.getsockname()[1]
        holder = supervision.port_holder("127.0.0.1", port)
        assert holder is not None and f"pid {psutil.Process().pid}" in holder
    assert supervision.port_holder("127.0.0.1", port) is None


@pytest.mark.parametrize("signum", [signal.SIGKILL, signal.SIGTERM])
def test_die_with_parent_takes_any_signal(signum):
    # The setting is the process's own: a child of this test process reports its own.
    code = ("import ctypes, sys\nfrom mnemo import supervision\n"
            f"supervision.die_with_parent({int(signum)})\n"
            "value = ctypes.c_int()\n"
            "ctypes.CDLL(None).prctl(2, ctypes.byref(value), 0, 0, 0)\n"  # PR_GET_PDEATHSIG
            "print(value.value)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert int(out) == int(signum)
