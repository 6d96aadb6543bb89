"""The client against a live server: pytest-django's live_server (a threaded WSGI server on
the test database), so every request crosses a real socket as an agent's would. Tests here
use transactional databases (`pytestmark` in each module): the server thread sees only
committed rows."""

from __future__ import annotations

import socket

import pytest

from conversations.services import interactions_index
from memory.services import memories_embed
from mnemo_client import Mnemo, RetryPolicy

# No waiting between retries against the live server: nothing there is retried but by choice.
NO_RETRY = RetryPolicy(max_retries=0)


@pytest.fixture
def server(live_server) -> str:
    return live_server.url


@pytest.fixture
def key(write_key) -> str:
    return write_key


@pytest.fixture
def mnemo(server, key):
    with Mnemo(server, key) as client:
        yield client


@pytest.fixture
def outsider(server, outsider_key):
    with Mnemo(server, outsider_key, retry=NO_RETRY) as client:
        yield client


@pytest.fixture
def reader(server, read_key):
    with Mnemo(server, read_key, retry=NO_RETRY) as client:
        yield client


def process() -> None:
    """What the worker would do next: index every waiting interaction, embed memories."""
    while interactions_index(interaction_ids=[], batch_size=500):
        pass
    memories_embed()


@pytest.fixture
def unused_port() -> int:
    """A port nothing listens on (bound, then released)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]
