"""``write_all``: writes sent to a store together, on every backend (one pipeline on Redis,
one call after another elsewhere), applied in order; and a misused write refused before
anything is sent."""

from __future__ import annotations

import pytest

from mcp_elicit.stores import Store
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
    with pytest.raises(ValueError):
        await write_all(store, [Put("step", "kept", b"1"), Put("step", "", b"2")])
    if hasattr(store, "write_many"):  # together: the first was not sent either
        assert await store.get("step", "kept") is None
