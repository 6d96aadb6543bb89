"""tests/live_requests.py: the `page` fixture's wait for requests the live server is still
answering (a decision sent after its undo wait, in flight when a browser test ends)."""

from __future__ import annotations

import socket
import time

import pytest

from tests.live_requests import request_threads, track, wait_for_live_requests

pytestmark = pytest.mark.django_db(transaction=True)


def _until(condition, timeout: float = 10.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.02)
    return condition()


def test_a_request_still_being_answered_is_waited_for_and_reported_until_it_ends(live_server):
    track(live_server)
    host, port = live_server.url.removeprefix("http://").split(":")
    # Headers without their blank line: the server's thread waits for the rest, as it would
    # while a view runs.
    connection = socket.create_connection((host, int(port)))
    try:
        connection.sendall(b"GET /healthz HTTP/1.1\r\nHost: localhost\r\n")
        assert _until(lambda: len(request_threads(live_server)) == 1)
        started = time.monotonic()
        assert len(wait_for_live_requests(live_server, timeout=0.5)) == 1
        assert time.monotonic() - started >= 0.45  # it did wait
        connection.sendall(b"Connection: close\r\n\r\n")
        answer = connection.recv(65536)
        assert answer.startswith(b"HTTP/1.1 ")
    finally:
        connection.close()
    assert wait_for_live_requests(live_server, timeout=30) == []
