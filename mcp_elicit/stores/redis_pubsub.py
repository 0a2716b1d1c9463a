"""``RedisSubscription``: one ``PubSub`` connection of a ``RedisStore`` listening on one
channel, and how the store runs redis-py's work on tasks of its own.

Rules (the store's module docstring says what a subscription promises its reader):

* ``start`` returns once Redis has confirmed ``SUBSCRIBE``, within the socket timeout
  (``SUBSCRIBE_TIMEOUT`` at most), else ``redis.TimeoutError``.
* ``next`` reads on a task of its own, in slices of at most the health-check interval,
  pinging a connection silent that long; a connection lost is opened and subscribed again
  once within the same ``next`` (a warning says messages were lost).
* ``ended`` and ``stopped`` make a cancellation of redis-py's work stick, always: redis-py
  writes with ``asyncio.wait_for``, which on Python 3.11 can drop a cancellation.
* ``import_redis`` imports ``redis.asyncio`` when a store is made; without it the
  ``ConfigError`` names the ``mcp-elicit[redis]`` extra.
"""

from __future__ import annotations

import asyncio
import logging
from types import ModuleType
from typing import TYPE_CHECKING, Any

from mcp_elicit.errors import ConfigError
from mcp_elicit.stores.checks import check_timeout
from mcp_elicit.stores.closed_loops import let_go

if TYPE_CHECKING:
    from redis.asyncio.client import PubSub

__all__ = [
    "HEALTH_CHECK_INTERVAL",
    "SUBSCRIBE_TIMEOUT",
    "RedisSubscription",
    "as_bytes",
    "ended",
    "import_redis",
    "stopped",
]

log = logging.getLogger("mcp_elicit.stores")

#: Seconds a subscription may stay silent before it checks its connection with a PING.
HEALTH_CHECK_INTERVAL = 15.0
SUBSCRIBE_TIMEOUT = 10.0
#: Seconds until a task redis-py did not let end when cancelled is cancelled again.
_CANCEL_AGAIN = 0.05
_MISSING = "the Redis store needs the redis package: pip install 'mcp-elicit[redis]'"


