"""AsyncMnemo against the live server: the same operations awaited, concurrent calls on one
client (one connection pool), the async batch and page iterator, and the same exceptions."""

from __future__ import annotations

import asyncio

import pytest

from conversations.models import Interaction
from mnemo_client import AsyncMnemo, InvalidRequest, NotFound, PermissionDenied, models
from tests.client.conftest import NO_RETRY, process

pytestmark = pytest.mark.django_db(transaction=True)


def run(coroutine):
    return asyncio.run(coroutine)


def test_concurrent_logs_on_one_client_are_all_stored(server, key, workspace):
    async def scenario():
        async with AsyncMnemo(server, key) as mnemo:
            return await asyncio.gather(*(
                mnemo.log(f"parallel {i}", channel="slack", channel_id="U042", external_id=f"p:{i}")
                for i in range(8)))

    results = run(scenario())
    assert {r.status for r in results} == {"created"} and len({r.id for r in results}) == 8
    assert Interaction.objects.filter(workspace=workspace).count() == 8


def test_batch_iterate_recall_and_context_awaited(server, key):
    items = [{"channel": "slack", "channel_id": "U042", "content": f"The release train leaves at {h}:00.",
              "external_id": f"r:{h}"} for h in range(5)]

    async def log_them():
        async with AsyncMnemo(server, key) as mnemo:
            first = await mnemo.log_batch(items, chunk_size=2)
            again = await mnemo.log_batch(items)
            listed = [i async for i in mnemo.iterate("interactions", page_size=2)]
            return first, again, listed

    first, again, listed = run(log_them())
    assert (first.created, again.duplicate) == (5, 5)
    assert [r.index for r in first.results] == list(range(5))
    assert sorted(i.external_id for i in listed) == sorted(f"r:{h}" for h in range(5))
    process()

    async def read_them():
        async with AsyncMnemo(server, key) as mnemo:
            stored = await mnemo.remember("The release train leaves on Thursdays.")
            return stored, await mnemo.recall("When does the release train leave?"), \
                await mnemo.context("release train", budget_tokens=200), await mnemo.status()

    stored, recalled, pack, status = run(read_them())
    assert stored.outcome == "created"
    assert recalled.results and isinstance(recalled.results[0], models.ItemOut)
    assert pack.tokens_used <= 200 and "release train" in pack.text
    assert status.workspace.slug == "acme"


def test_the_same_refusals_as_the_sync_client(server, key, read_key, outsider_key):
    async def scenario():
        async with AsyncMnemo(server, key) as mine:
            memory = (await mine.remember("a private note")).memory
            with pytest.raises(InvalidRequest) as bad:
                await mine.context("q", budget_tokens=5)
        async with AsyncMnemo(server, outsider_key, retry=NO_RETRY) as outsider:
            with pytest.raises(NotFound):
                await outsider.get_memory(memory.id)
        async with AsyncMnemo(server, read_key, retry=NO_RETRY) as reader:
            with pytest.raises(PermissionDenied):
                await reader.remember("not allowed")
            assert (await reader.get_memory(memory.id)).text == "a private note"
        return bad.value

    bad = run(scenario())
    assert bad.status == 422 and bad.code == "validation_error"
