"""Issue 16: a secret a request carries (refused with 422) must not reach the logs, neither
Django's (through LOGGING's handlers) nor gunicorn's access log (its own handlers)."""

from __future__ import annotations

import io
import json
import logging
from datetime import timedelta
from types import SimpleNamespace

import pytest
from gunicorn.config import Config

from core.logging import GunicornLogger, SecretMaskingFilter, mask_secrets
from mnemo.launcher import ACCESS_LOG_FORMAT, GUNICORN_LOGGER

GITHUB_TOKEN = "ghp_" + "aB3dE5gH7jK9mN1pQ3sT5vW7yZ9bC1dF3hJ5"
STRIPE_KEY = "sk_live_" + "4eC39HqLyjWDarjtT1zdp7dc"


@pytest.fixture
def console():
    """What the configured console handler (settings.LOGGING) writes."""
    handler = next(h for h in logging.getLogger().handlers
                   if any(isinstance(f, SecretMaskingFilter) for f in h.filters))
    stream = io.StringIO()
    previous = handler.setStream(stream)
    yield stream
    handler.setStream(previous)


def _lines(stream: io.StringIO) -> list[dict]:
    return [json.loads(line) for line in stream.getvalue().splitlines()]


def test_a_secret_in_the_path_of_a_refused_request_is_masked_in_the_log(admin_api, console):
    response = admin_api.put(f"/trusted-state/{GITHUB_TOKEN}", {"value": "x"})

    assert response.status_code == 422
    assert GITHUB_TOKEN not in console.getvalue()
    logged = [line for line in _lines(console) if line["logger"] == "django.request"]
    assert logged[0]["message"] == "Unprocessable Entity: /api/v1/trusted-state/[secret:github_token]"


def test_a_secret_in_the_query_of_a_refused_request_is_not_in_the_log(api, console):
    response = api.get("/memories", type=f"token={STRIPE_KEY}")

    assert response.status_code == 422, response.content
    assert [line["logger"] for line in _lines(console)] == ["django.request"]
    assert STRIPE_KEY not in console.getvalue()


def test_extras_and_tracebacks_are_masked_too(console):
    log = logging.getLogger("mnemo.test")
    try:
        raise ValueError(f"cannot use {GITHUB_TOKEN}")
    except ValueError:
        log.exception("failed for %s", STRIPE_KEY, extra={"path": f"/x/{GITHUB_TOKEN}", "count": 3,
                                                           "request": SimpleNamespace(key=STRIPE_KEY)})

    [line] = _lines(console)
    assert GITHUB_TOKEN not in console.getvalue() and STRIPE_KEY not in console.getvalue()
    assert line["message"] == "failed for [secret:stripe_key]"
    assert line["path"] == "/x/[secret:github_token]" and line["count"] == 3
    assert "ValueError: cannot use [secret:github_token]" in line["exc"]


def test_a_percent_encoded_secret_is_masked():
    assert GITHUB_TOKEN not in mask_secrets(f"/x?q=token%3D{GITHUB_TOKEN}%26more")
    assert mask_secrets("GET /api/v1/memories?q=50%25+off 200") == "GET /api/v1/memories?q=50%25+off 200"


@pytest.fixture
def gunicorn_logger():
    """gunicorn's logger as the launcher configures it, its access log written to `.stream`."""
    cfg = Config()
    cfg.set("accesslog", "-")
    cfg.set("access_log_format", ACCESS_LOG_FORMAT)
    cfg.set("logger_class", GUNICORN_LOGGER)
    logger = cfg.logger_class(cfg)
    logger.stream = io.StringIO()
    _write_access_log_to(logger)
    yield logger
    for log in (logger.error_log, logger.access_log):
        for handler in [h for h in log.handlers if getattr(h, "_gunicorn", False)]:
            log.removeHandler(handler)


def _write_access_log_to(logger) -> None:
    for handler in logger.access_log.handlers:
        if getattr(handler, "_gunicorn", False):
            handler.setStream(logger.stream)


def _access(logger: GunicornLogger, path: str, query: str = "") -> None:
    environ = {"REQUEST_METHOD": "PUT", "RAW_URI": f"{path}?{query}", "PATH_INFO": path,
               "QUERY_STRING": query, "SERVER_PROTOCOL": "HTTP/1.1", "REMOTE_ADDR": "127.0.0.1"}
    response = SimpleNamespace(status="422 Unprocessable Entity", headers=[("X-Request-ID", "abc")], sent=120)
    logger.access(response, SimpleNamespace(headers=[]), environ, timedelta(milliseconds=5))


def test_gunicorns_access_log_masks_a_secret_in_the_path(gunicorn_logger):
    assert isinstance(gunicorn_logger, GunicornLogger)  # the launcher's --logger-class loads

    _access(gunicorn_logger, f"/api/v1/trusted-state/{GITHUB_TOKEN}", query=f"note=token%3D{STRIPE_KEY}")

    line = json.loads(gunicorn_logger.stream.getvalue())
    assert line["path"] == "/api/v1/trusted-state/[secret:github_token]"
    assert line["status"] == 422 and line["request_id"] == "abc"


def test_gunicorns_logs_keep_masking_after_a_reload(gunicorn_logger):
    gunicorn_logger.setup(gunicorn_logger.cfg)  # what a HUP does: new handlers
    _write_access_log_to(gunicorn_logger)

    _access(gunicorn_logger, f"/api/v1/trusted-state/{GITHUB_TOKEN}")

    assert GITHUB_TOKEN not in gunicorn_logger.stream.getvalue()
    assert json.loads(gunicorn_logger.stream.getvalue())["path"] == "/api/v1/trusted-state/[secret:github_token]"
