"""The relay on a real Redis: servers sharing one, started and stopped together, stop
whenever they are stopped (their relays subscribing, or listening), leaving no task
running and no connection open."""

from __future__ import annotations

import asyncio
import uuid

import pytest

from mcp_elicit import Server

from support.waiting import eventually, hang_guard

pytestmark = pytest.mark.anyio

#: Loop turns let pass between the start and the stop: the relays are still connecting and
#: subscribing at first, then listening. Each stop is cancelled at another point.
TURNS = range(30)


@pytest.mark.parametrize("count", [1, 4])
async def test_servers_sharing_a_redis_stop_together_at_any_point_of_their_start(
    redis_url: str, count: int
) -> None:
    # redis-py writes a command with asyncio.wait_for, which on Python 3.11 returns a
    # write that ends in the same turn as a cancellation and drops the cancellation: a
    # relay stopped while it subscribed went on subscribing, and its stop waited for ever.
    from redis.asyncio import Redis

    admin = Redis.from_url(redis_url)
    try:
        connected = len(await admin.client_list())
        running = asyncio.all_tasks()

        async def closed() -> bool:  # Redis drops a closed connection a moment later
            return len(await admin.client_list()) == connected

        for turns in TURNS:
            store = f"{redis_url}?prefix=test-{uuid.uuid4().hex[:12]}"
            servers = [Server("s", store=store) for _ in range(count)]
            await asyncio.gather(*(server.start() for server in servers))
            for _ in range(turns):
                await asyncio.sleep(0)
            async with hang_guard(f"stopped after {turns} turns", 10.0):  # fails a stop that hangs
                await asyncio.gather(*(server.stop() for server in servers))
            assert asyncio.all_tasks() == running, f"stopped after {turns} turns: a task is left"
            await eventually(closed, f"stopped after {turns} turns: every connection is closed")
    finally:
        await admin.aclose()
