"""Completions written together (``StepCompletions.complete_many``) tell nothing of a step
whose marker the store did not take: the markers go first, and the wake-ups and the
relay's notices only once every marker is written. One pipeline for both (no ``MULTI``:
Redis runs every command of it, whatever one before failed) published the wake-up and
the notice of a step whose ``SET`` was refused (an ACL, a Redis out of memory refusing
writes but not ``PUBLISH``): other instances' sessions were told a step done that was
not recorded."""

from __future__ import annotations

import uuid
from typing import Any

import pytest

from mcp_elicit.server import url_steps
from mcp_elicit.server.url_steps import StepCompletions
from mcp_elicit.stores import RedisStore

pytestmark = pytest.mark.anyio


@pytest.fixture
async def raw(redis_url: str) -> Any:
    redis_asyncio = pytest.importorskip("redis.asyncio")
    client = redis_asyncio.Redis.from_url(redis_url)
    yield client
    await client.aclose()


async def test_nothing_is_told_of_a_step_whose_marker_the_store_refused(redis_url: str, raw: Any) -> None:
    refusals = pytest.importorskip("redis.exceptions")
    prefix = f"test-{uuid.uuid4().hex[:12]}"
    written, refused = url_steps._key("pay-1", "alice"), url_steps._key("pay-2", "alice")
    user, password = f"steps-{uuid.uuid4().hex[:8]}", "steps-Pw-1"
    may = f"~{prefix}:{url_steps.NAMESPACE}:{written}"  # the marker of pay-1 only; every channel
    await raw.execute_command("ACL", "SETUSER", user, "on", f">{password}", may, "&*", "+@all")
    full = RedisStore(redis_url, prefix=prefix)
    limited = RedisStore(redis_url.replace("redis://", f"redis://{user}:{password}@"), prefix=prefix)
    try:
        async with full.subscribe(f"{url_steps.NAMESPACE}:{refused}") as woken:
            with pytest.raises(refusals.NoPermissionError):
                await StepCompletions(limited, ttl=60.0).complete_many(
                    [("pay-1", "alice", None), ("pay-2", "alice", ("relay", b"pay-2 is done"))]
                )
            assert await full.get(url_steps.NAMESPACE, refused) is None
            # published after the batch: the first message heard, if nothing was told before it
            await full.publish(f"{url_steps.NAMESPACE}:{refused}", b"after")
            assert await woken.next(30.0) == b"after", "a step not recorded was told done"
    finally:
        await limited.close()
        await full.close()
        await raw.execute_command("ACL", "DELUSER", user)
