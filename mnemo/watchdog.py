"""The launcher's watchdog: what `make run` cannot do for itself once it is killed -9.

Started by the launcher in a session of its own (so a kill of the launcher's process
group does not reach it) and with nothing else to do, it waits for the launcher to exit.
The kernel has then killed the launcher's children (PR_SET_PDEATHSIG); the watchdog
kills what they forked (each child's process group), removes their pid files, and stops
the embedded PostgreSQL once no other live process uses it. After a clean stop the
launcher has done all that and ends the watchdog itself, unless PostgreSQL had to stay up
for someone else's connections: then the watchdog stops it once they are closed.

    python -m mnemo.watchdog LAUNCHER_PID LAUNCHER_CREATE_TIME
"""

from __future__ import annotations

import os
import select
import sys
import time

import psycopg

from mnemo import embedded_db, launcher, supervision


def wait_for_exit(record: supervision.Recorded) -> None:
    """Block until the recorded process has exited (a zombie counts as exited)."""
    try:
        handle = os.pidfd_open(record.pid)
    except ProcessLookupError:
        return
    try:
        if record.process() is None:  # the pid was reused before it could be opened
            return
        poller = select.poll()
        poller.register(handle, select.POLLIN)  # readable once the process has exited
        poller.poll()
    finally:
        os.close(handle)


def stop_children(pidfiles: supervision.PidFiles) -> None:
    for record in pidfiles.read_all():
        if record.name == "watchdog":
            continue
        if supervision.stop_leftover(record, grace=2):
            launcher.say(f"watchdog: stopped what was left of {record.name} (process group {record.pid})")
        pidfiles.remove(record.name)


def stop_database_when_unused(pgdata, application_name: str) -> None:
    """Stop the embedded PostgreSQL once no live process other than the launcher's uses
    it; leave it to a new `make run` that has taken it over."""
    told = False
    while (server := embedded_db.running_server(pgdata)) is not None:
        if launcher.launcher_running():
            launcher.say("watchdog: a new make run uses the embedded PostgreSQL; leaving it running")
            return
        try:
            others = embedded_db.other_clients(server, except_application=application_name)
        except psycopg.OperationalError as exc:
            launcher.say(f"watchdog: could not ask PostgreSQL who uses it ({exc}); asking again")
            time.sleep(1)
            continue
        if others == 0:
            embedded_db.stop(pgdata)
            launcher.say("watchdog: stopped the embedded PostgreSQL")
            return
        if not told:
            launcher.say(f"watchdog: the embedded PostgreSQL stays up while {others} other connection(s) use it")
            told = True
        time.sleep(1)


def main(argv: list[str]) -> int:
    launcher_process = supervision.Recorded(name="launcher", pid=int(argv[0]), create_time=float(argv[1]))
    wait_for_exit(launcher_process)
    stop_children(launcher.PID_FILES)
    if launcher.uses_embedded_database():
        stop_database_when_unused(embedded_db.DEFAULT_PGDATA, launcher.application_name(launcher_process.pid))
    launcher.PID_FILES.remove("watchdog")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
