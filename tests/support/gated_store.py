"""A store whose writes can be held, so that two requests racing for one flow meet in the
same window on every run (``test_pages_race``, ``test_oauth_race``).

Once its ``Gate`` is ``armed``, the first write to a namespace in ``holds`` (the vault
entry a request keeps) waits until another request (another task) has written to a
namespace in ``counts`` (None: any), or ``HOLD`` seconds passed: the widest window two
saves of one flow can meet in. The gate is shared by the stores of every instance.

``HeldLookup`` holds a read instead: once ``armed``, the first ``get`` of a key in a
namespace waits until the test ``release``s it (or ``HOLD`` seconds passed), so a test can
end or start flows while a request waits on that lookup (``test_flow_quota``).
"""

from __future__ import annotations

import asyncio
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass, field

from mcp_elicit.stores import Store, Subscription

__all__ = ["HOLD", "Gate", "GatedStore", "HeldLookup"]

#: Seconds the held write waits at most for the other request.
HOLD = 10.0


@dataclass
class Gate:
    """Once ``armed``, the first write to ``holds`` waits until another task has written
    to ``counts`` (None: anything)."""

    holds: frozenset[str] = frozenset({"vault"})
    counts: frozenset[str] | None = None
    armed: bool = False
    held: asyncio.Task[object] | None = None
    writers: set[asyncio.Task[object]] = field(default_factory=set)
    other_wrote: asyncio.Event = field(default_factory=asyncio.Event)

    async def write(self, namespace: str) -> None:
        task = asyncio.current_task()
        if not self.armed or task is None or (self.counts is not None and namespace not in self.counts):
            return
        self.writers.add(task)
        if self.held is None and namespace in self.holds:
            self.held = task
            if self.writers - {task}:
                return
            try:
                async with asyncio.timeout(HOLD):
                    await self.other_wrote.wait()
            except TimeoutError:
                pass
        elif self.held is not None and task is not self.held:
            self.other_wrote.set()


class GatedStore:
    """``inner``, its writes passing through ``gate`` first."""

    def __init__(self, inner: Store, gate: Gate) -> None:
        self.inner = inner
        self.gate = gate

    async def get(self, namespace: str, key: str) -> bytes | None:
        return await self.inner.get(namespace, key)

    async def put(self, namespace: str, key: str, value: bytes, *, ttl: float | None = None) -> None:
        await self.gate.write(namespace)
        await self.inner.put(namespace, key, value, ttl=ttl)

    async def add(self, namespace: str, key: str, value: bytes, *, ttl: float | None = None) -> bool:
        await self.gate.write(namespace)
        return await self.inner.add(namespace, key, value, ttl=ttl)

    async def take(self, namespace: str, key: str) -> bytes | None:
        await self.gate.write(namespace)
        return await self.inner.take(namespace, key)

    async def delete(self, namespace: str, key: str) -> bool:
        await self.gate.write(namespace)
        return await self.inner.delete(namespace, key)

    async def publish(self, channel: str, message: bytes) -> None:
        await self.inner.publish(channel, message)

    def subscribe(self, channel: str) -> AbstractAsyncContextManager[Subscription]:
        return self.inner.subscribe(channel)

    async def close(self) -> None:
        await self.inner.close()


class HeldLookup(GatedStore):
    """``inner``, the first ``get`` in ``namespace`` of a key starting with ``prefix``
    after ``arm`` waiting for ``release`` (``waiting`` is set once it does)."""

    def __init__(self, inner: Store, namespace: str, prefix: str = "") -> None:
        super().__init__(inner, Gate())
        self.namespace, self.prefix = namespace, prefix
        self.armed = False
        self.waiting = asyncio.Event()
        self.released = asyncio.Event()

    def arm(self) -> None:
        self.armed = True

    def release(self) -> None:
        self.released.set()

    async def get(self, namespace: str, key: str) -> bytes | None:
        if self.armed and namespace == self.namespace and key.startswith(self.prefix):
            self.armed = False
            self.waiting.set()
            try:
                async with asyncio.timeout(HOLD):
                    await self.released.wait()
            except TimeoutError:
                pass
        return await self.inner.get(namespace, key)
