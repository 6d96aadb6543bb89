"""Helpers shared by the tests."""

from __future__ import annotations

import json
from pathlib import Path

import psycopg.errors
from django.contrib.auth.hashers import PBKDF2PasswordHasher
from django.db import OperationalError, connections
from django.test import Client


class QuickPBKDF2PasswordHasher(PBKDF2PasswordHasher):
    """The tests' password hasher (tests/conftest.py: _quick_password_hashing)."""

    iterations = 1_000


class ApiClient:
    """A JSON client for /api/v1 that sends one API key."""

    def __init__(self, key: str | None):
        self.client = Client()
        self.headers = {"Authorization": f"Bearer {key}"} if key else {}

    def get(self, path, **params):
        return self.client.get(f"/api/v1{path}", params, headers=self.headers)

    def post(self, path, data=None, raw: str | None = None):
        body = raw if raw is not None else json.dumps(data if data is not None else {})
        return self.client.post(f"/api/v1{path}", body, content_type="application/json", headers=self.headers)

    def put(self, path, data=None, raw: str | None = None, **params):
        body = raw if raw is not None else json.dumps(data if data is not None else {})
        query = "?" + "&".join(f"{k}={v}" for k, v in params.items()) if params else ""
        return self.client.put(f"/api/v1{path}{query}", body, content_type="application/json", headers=self.headers)

    def patch(self, path, data):
        return self.client.patch(f"/api/v1{path}", json.dumps(data), content_type="application/json",
                                 headers=self.headers)

    def delete(self, path):
        return self.client.delete(f"/api/v1{path}", headers=self.headers)


def assert_error(response, status: int, code: str | None = None) -> dict:
    """The one error shape of HOUSE_STYLE.md, with the expected status."""
    assert response.status_code == status, response.content
    body = response.json()
    assert set(body) == {"error"}, body
    assert set(body["error"]) == {"code", "message", "details"}, body
    assert body["error"]["message"]
    if code is not None:
        assert body["error"]["code"] == code, body
    return body["error"]


def database_url() -> str:
    """The test database as a DATABASE_URL, for a process of its own (a worker, a command)."""
    from urllib.parse import quote

    db = connections["default"].settings_dict
    return f"postgres://{quote(db['USER'] or '', safe='')}@{quote(db['HOST'], safe='')}:{db['PORT']}/{db['NAME']}"


def wait_for(predicate, timeout: float = 30.0, interval: float = 0.2) -> bool:
    """Poll until `predicate()` is true; False when `timeout` seconds pass first."""
    import time

    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(interval)
    return False


# Debian's Chromium, driven by Playwright in the browser tests (tests/conftest.py: browser).
CHROMIUM = "/usr/bin/chromium"
# Browser tests keep a screenshot of each page they end on (tests/conftest.py: page).
SHOTS = Path(__file__).resolve().parent.parent / "var" / "screenshots"


def log_in(page, user, slug: str = "acme"):
    """Log in through the login form, as a person does; lands on the workspace's home."""
    page.goto("/login/")
    page.fill("input[name=username]", user.get_username())
    page.fill("input[name=password]", "pw-" + user.get_username())
    page.click("button[type=submit]")
    page.wait_for_url(f"**/w/{slug}/")


def closing_connections(fn):
    """For a function run in a thread of its own: each thread has its own database
    connection; closing it at the end lets the test database be dropped."""
    def run(*args, **kwargs):
        try:
            return fn(*args, **kwargs)
        finally:
            connections.close_all()
    return run


def deadlock_error():
    """A django OperationalError caused by psycopg's DeadlockDetected, as PostgreSQL's
    deadlock victim raises it (core.concurrency.is_retryable_conflict looks at the cause)."""
    try:
        raise psycopg.errors.DeadlockDetected("deadlock detected")
    except psycopg.errors.DeadlockDetected as cause:
        error = OperationalError("deadlock detected")
        error.__cause__ = cause
        return error
