"""The Redis store's connections under load, against a real server: ``?max_connections=``
caps them, and a burst beyond the cap waits its turn instead of failing."""

from __future__ import annotations

import asyncio
import contextlib
import uuid
from typing import TYPE_CHECKING

import pytest

from mcp_elicit.stores import RedisStore

if TYPE_CHECKING:
    from redis.asyncio import Redis

pytestmark = pytest.mark.anyio

redis_asyncio = pytest.importorskip("redis.asyncio")


async def test_max_connections_bounds_the_pool_and_a_burst_waits_its_turn(redis_url: str, raw: Redis) -> None:
    """More commands at once than ``max_connections`` wait for a free connection (within
    the socket timeout) instead of failing with "Too many connections"."""
    prefix = f"pool-{uuid.uuid4().hex[:12]}"
    before = len(await raw.client_list())
    store = RedisStore(f"{redis_url}?max_connections=2", prefix=prefix)
    try:
        await asyncio.gather(*(store.put("flow", f"k{i}", b"v", ttl=60) for i in range(20)))
        assert len(await raw.client_list()) <= before + 2
        assert len([k async for k in raw.scan_iter(match=f"{prefix}:*")]) == 20
    finally:
        await store.close()
    assert len(await raw.client_list()) == before, "close closes the pool"


async def test_a_pool_all_taken_by_subscriptions_is_a_redis_error_naming_the_store(redis_url: str) -> None:
    """Subscriptions count: with the one connection held by one, a command waits the
    socket timeout for it, then fails as a store that is down does, naming the store."""
    store = RedisStore(f"{redis_url}?max_connections=1&socket_timeout=0.5", prefix="pool-full")
    try:
        async with store.subscribe("waiting"):
            with pytest.raises(redis_asyncio.ConnectionError) as caught:
                await store.put("flow", "k", b"v", ttl=60)
        await store.put("flow", "k", b"v", ttl=60)  # free again once the subscription ends
    finally:
        await store.close()
    assert str(caught.value).startswith(f"Redis store {redis_url}?max_connections=1"), caught.value


async def test_without_max_connections_the_pool_has_no_cap(redis_url: str) -> None:
    """No ``max_connections`` in the URL: no cap (redis-py 8's own pool stops at 100, failing
    the next command at once with "Too many connections"), so 101 waiting subscriptions, as
    101 retries waiting for pages, leave commands working."""
    store = RedisStore(redis_url, prefix=f"pool-{uuid.uuid4().hex[:12]}")
    try:
        async with contextlib.AsyncExitStack() as held:
            for n in range(101):
                await held.enter_async_context(store.subscribe(f"waiting-{n}"))
            await store.put("flow", "k", b"v", ttl=60)
            assert await store.get("flow", "k") == b"v"
    finally:
        await store.close()
