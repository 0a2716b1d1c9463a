"""What the memory store promises beyond the contract: expiry by the injected clock to the
instant, a sweep that keeps expired entries from piling up, and no sharing between two
``MemoryStore`` objects."""

from __future__ import annotations

import pytest

from mcp_elicit.stores import MemoryStore
from mcp_elicit.stores import memory as memory_module
from stores.backends import FakeClock

pytestmark = pytest.mark.anyio


async def test_expiry_follows_the_injected_clock_to_the_instant() -> None:
    clock = FakeClock()
    store = MemoryStore(clock=clock)
    await store.put("flow", "k", b"v", ttl=10)
    clock.advance(9.999)
    assert await store.get("flow", "k") == b"v"
    clock.advance(0.001)
    assert await store.get("flow", "k") is None, "an entry is gone at expires, not after"
    await store.close()


async def test_expired_entries_are_swept(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(memory_module, "SWEEP_EVERY", 4)
    clock = FakeClock()
    store = MemoryStore(clock=clock)
    for i in range(3):
        await store.put("flow", f"brief-{i}", b"v", ttl=1)
    clock.advance(2)
    assert repr(store) == "MemoryStore(3 entries)", "nothing read them yet"
    await store.put("flow", "fourth-write", b"v")
    assert repr(store) == "MemoryStore(1 entries)"
    await store.put("flow", "brief", b"v", ttl=1)
    clock.advance(2)
    assert await store.purge() == 1
    await store.close()
    assert repr(store) == "MemoryStore(0 entries, closed)"


async def test_two_memory_stores_share_nothing() -> None:
    a, b = MemoryStore(), MemoryStore()
    await a.put("flow", "k", b"a")
    assert await b.get("flow", "k") is None
    async with b.subscribe("c") as sub:
        await a.publish("c", b"from a")
        assert await sub.next(0.05) is None
    await a.close()
    await b.close()
