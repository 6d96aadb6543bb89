"""The embedded broker (kombu's filesystem transport) writes a message atomically: a worker
polling the folder never sees a message before its bytes are there. kombu's own transport
creates the file under its final name and then writes, which crashed the worker under load."""

from __future__ import annotations

from queue import Empty

import pytest
from kombu import Connection
from kombu.transport import filesystem

import mnemo.celery  # noqa: F401  (installs the transport under the "filesystem" alias)
from mnemo import broker


@pytest.fixture
def channel(tmp_path):
    options = {"data_folder_in": str(tmp_path), "data_folder_out": str(tmp_path),
               "control_folder": str(tmp_path / "control"), "store_processed": False}
    with Connection("filesystem://", transport_options=options) as connection:
        yield connection.default_channel


def test_the_filesystem_alias_is_ours(channel):
    assert isinstance(channel, broker.Channel)


def test_a_message_being_written_is_invisible_to_a_consumer(channel, monkeypatch):
    seen_while_writing = []
    real_dumps = broker.dumps

    def dumps_then_poll(payload):
        # The consumer polls while the producer is between creating and filling its file.
        try:
            seen_while_writing.append(channel._get("celery"))
        except Empty:
            seen_while_writing.append("Empty")
        return real_dumps(payload)

    monkeypatch.setattr(broker, "dumps", dumps_then_poll)
    channel._put("celery", {"body": "hello"})
    assert seen_while_writing == ["Empty"]
    monkeypatch.undo()
    assert channel._get("celery") == {"body": "hello"}


def test_kombus_own_put_would_expose_an_empty_file(tmp_path, channel, monkeypatch):
    """The failure this guards against, shown on kombu's transport: the file is there, empty."""
    found = []

    def dumps_then_look(payload):
        found.extend(p.stat().st_size for p in tmp_path.glob("*.celery.msg"))
        return broker.dumps(payload)

    monkeypatch.setattr(filesystem, "dumps", dumps_then_look)
    filesystem.Channel._put(channel, "celery", {"body": "hello"})
    assert found == [0]