class RedisSubscription:
    """One ``PubSub`` connection listening on one channel.

    ``next`` reads on a task of its own, so ``aclose`` can stop a waiting reader without
    letting redis-py reconnect underneath it, and a cancelled ``next`` ends whatever
    redis-py does with the cancellation. It reads in slices of at most
    ``health_check`` seconds (never an unbounded read, whose meaning changed between
    redis-py versions), pinging the server when a slice passed in silence.
    """

    def __init__(
        self,
        pubsub: PubSub,
        health_check: float,
        reply_within: float,
        where: str = "",
        *,
        subscribe_within: float = SUBSCRIBE_TIMEOUT,
    ) -> None:
        self._pubsub = pubsub
        self._where = where
        self._health_check = health_check
        self._reply_within = reply_within
        self._subscribe_within = subscribe_within
        self._heard = 0.0  # loop time the connection last brought something
        self._pinged: float | None = None  # loop time of a PING not answered yet
        self._reader: asyncio.Task[bytes | None] | None = None
        self._closed = False

    async def start(self, name: bytes) -> None:
        """Subscribe, and return once Redis has confirmed it: within ``reply_within`` (the
        socket timeout, as for any command), else ``redis.TimeoutError``."""
        loop = asyncio.get_running_loop()
        within = min(self._reply_within, self._subscribe_within)
        deadline = loop.time() + within
        await self._pubsub.subscribe(name)
        while True:
            message = await self._pubsub.get_message(timeout=max(0.0, deadline - loop.time()))
            if message is not None and message["type"] == "subscribe":
                self._heard = loop.time()
                return
            if loop.time() >= deadline:
                raise import_redis().TimeoutError(
                    f"Redis at {self._where or 'its URL'} did not confirm a subscription within {within:g} s"
                )

    async def next(self, timeout: float) -> bytes | None:
        """The next message, or None when ``timeout`` seconds pass without one."""
        limit = check_timeout(timeout)
        if self._closed:
            raise RuntimeError("the store that opened this subscription is closed")
        if self._reader is not None:
            raise RuntimeError("another task is already waiting on this subscription")
        reader = asyncio.ensure_future(self._read(limit))
        self._reader = reader
        try:
            await ended(reader)
        finally:
            self._reader = None
        if reader.cancelled():  # by ``aclose``
            raise RuntimeError("the store that opened this subscription is closed")
        return reader.result()

    async def aclose(self) -> None:
        if self._closed:
            return
        self._closed = True
        reader = self._reader
        if reader is not None:
            await stopped(reader)
        await self._pubsub.aclose()  # type: ignore[no-untyped-call, unused-ignore]  # untyped before redis-py 8.2

    def let_go(self) -> None:
        """Its store's event loop is closed: let go of the reader (its connection is the
        store's to shut down)."""
        self._closed = True
        if self._reader is not None:
            let_go(self._reader)

    async def _read(self, limit: float | None) -> bytes | None:
        """Read until a message arrives or ``limit`` seconds pass (None: no limit)."""
        aioredis = import_redis()
        failed = (aioredis.ConnectionError, aioredis.TimeoutError)
        loop = asyncio.get_running_loop()
        deadline = None if limit is None else loop.time() + limit
        reconnecting = False  # the connection failed: the next read connects and subscribes again
        while True:
            now = loop.time()
            try:
                if self._pinged is not None and now >= self._pinged + self._reply_within:
                    self._pinged = None
                    raise aioredis.TimeoutError(f"Redis did not answer a PING within {self._reply_within} s")
                if self._pinged is None and now >= self._heard + self._health_check:
                    await self._pubsub.ping(b"mcp-elicit")
                    self._pinged = now
                if self._pinged is None:  # wake to ping, or to give up on the PONG
                    wake = self._heard + self._health_check
                else:
                    wake = self._pinged + self._reply_within
                if deadline is not None:
                    wake = min(wake, deadline)
                message = await self._pubsub.get_message(timeout=max(0.0, wake - loop.time()))
            except failed as exc:
                if reconnecting:  # connecting again failed too: the server is gone
                    raise type(exc)(f"Redis store {self._where or 'subscription'}: {exc}") from exc
                log.warning(
                    "Redis store %s: a subscription lost its connection (%s); subscribing again, "
                    "messages published until then are lost",
                    self._where or "(unnamed)",
                    exc,
                )
                reconnecting = True
                self._heard = loop.time()
                await self._drop()
                continue
            if message is not None:  # anything (a message, a PONG, a confirmation): it is alive
                self._heard, self._pinged, reconnecting = loop.time(), None, False
                if message["type"] == "message":
                    return as_bytes(message["data"])
            if deadline is not None and loop.time() >= deadline:
                return None

    async def _drop(self) -> None:
        """Close the connection (dead or closed by Redis): the next read opens it again."""
        connection = self._pubsub.connection
        if connection is not None:
            await connection.disconnect()


async def ended(task: asyncio.Future[Any]) -> None:
    """Wait until ``task`` has ended. Cancelled meanwhile: stop it (:func:`stopped`), then
    raise ``CancelledError``, always. Awaiting redis-py directly would not: it writes a
    command with ``asyncio.wait_for``, which on Python 3.11 returns a write that ended in
    the same turn as a cancellation and drops the cancellation, so a task stopped while it
    connected or subscribed went on, and whoever stopped it waited for ever."""
    try:
        await asyncio.wait({task})
    except asyncio.CancelledError:
        await stopped(task)
        raise


async def stopped(task: asyncio.Future[Any]) -> None:
    """Cancel ``task`` until it has ended (redis-py may drop a cancellation, see
    :func:`ended`: the next one, a moment later, finds it waiting for a reply), its outcome
    retrieved. A cancellation of the waiting task meanwhile is raised once it has ended."""
    cancelled = False
    while not task.done():
        task.cancel()
        try:
            await asyncio.wait({task}, timeout=_CANCEL_AGAIN)
        except asyncio.CancelledError:
            cancelled = True
    if not task.cancelled():
        task.exception()  # retrieved: never logged as lost, the waiter has its own outcome
    if cancelled:
        raise asyncio.CancelledError


def import_redis() -> ModuleType:
    try:
        import redis.asyncio as aioredis
    except ImportError as exc:
        raise ConfigError(_MISSING) from exc
    return aioredis


def as_bytes(value: Any) -> bytes | None:
    return None if value is None else bytes(value)
