"""``MemoryStore``: the store as a dict, for tests and single-process demos.

Rules:

* Entries live in one dict, ``(namespace, key) -> (value, expires)``; ``expires`` is a
  reading of ``clock`` (``time.monotonic`` unless a test injects its own), so expiry is
  checked on every read and never depends on a timer.
* Expired entries are purged lazily: the one touched on access, and all of them on a
  sweep every ``SWEEP_EVERY`` writes (or ``purge()``), so an idle key cannot pile up.
* Every operation completes without awaiting anything, so ``add`` and ``take`` are
  atomic on the event loop by construction.
* Publish/subscribe is the in-process ``Hub``; nothing is shared with another
  ``MemoryStore`` (each one is its own backend).
* After ``close`` (idempotent) every operation raises ``RuntimeError``.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from contextlib import AbstractAsyncContextManager

from mcp_elicit.stores.base import Subscription
from mcp_elicit.stores.checks import check_channel, check_key, check_ttl, check_value
from mcp_elicit.stores.hub import Hub, SubscriptionSet

__all__ = ["MemoryStore"]

SWEEP_EVERY = 1024


class MemoryStore:
    """A ``Store`` in this process's memory; nothing survives ``close`` or a restart."""

    def __init__(self, *, clock: Callable[[], float] = time.monotonic) -> None:
        self._clock = clock
        self._data: dict[tuple[str, str], tuple[bytes, float | None]] = {}
        self._hub = Hub()
        self._subs = SubscriptionSet(self._hub)
        self._writes = 0
        self._closed = False

    def __repr__(self) -> str:
        return f"MemoryStore({len(self._data)} entries{', closed' if self._closed else ''})"

    async def get(self, namespace: str, key: str) -> bytes | None:
        check_key(namespace, key)
        self._check_open()
        return self._live(namespace, key)

    async def put(self, namespace: str, key: str, value: bytes, *, ttl: float | None = None) -> None:
        check_key(namespace, key)
        check_value(value)
        ttl = check_ttl(ttl)
        self._check_open()
        self._write(namespace, key, value, ttl)

    async def add(self, namespace: str, key: str, value: bytes, *, ttl: float | None = None) -> bool:
        check_key(namespace, key)
        check_value(value)
        ttl = check_ttl(ttl)
        self._check_open()
        if self._live(namespace, key) is not None:
            return False
        self._write(namespace, key, value, ttl)
        return True

    async def take(self, namespace: str, key: str) -> bytes | None:
        check_key(namespace, key)
        self._check_open()
        value = self._live(namespace, key)
        if value is not None:
            del self._data[namespace, key]
        return value

    async def delete(self, namespace: str, key: str) -> bool:
        check_key(namespace, key)
        self._check_open()
        if self._live(namespace, key) is None:
            return False
        del self._data[namespace, key]
        return True

    async def publish(self, channel: str, message: bytes) -> None:
        check_channel(channel)
        check_value(message)
        self._check_open()
        self._hub.publish(channel, message)

    def subscribe(self, channel: str) -> AbstractAsyncContextManager[Subscription]:
        check_channel(channel)
        self._check_open()
        return self._subs.subscribe(channel)

    async def purge(self) -> int:
        """Drop every expired entry now; how many were dropped."""
        self._check_open()
        return self._sweep()

    async def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        self._subs.close()
        self._data.clear()

    # ---- internals ---------------------------------------------------------------------

    def _live(self, namespace: str, key: str) -> bytes | None:
        entry = self._data.get((namespace, key))
        if entry is None:
            return None
        value, expires = entry
        if expires is not None and expires <= self._clock():
            del self._data[namespace, key]
            return None
        return value

    def _write(self, namespace: str, key: str, value: bytes, ttl: float | None) -> None:
        self._data[namespace, key] = (value, None if ttl is None else self._clock() + ttl)
        self._writes += 1
        if self._writes % SWEEP_EVERY == 0:
            self._sweep()

    def _sweep(self) -> int:
        now = self._clock()
        expired = [k for k, (_, expires) in self._data.items() if expires is not None and expires <= now]
        for k in expired:
            del self._data[k]
        return len(expired)

    def _check_open(self) -> None:
        if self._closed:
            raise RuntimeError("the store is closed")
