"""The Redis store cancelled, against a real server: a command, or a subscription being
opened, cancelled at any point ends cancelled, leaving no connection open (redis-py on
Python 3.11 may drop a cancellation that comes as a write ends; the store does not)."""

from __future__ import annotations

import asyncio
import math
import uuid
from collections.abc import AsyncIterator
from typing import TYPE_CHECKING

import pytest

from mcp_elicit.stores import RedisStore

from support.waiting import eventually, hang_guard

if TYPE_CHECKING:
    from redis.asyncio import Redis

pytestmark = pytest.mark.anyio

redis_asyncio = pytest.importorskip("redis.asyncio")

#: Loop turns let pass before the cancellation: connecting, writing, waiting for the reply.
TURNS = range(25)


@pytest.fixture
async def raw(redis_url: str) -> AsyncIterator[Redis]:
    """A plain redis-py client on the test server, to count its connections."""
    client = redis_asyncio.Redis.from_url(redis_url)
    yield client
    await client.aclose()


async def test_a_subscription_cancelled_while_it_opens_or_waits_ends_cancelled(
    redis_url: str, raw: Redis
) -> None:
    connected = len(await raw.client_list())
    for turns in TURNS:
        store = RedisStore(redis_url, prefix=f"test-{uuid.uuid4().hex[:12]}")
        try:

            async def listen(store: RedisStore = store) -> None:
                async with store.subscribe("c") as subscription:
                    await subscription.next(math.inf)

            listening = asyncio.ensure_future(listen())
            for _ in range(turns):
                await asyncio.sleep(0)
            listening.cancel()
            async with hang_guard(f"a subscription cancelled after {turns} turns", 10.0):
                await asyncio.wait({listening})
            assert listening.cancelled(), f"cancelled after {turns} turns: {listening}"
        finally:
            await store.close()

        async def closed() -> bool:  # Redis drops a closed connection a moment later
            return len(await raw.client_list()) == connected

        await eventually(closed, f"cancelled after {turns} turns: every connection is closed")


async def test_a_command_cancelled_before_it_ends_ends_cancelled(redis_url: str) -> None:
    store = RedisStore(redis_url, prefix=f"test-{uuid.uuid4().hex[:12]}")
    try:
        for turns in TURNS:
            put = asyncio.ensure_future(store.put("ns", f"k{turns}", b"v"))
            for _ in range(turns):
                await asyncio.sleep(0)
            if put.done():  # written before the cancellation: nothing to cancel
                break
            put.cancel()
            async with hang_guard(f"a put cancelled after {turns} turns", 10.0):
                await asyncio.wait({put})
            assert put.cancelled(), f"cancelled after {turns} turns, the put ended: {put}"
        assert await store.get("ns", "k0") is None  # the first was cancelled before it was sent
    finally:
        await store.close()
