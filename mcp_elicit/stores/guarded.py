"""``Guarded``: a store as the server's requests use it, whose backend's failures are
``StoreUnavailable`` (-32603, HTTP 503, try again) instead of the backend's own error.

Rules:

* Only a failing backend is translated (``backend_errors()``: ``redis.RedisError``,
  ``sqlite3.Error``, ``OSError``, a ``ConfigError`` from a file opened late); argument
  misuse (``ValueError``, ``TypeError``) and a closed store (``RuntimeError``) are bugs
  and pass unchanged, as does anything raised by the code inside a ``subscribe`` block.
* The client is told nothing of the cause, which names the store's host, port or file;
  the ``mcp_elicit.stores`` log says which store (password hidden) and what it said, as an
  error line without a traceback when an outage begins, then once a minute while it lasts
  (with how many calls failed), and that the store answers again when it does
  (``FailureLog``): not once per call, since every request that needs the store fails
  while it is down. One ``Guarded`` per store keeps that count (``UrlMode.guarded``).
  Keys and channels are told apart (``KEYS``, ``CHANNELS``; ``WRITES`` for both sent
  together): a Redis user whose channels are taken away fails its publishes only, and a
  put that succeeds between two of them is no end of that outage.
* A failure is never read as an answer: ``add`` and ``take`` raise, so a single-use
  marker or link is refused while the store is down, never accepted twice.
* ``close`` and the subscription's end are passed through: what owns the store closes it.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import AsyncIterator, Awaitable, Sequence
from contextlib import AbstractAsyncContextManager
from typing import TypeVar

from mcp_elicit.errors import StoreUnavailable
from mcp_elicit.stores.base import Store, Subscription, backend_errors
from mcp_elicit.stores.failure_log import FailureLog
from mcp_elicit.stores.writes import Write, write_all

__all__ = ["Guarded"]

T = TypeVar("T")

log = logging.getLogger("mcp_elicit.stores")

#: The kinds of call whose failures are told apart (``FailureLog``).
KEYS, CHANNELS, WRITES = "keys", "channels", "writes"


class Guarded:
    """``store`` (named ``where`` in the log), failing with ``StoreUnavailable``."""

    def __init__(self, store: Store, where: str) -> None:
        self.inner = store
        self.where = where
        self._failures = backend_errors()
        self.outage = FailureLog(log, f"the store {where} failed", f"the store {where} answers again")

    def __repr__(self) -> str:
        return f"Guarded({self.inner!r})"

    async def get(self, namespace: str, key: str) -> bytes | None:
        return await self._call(self.inner.get(namespace, key), KEYS)

    async def put(self, namespace: str, key: str, value: bytes, *, ttl: float | None = None) -> None:
        await self._call(self.inner.put(namespace, key, value, ttl=ttl), KEYS)

    async def add(self, namespace: str, key: str, value: bytes, *, ttl: float | None = None) -> bool:
        return await self._call(self.inner.add(namespace, key, value, ttl=ttl), KEYS)

    async def take(self, namespace: str, key: str) -> bytes | None:
        return await self._call(self.inner.take(namespace, key), KEYS)

    async def delete(self, namespace: str, key: str) -> bool:
        return await self._call(self.inner.delete(namespace, key), KEYS)

    async def publish(self, channel: str, message: bytes) -> None:
        await self._call(self.inner.publish(channel, message), CHANNELS)

    async def write_many(self, writes: Sequence[Write]) -> None:
        await self._call(write_all(self.inner, writes), WRITES)

    def subscribe(self, channel: str) -> AbstractAsyncContextManager[Subscription]:
        return self._subscription(channel)

    async def close(self) -> None:
        await self.inner.close()

    @contextlib.asynccontextmanager
    async def _subscription(self, channel: str) -> AsyncIterator[Subscription]:
        async with contextlib.AsyncExitStack() as stack:
            sub = await self._call(stack.enter_async_context(self.inner.subscribe(channel)), CHANNELS)
            yield _GuardedSubscription(sub, self)

    async def _call(self, command: Awaitable[T], kind: str) -> T:
        try:
            done = await command
        except self._failures as exc:
            self.outage.failed(exc, kind)
            raise StoreUnavailable() from exc
        self.outage.answered(kind)
        return done


class _GuardedSubscription:
    def __init__(self, sub: Subscription, store: Guarded) -> None:
        self._sub = sub
        self._store = store

    async def next(self, timeout: float) -> bytes | None:
        return await self._store._call(self._sub.next(timeout), CHANNELS)
