"""The gap rules are pure: these tests need no database, so the session's embedded
PostgreSQL (tests/conftest.py) is not started for them."""

import pytest


@pytest.fixture(scope="session", autouse=True)
def _helper_connections_closed():
    """Overrides the root fixture of the same name, which needs django_db_setup."""
    yield
