"""Settings come from the environment; the production set passes Django's deploy checks."""

from __future__ import annotations

import json
import logging
import os
import subprocess
import sys
from pathlib import Path

from core.logging import JsonFormatter, RequestIdFilter, request_id_var

ROOT = Path(__file__).resolve().parents[2]

PRODUCTION = {
    "DEBUG": "false",
    "SECRET_KEY": "x7!Qm2#kP9vL4sT8wZ1yB6nC3dF5gH0jR-long-and-random-enough-for-django",
    "ALLOWED_HOSTS": "mnemo.example.com",
    "CSRF_TRUSTED_ORIGINS": "https://mnemo.example.com",
    "HTTPS": "true",
    # Never connected to by `check`; set so manage.py does not start the embedded server.
    "DATABASE_URL": "postgres://mnemo@127.0.0.1:1/mnemo",
    "CELERY_BROKER_URL": "redis://127.0.0.1:6379/0",
}


def manage(*args, env_extra: dict) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k != "DJANGO_SETTINGS_MODULE"}
    env.update(env_extra)
    return subprocess.run([sys.executable, "manage.py", *args], cwd=ROOT, env=env, capture_output=True, text=True, timeout=120)


def test_check_deploy_passes_with_the_production_variables():
    result = manage("check", "--deploy", "--fail-level", "WARNING", env_extra=PRODUCTION)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "no issues" in result.stdout


def test_check_deploy_fails_without_them():
    result = manage("check", "--deploy", "--fail-level", "WARNING", env_extra={**PRODUCTION, "HTTPS": "false"})
    assert result.returncode != 0
    assert "SECURE_SSL_REDIRECT" in result.stderr + result.stdout


def test_logs_are_json_lines_carrying_the_request_id():
    record = logging.LogRecord("mnemo.test", logging.INFO, __file__, 1, "hello %s", ("world",), None)
    record.workspace = "acme"
    token = request_id_var.set("req-123")
    try:
        RequestIdFilter().filter(record)
        line = JsonFormatter().format(record)
    finally:
        request_id_var.reset(token)
    payload = json.loads(line)
    assert payload["message"] == "hello world"
    assert payload["request_id"] == "req-123"
    assert payload["workspace"] == "acme" and payload["level"] == "INFO"
