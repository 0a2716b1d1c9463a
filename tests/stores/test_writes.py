"""``write_all``: writes sent to a store together, on every backend (one pipeline on Redis,
one call after another elsewhere), applied in order; and a misused write refused before
anything is sent."""

from __future__ import annotations

import uuid
from typing import Any

import pytest

from mcp_elicit.stores import RedisStore, Store
from mcp_elicit.stores.base import misconfigured
from mcp_elicit.stores.writes import Publish, Put, write_all

pytestmark = pytest.mark.anyio


async def test_writes_sent_together_are_applied_in_order(store: Store) -> None:
    async with store.subscribe("done") as subscription:
        await write_all(
            store,
            [
                Put("step", "a", b"1", ttl=60.0),
                Put("step", "b", b"2"),
                Put("step", "a", b"3", ttl=60.0),  # the later put of a key wins
                Publish("done", b"first"),
                Publish("done", b"second"),
            ],
        )
        assert [await subscription.next(10.0), await subscription.next(10.0)] == [b"first", b"second"]
    assert await store.get("step", "a") == b"3"
    assert await store.get("step", "b") == b"2"
    await write_all(store, [])  # nothing to send: nothing sent


async def test_a_misused_write_is_refused_before_any_is_sent(store: Store) -> None:
    with pytest.raises(ValueError, match="key"):
        await write_all(store, [Put("step", "kept", b"1"), Put("step", "", b"2")])
    if hasattr(store, "write_many"):  # together: the first was not sent either
        assert await store.get("step", "kept") is None


async def test_a_refused_pipeline_says_what_to_grant_without_the_values_sent(
    redis_url: str, raw: Any
) -> None:
    """A Redis user without the store's channels: the batch's error is Redis's own words
    and the store's advice, as a single publish's is, not redis-py's note of the command
    (which quoted the values sent, and kept the advice from being added)."""
    refusals = pytest.importorskip("redis.exceptions")
    user, password = f"writer-{uuid.uuid4().hex[:8]}", "writer-Pw-1"
    await raw.execute_command("ACL", "SETUSER", user, "on", f">{password}", "~*", "resetchannels", "+@all")
    prefix = f"test-{uuid.uuid4().hex[:12]}"
    store = RedisStore(redis_url.replace("redis://", f"redis://{user}:{password}@"), prefix=prefix)
    try:
        with pytest.raises(refusals.NoPermissionError) as caught:
            await write_all(store, [Put("step", "k", b"secret-marker"), Publish("step:k", b"complete")])
        text = str(caught.value)
        assert misconfigured(caught.value), text
        assert f"give the user ~{prefix}:* &{prefix}:*" in text, text
        assert "pipeline" not in text and "secret-marker" not in text and password not in text, text
    finally:
        await store.close()
        await raw.execute_command("ACL", "DELUSER", user)
