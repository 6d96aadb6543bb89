"""Requests the live server is still answering when a browser test ends.

A browser test can end while its page still has a request on the live server: the review
queue sends a decision when its undo wait runs out, so a test that presses `a` and then
checks something else finishes with the POST in flight. The live server answers it in its
own thread while the test's teardown flushes the database: the flush waited on the
decision's open transaction and failed ("Database test_mnemo_gw1 couldn't be flushed"),
pytest-django then blocked database access under the request (a 500 in the log), and the
next test of that process found the last one's rows ("A workspace with slug 'acme' exists
already") — CI of 2026-11-26, tests/review/test_browser.py. So every browser context on the
live server is opened with `live_context` and closed with `close_live_context`: the browser
is closed (no new requests), then every request thread is waited for before the database
is touched again."""

from __future__ import annotations

import threading
import time


def track(live_server) -> None:
    """Count the live server's requests from now on (idempotent). Django's ThreadedWSGIServer
    starts a daemon thread per connection, and socketserver keeps no list of daemon threads,
    so the server's own method is wrapped: each thread is registered while it serves."""
    httpd = live_server.thread.httpd
    if getattr(httpd, "mnemo_running", None) is not None:
        return
    running: set[threading.Thread] = set()
    lock = threading.Lock()
    serve = httpd.process_request_thread

    def process_request_thread(request, client_address):
        with lock:
            running.add(threading.current_thread())
        try:
            serve(request, client_address)
        finally:
            with lock:
                running.discard(threading.current_thread())

    httpd.mnemo_running, httpd.mnemo_lock = running, lock
    httpd.process_request_thread = process_request_thread


def request_threads(live_server) -> list[threading.Thread]:
    """The tracked request threads still running: one per open connection, ending when the
    client closes it (or asks for Connection: close)."""
    httpd = live_server.thread.httpd
    with httpd.mnemo_lock:
        return [thread for thread in httpd.mnemo_running if thread.is_alive()]


def wait_for_live_requests(live_server, timeout: float = 60.0) -> list[threading.Thread]:
    """Join the live server's request threads; return those still running after `timeout`
    seconds (empty when every request has been answered and its connection closed)."""
    deadline = time.monotonic() + timeout
    for thread in request_threads(live_server):
        thread.join(max(0.0, deadline - time.monotonic()))
    return request_threads(live_server)


def live_context(browser, live_server, **options):
    """A Playwright browser context on the live server, its requests counted from the start."""
    track(live_server)
    return browser.new_context(base_url=live_server.url, **options)


def close_live_context(context, live_server, timeout: float = 60.0) -> None:
    """Close the context, then wait until the live server has answered every request it sent
    (failing, naming how many, when one is still running after `timeout` seconds)."""
    context.close()
    running = wait_for_live_requests(live_server, timeout)
    assert not running, f"the live server still answers {len(running)} request(s) {timeout:.0f} s after the browser closed"
