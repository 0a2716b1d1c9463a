"""In-process publish/subscribe on asyncio, for the stores that serve one process.

A ``Hub`` fans a message out to every subscription open on its channel when ``publish``
is called; each ``LocalSubscription`` queues what it was sent, so a subscriber misses
nothing published after it subscribed, and sees nothing published before.

Rules:

* ``publish`` only appends to queues and never waits. Queues are unbounded (completion
  events are few and small).
* A hub may serve several event loops, each on its own thread (SQLite stores on one file
  in an application and a server embedded beside it): a publish wakes a waiter on another
  loop through that loop's ``call_soon_threadsafe``, and the channel table is locked.
* One task reads a subscription at a time; a second concurrent ``next`` is a bug
  (``RuntimeError``).
* A subscription belongs to the store that opened it; ``close`` ends it, and ``next``
  then raises ``RuntimeError``. Closing one store never ends another store's
  subscriptions, even when they share a hub (two ``SqliteStore`` objects on one file).
* Nothing here crosses a process boundary: that is what Redis is for.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
from collections import deque
from collections.abc import AsyncIterator

from mcp_elicit.stores.checks import check_timeout

__all__ = ["Hub", "LocalSubscription", "SubscriptionSet"]


class LocalSubscription:
    """Messages published on one channel of a ``Hub`` since this subscription began."""

    __slots__ = ("_closed", "_messages", "_waiter", "channel")

    def __init__(self, channel: str) -> None:
        self.channel = channel
        self._messages: deque[bytes] = deque()
        self._waiter: asyncio.Future[None] | None = None
        self._closed = False

    def push(self, message: bytes) -> None:
        if self._closed:
            return
        self._messages.append(message)
        self._wake()

    def close(self) -> None:
        self._closed = True
        self._messages.clear()
        self._wake()

    async def next(self, timeout: float) -> bytes | None:
        """The next message, or None when ``timeout`` seconds pass without one."""
        limit = check_timeout(timeout)
        if self._closed:
            raise RuntimeError("the store that opened this subscription is closed")
        if self._waiter is not None:
            raise RuntimeError("another task is already waiting on this subscription")
        if self._messages:
            return self._messages.popleft()
        if limit == 0:
            return None
        waiter = asyncio.get_running_loop().create_future()
        self._waiter = waiter
        if self._messages:  # pushed from another thread just before the waiter was set
            self._waiter = None
            return self._messages.popleft()
        try:
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(limit):
                    await waiter
        finally:
            self._waiter = None
        if self._closed:
            raise RuntimeError("the store that opened this subscription is closed")
        return self._messages.popleft() if self._messages else None

    def _wake(self) -> None:
        waiter = self._waiter
        if waiter is None or waiter.done():
            return
        loop = waiter.get_loop()
        try:
            here = asyncio.get_running_loop()
        except RuntimeError:
            here = None
        if here is loop:
            waiter.set_result(None)
        else:  # a publish on another loop's thread
            with contextlib.suppress(RuntimeError):  # that loop is closed: nobody waits
                loop.call_soon_threadsafe(_resolve, waiter)


def _resolve(waiter: asyncio.Future[None]) -> None:
    if not waiter.done():
        waiter.set_result(None)


class Hub:
    """Channels of one process: who listens where."""

    __slots__ = ("__weakref__", "_channels", "_lock")

    def __init__(self) -> None:
        self._channels: dict[str, set[LocalSubscription]] = {}
        self._lock = threading.Lock()

    def publish(self, channel: str, message: bytes) -> None:
        with self._lock:
            subs = tuple(self._channels.get(channel, ()))
        for sub in subs:
            sub.push(message)

    def attach(self, sub: LocalSubscription) -> None:
        with self._lock:
            self._channels.setdefault(sub.channel, set()).add(sub)

    def detach(self, sub: LocalSubscription) -> None:
        with self._lock:
            subs = self._channels.get(sub.channel)
            if subs is not None:
                subs.discard(sub)
                if not subs:
                    del self._channels[sub.channel]

    @property
    def listening(self) -> int:
        """How many subscriptions are open, on all channels (for tests and leak checks)."""
        with self._lock:
            return sum(len(subs) for subs in self._channels.values())


class SubscriptionSet:
    """The subscriptions one store opened on a hub, so the store can close them all."""

    __slots__ = ("_hub", "_open")

    def __init__(self, hub: Hub) -> None:
        self._hub = hub
        self._open: set[LocalSubscription] = set()

    @contextlib.asynccontextmanager
    async def subscribe(self, channel: str) -> AsyncIterator[LocalSubscription]:
        sub = LocalSubscription(channel)
        self._hub.attach(sub)
        self._open.add(sub)
        try:
            yield sub
        finally:
            self._end(sub)

    def close(self) -> None:
        for sub in tuple(self._open):
            self._end(sub)

    def _end(self, sub: LocalSubscription) -> None:
        self._open.discard(sub)
        self._hub.detach(sub)
        sub.close()
