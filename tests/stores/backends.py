"""The backends the store tests run on, as ``Backend`` objects (see ``conftest.py``)."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass, field

from mcp_elicit.stores import Store

__all__ = ["BACKENDS", "Backend", "FakeClock"]

BACKENDS = ["memory", "sqlite", "redis"]


class FakeClock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += seconds


@dataclass
class Backend:
    name: str
    opener: Callable[[], Store]
    clock: FakeClock | None = None
    stores: list[Store] = field(default_factory=list)

    @property
    def ttl(self) -> float:
        """A short time to live for the expiry tests: real seconds on Redis, where nothing
        can stop the clock, so long enough that the steps before the wait are within it."""
        return 0.4 if self.clock is not None else 1.5

    @property
    def shared_by_objects(self) -> bool:
        """Whether two store objects are two clients of one backend (not one object)."""
        return self.name != "memory"

    def open(self) -> Store:
        store = self.opener()
        if store not in self.stores:
            self.stores.append(store)
        return store

    async def elapse(self, seconds: float) -> None:
        if self.clock is not None:
            self.clock.advance(seconds)
        else:
            await asyncio.sleep(seconds)

    async def close_all(self) -> None:
        for store in self.stores:
            await store.close()
