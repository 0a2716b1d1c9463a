"""``RedisStore``: the store for several instances, on ``redis.asyncio``.

Rules:

* An entry lives at the Redis key ``{prefix}:{namespace}:{key}`` and a channel at
  ``{prefix}:{channel}`` (prefix ``mcp-elicit`` unless set; letters, digits, ``_.-``), so
  an ACL user can be confined to ``~mcp-elicit:* &mcp-elicit:*``. Namespaces never hold
  ``:`` and prefixes never do either, so two names never meet.
* A time to live becomes ``PX`` (milliseconds, rounded up); Redis itself expires keys.
  Redis refuses an expiry past its 64-bit clock, so ``PX`` stops at ``MAX_PX`` (some
  146 million years): a longer time to live means the same there.
* ``add`` is ``SET NX PX`` and ``take`` is ``GETDEL`` (Redis 6.2 or later): single
  commands, atomic across every instance using the server.
* ``write_many`` sends its ``SET``s and ``PUBLISH``es in one pipeline (no ``MULTI``, which an
  ACL user granted the store's commands may lack): one round trip, in order, not atomic;
  Redis runs every command of it, those after one that fails included.
* ``subscribe`` opens one ``PubSub`` connection per subscription and returns only once
  Redis has confirmed ``SUBSCRIBE`` (no confirmation within ``socket_timeout`` is a
  ``redis.TimeoutError`` naming the server), so a publish from any instance after that point is
  seen. Messages published while a subscription's connection is down are lost (Redis
  pub/sub keeps nothing): waiters re-check the state whenever ``next`` times out. A
  connection Redis closes (a failover, a client kill, an output buffer limit) is opened
  again and subscribed again by the next read, within the same ``next``, with a warning
  on the ``mcp_elicit.stores`` logger (messages were lost); only when that fails too (the
  server is gone) does ``next`` raise.
* Nothing waits for ever on a server that went silent (a partition, a NAT that forgot the
  connection: no reset arrives), whatever redis-py's defaults: connecting stops after
  ``socket_connect_timeout`` (5 s) and a command's reply after ``socket_timeout`` (10 s),
  unless the URL gives its own. A subscription silent for ``health_check_interval``
  seconds (the URL's, else 15) sends a ``PING`` on its connection; no reply within
  ``socket_timeout`` means the connection is dead, and it is opened and subscribed again
  as a closed one is (so a subscription waiting without limit, as the server's relay
  does, never goes deaf for good).
* Without ``?max_connections=`` the connections have no cap (redis-py 8 would stop at 100,
  failing the 101st command or subscription at once).
* ``?max_connections=N`` caps the store's connections, subscriptions included (each holds
  one while it lasts): a command or subscription finding none free waits for one up to the
  socket timeout, then fails naming the store and the cap to raise (redis-py's plain pool
  fails at once).
* ``redis`` is imported when a store is made, never at module import; without it the
  error names the ``mcp-elicit[redis]`` extra. URL passwords never appear in messages.
* Redis errors (connection refused, timeouts, a refused password, a database number the
  server lacks) propagate as ``redis`` exceptions of the same class, saying which store
  (its URL, password hidden); a password missing or refused also says where it goes in
  the URL, a refused connection asks whether Redis runs there, a ``ssl_ca_certs`` file
  that cannot be read is named, a key or channel an ACL user may not use (``NOPERM``)
  names the prefix's patterns, a command it may not run names every command the store
  sends, a database number the server lacks says to give one below its ``databases``,
  and a ``rediss://`` that cannot connect asks whether TLS is on there. Such refusals of
  the configuration (``stores.base.misconfigured``) fail at Redis's first answer: the
  store's connections never try a command again. Something that is not Redis on the port (a web server)
  is a ``redis.InvalidResponse`` naming the store, whatever redis-py made of its reply.
  ``stores/redis_errors.py`` words them; a pipeline's (``write_many``) reads as a single
  command's does, quoting no value sent.
* ``close`` (idempotent) refuses new calls at once, waits for the commands under way
  (each ends within the socket timeout; one cut by the close would leave its caller told
  "Connection closed by server" of a write Redis may have made, or dropped), then ends
  the subscriptions (a waiting ``next`` raises ``RuntimeError``) and closes the
  connection pool. A cancelled ``close`` ends at once and the closing goes on; a later
  ``close`` waits for it.
* Connections belong to the event loop that opened them. Used on another loop once that
  one is closed (``asyncio.run`` called again, a loop on a thread replaced), the store
  lets go of them (below) and opens new ones there, rather than failing every call with
  redis-py's "attached to a different loop"; what was still under way on the closed loop
  is lost, and a warning says so. Letting go works on redis-py's and asyncio's internals
  (uvloop's too): one that fails there is a warning, never raised, and the old connections
  are left to the collector.
* A store whose event loop closed before its work ended (a loop on another thread
  stopped, a ``close`` cut short as its loop ended) is closed by a ``close`` on another
  loop: what it had under way is let go of and its connections shut down
  (``stores.closed_loops``), with nothing said on stderr; the commands then under way
  never return to their callers, whose loop is gone, and Redis runs only those it had
  received whole. A subscription whose block is left as its holder's task is let go of
  there (a server's relay, on its next start on a new loop) is let go of so too, its
  connection shut down, not closed through the closed loop (which failed and left it
  open, where the store's close no longer found it).
* A cancelled command, subscription or ``next`` is cancelled, at once and always: each runs
  on a task of its own, cancelled again until it has ended. redis-py alone does not
  promise it: it writes with ``asyncio.wait_for``, which on Python 3.11 drops a
  cancellation that comes as a write ends, and a server's relay stopped while it
  subscribed went on for ever.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import math
import os
import re
from collections.abc import AsyncIterator, Awaitable, Sequence
from contextlib import AbstractAsyncContextManager
from types import ModuleType
from typing import TYPE_CHECKING, Any, TypeVar
from urllib.parse import parse_qs, urlsplit

from mcp_elicit.errors import ConfigError
from mcp_elicit.stores.base import Subscription
from mcp_elicit.stores.checks import check_channel, check_key, check_ttl, check_value
from mcp_elicit.stores.closed_loops import let_go, let_go_of_code, shut_down
from mcp_elicit.stores.redis_errors import first_error, worded
from mcp_elicit.stores.redis_pubsub import (
    HEALTH_CHECK_INTERVAL,
    SUBSCRIBE_TIMEOUT,
    RedisSubscription,
    as_bytes,
    ended,
    import_redis,
)
from mcp_elicit.stores.redis_url import redact_url, shown_valid_url, split_url
from mcp_elicit.stores.writes import Put, Write

if TYPE_CHECKING:
    from redis.asyncio import Redis

__all__ = ["RedisStore", "RedisSubscription", "redact_url"]

T = TypeVar("T")

log = logging.getLogger("mcp_elicit.stores")

DEFAULT_PREFIX = "mcp-elicit"
CONNECT_TIMEOUT = 5.0
SOCKET_TIMEOUT = 10.0
#: The longest ``PX`` sent: Redis adds it to its clock in milliseconds, as a signed 64-bit integer.
MAX_PX = 2**62
_PREFIX = re.compile(r"[A-Za-z0-9_.-]{1,64}")


class RedisStore:
    """A ``Store`` on a Redis server (``redis://host:port/db`` or ``rediss://``)."""

    def __init__(self, url: str = "redis://127.0.0.1:6379/0", *, prefix: str | None = None) -> None:
        redis_url, url_prefix = split_url(url)
        chosen = prefix if prefix is not None else url_prefix if url_prefix is not None else DEFAULT_PREFIX
        if not _PREFIX.fullmatch(chosen):
            raise ConfigError(
                f"Redis key prefix {chosen!r}: expected 1 to 64 letters, digits, '_', '.' or '-'"
            )
        aioredis = import_redis()
        try:
            client = _client(aioredis, redis_url)
        except (ValueError, TypeError) as exc:
            raise ConfigError(f"Redis URL {redact_url(url)!r}: {exc}") from exc
        self.url = shown_valid_url(url)
        self.prefix = chosen
        self._redis_url = redis_url
        self._client = client
        options = client.connection_pool.connection_kwargs
        self._health_check = float(options.get("health_check_interval") or HEALTH_CHECK_INTERVAL)
        self._reply_within = float(options.get("socket_timeout") or SOCKET_TIMEOUT)
        self._ca_file: str | None = options.get("ssl_ca_certs")
        self._subs: set[RedisSubscription] = set()
        self._closed = False  # no more calls
        self._loop: asyncio.AbstractEventLoop | None = None  # where its connections live
        self._commands: set[asyncio.Future[Any]] = set()  # under way
        self._closing: asyncio.Task[None] | None = None
        self._shut = False  # its connections closed (or let go of)
        self._closing_writers: list[asyncio.StreamWriter] = []

    def __repr__(self) -> str:
        return f"RedisStore({self.url!r}, prefix={self.prefix!r}{', closed' if self._closed else ''})"

    async def get(self, namespace: str, key: str) -> bytes | None:
        name = self._key(namespace, key)
        return as_bytes(await self._named(self._client.get(name)))

    async def put(self, namespace: str, key: str, value: bytes, *, ttl: float | None = None) -> None:
        name = self._key(namespace, key)
        check_value(value)
        ttl = check_ttl(ttl)
        await self._named(self._client.set(name, value, px=_px(ttl)))

    async def add(self, namespace: str, key: str, value: bytes, *, ttl: float | None = None) -> bool:
        name = self._key(namespace, key)
        check_value(value)
        ttl = check_ttl(ttl)
        return bool(await self._named(self._client.set(name, value, nx=True, px=_px(ttl))))

    async def take(self, namespace: str, key: str) -> bytes | None:
        name = self._key(namespace, key)
        try:
            return as_bytes(await self._named(self._client.getdel(name)))
        except Exception as exc:
            if type(exc).__name__ == "ResponseError" and "unknown command" in str(exc).lower():
                raise ConfigError("the Redis store needs Redis 6.2 or later (GETDEL)") from exc
            raise

    async def delete(self, namespace: str, key: str) -> bool:
        name = self._key(namespace, key)
        return bool(await self._named(self._client.delete(name)))

    async def publish(self, channel: str, message: bytes) -> None:
        name = self._channel(channel)
        check_value(message)
        self._follow_loop()
        await self._named(self._client.publish(name, message))

    async def write_many(self, writes: Sequence[Write]) -> None:
        """``writes`` in order, sent in one pipeline: one round trip (``stores.writes``)."""
        commands: list[tuple[Any, ...]] = []  # checked before anything is sent
        for write in writes:
            check_value(write.value if isinstance(write, Put) else write.message)
            if isinstance(write, Put):
                px = ("PX", _px(check_ttl(write.ttl))) if write.ttl is not None else ()
                commands.append(("SET", self._key(write.namespace, write.key), write.value, *px))
            else:
                commands.append(("PUBLISH", self._channel(write.channel), write.message))
        self._follow_loop()  # before the pipeline is made on the client
        pipe = self._client.pipeline(transaction=False)  # MULTI would need one right more
        for command in commands:
            pipe.execute_command(*command)
        # its errors as Redis gave them: redis-py's raise quotes the command, values included
        await self._named(first_error(pipe.execute(raise_on_error=False)))

    def subscribe(self, channel: str) -> AbstractAsyncContextManager[Subscription]:
        return self._subscription(self._channel(channel))

    async def close(self) -> None:
        self._closed = True
        if self._shut:
            return
        if self._loop is not None and self._loop.is_closed():
            self._let_go()
            return
        if self._closing is None:
            self._loop = self._loop or asyncio.get_running_loop()
            self._closing = asyncio.ensure_future(self._close_all())
        await asyncio.shield(self._closing)  # cancelled, the closing goes on

    async def _close_all(self) -> None:
        loop = asyncio.get_running_loop()
        under_way = {task for task in self._commands if task.get_loop() is loop}
        if under_way:  # each ends within the socket timeout
            await asyncio.wait(under_way)
        # kept: a close its loop cuts short has taken them from their connections, closing
        # them through that loop, which may never do it (``_let_go`` shuts them down)
        self._closing_writers = self._writers()
        try:
            for sub in tuple(self._subs):
                await sub.aclose()
        finally:
            await self._client.aclose()
            self._shut = True

    def _let_go(self) -> None:
        """The store's event loop is closed: let go of what it left under way, and shut its
        connections down (closing them would go through that loop)."""
        self._shut = True
        self._let_go_of_loop()

    def _follow_loop(self) -> None:
        """Before a call: the store's connections belong to the event loop that made them.
        That loop closed with them open (stopped from another thread, never closing the
        store): let go of them and of what it left under way, and make new ones here."""
        loop = asyncio.get_running_loop()
        if self._loop is None or not self._loop.is_closed():
            self._loop = self._loop or loop
            return  # its own loop (another one still running: redis-py says so)
        if self._subs or any(not task.done() for task in self._commands):
            log.warning(
                "Redis store %s: the event loop its connections belonged to was closed while it "
                "worked; what was under way there is lost, and new connections open on this loop",
                self.url,
            )
        self._let_go_of_loop()
        self._subs.clear()
        self._commands.clear()  # never to end: a close must not wait for them
        self._client = _client(import_redis(), self._redis_url)
        self._loop = loop

    def _let_go_of_loop(self) -> None:
        # on redis-py's and asyncio's internals: one that changed is logged, never raised (a
        # raise here would fail every later call, the store never moving to the new loop)
        try:
            self._let_go_of_connections()
        except Exception as exc:
            log.warning(
                "Redis store %s: what its closed event loop left could not all be let go of "
                "(%s: %s); its connections end when collected",
                self.url,
                type(exc).__name__,
                exc,
            )

    def _let_go_of_connections(self) -> None:
        held = self._connections()
        writers = [*self._closing_writers, *(getattr(c, "_writer", None) for c in held)]  # before
        for task in (*self._commands, *(() if self._closing is None else (self._closing,))):
            let_go(task)  # (redis-py's clean-up, run by this, takes the writers)
        if self._loop is not None:  # and what redis-py began for them (gather's, wait_for's)
            let_go_of_code(self._loop, os.path.dirname(os.path.dirname(import_redis().__file__ or "")))
        for writer in writers:
            shut_down(writer)
        for connection in held:  # forgets them: nothing open left for its collector to report
            with contextlib.suppress(Exception):
                connection._close()
        for sub in tuple(self._subs):
            sub.let_go()

    def _connections(self) -> list[Any]:
        """The store's connections, its subscriptions' included."""
        pool = self._client.connection_pool
        # redis-py has no public list of a pool's connections, nor a close that skips the loop
        held = [
            *getattr(pool, "_available_connections", ()),
            *getattr(pool, "_in_use_connections", ()),
            *(sub._pubsub.connection for sub in self._subs),
        ]
        return [connection for connection in held if connection is not None]

    def _writers(self) -> list[asyncio.StreamWriter]:
        """The streams of the store's connections."""
        writers = [getattr(connection, "_writer", None) for connection in self._connections()]
        return [writer for writer in writers if writer is not None]

    # ---- internals ---------------------------------------------------------------------

    @contextlib.asynccontextmanager
    async def _subscription(self, name: bytes) -> AsyncIterator[RedisSubscription]:
        self._follow_loop()
        sub = RedisSubscription(
            self._client.pubsub(),
            self._health_check,
            self._reply_within,
            self.url,
            subscribe_within=SUBSCRIBE_TIMEOUT,
        )
        self._subs.add(sub)
        try:
            await self._named(sub.start(name))
            yield sub
        finally:
            self._subs.discard(sub)
            if self._loop is not None and self._loop.is_closed():  # its holder's task let go of
                _let_go_of_subscription(sub)
            else:
                await sub.aclose()

    async def _named(self, command: Awaitable[T]) -> T:
        """``command``'s result; a Redis error raised again as ``redis_errors.worded`` says it
        (same class, the store's URL in front, password hidden)."""
        try:
            return await self._own_task(command)
        except Exception as exc:
            said = worded(
                exc,
                url=self.url,
                prefix=self.prefix,
                ca_file=self._ca_file,
                cap=lambda: self._client.connection_pool.max_connections,
            )
            if said is None:
                raise
            raise said from exc

    async def _own_task(self, work: Awaitable[T]) -> T:
        """``work``'s result, on a task of its own (see ``redis_pubsub.ended``), counted as under
        way until it ends (``close`` waits for it)."""
        task = asyncio.ensure_future(work)
        self._commands.add(task)
        task.add_done_callback(self._commands.discard)
        await ended(task)
        return task.result()

    def _key(self, namespace: str, key: str) -> bytes:
        check_key(namespace, key)
        self._check_open()
        self._follow_loop()  # before the command is made on the client
        return f"{self.prefix}:{namespace}:{key}".encode("ascii")

    def _channel(self, channel: str) -> bytes:
        check_channel(channel)
        self._check_open()
        return f"{self.prefix}:{channel}".encode("ascii")

    def _check_open(self) -> None:
        if self._closed:
            raise RuntimeError("the store is closed")


def _client(aioredis: ModuleType, redis_url: str) -> Redis:
    """A client on ``redis_url``; with ``max_connections``, on a pool that makes a command
    wait for a free connection (within the socket timeout) rather than fail at once."""
    # redis-py lets the URL's own options override these keyword arguments.
    timeouts = {"socket_connect_timeout": CONNECT_TIMEOUT, "socket_timeout": SOCKET_TIMEOUT}
    if "max_connections" not in parse_qs(urlsplit(redis_url).query):
        # no cap, as documented: redis-py 8's pool stops at 100 and fails the next at once
        client: Redis = aioredis.Redis.from_url(redis_url, max_connections=2**31, **timeouts)
        return client
    pool = aioredis.BlockingConnectionPool.from_url(redis_url, **timeouts)
    pool.timeout = float(pool.connection_kwargs.get("socket_timeout") or SOCKET_TIMEOUT)
    pooled: Redis = aioredis.Redis.from_pool(pool)
    return pooled


def _px(ttl: float | None) -> int | None:
    return None if ttl is None else max(1, math.ceil(min(ttl * 1000, MAX_PX)))


def _let_go_of_subscription(sub: RedisSubscription) -> None:
    """Let go of ``sub``, whose event loop is closed: its reader, then its connection,
    shut down (what ``RedisStore._let_go_of_connections`` does for those it still holds)."""
    connection = sub._pubsub.connection
    writer = getattr(connection, "_writer", None)  # before the reader's clean-up takes it
    sub.let_go()
    shut_down(writer)
    if connection is not None:
        with contextlib.suppress(Exception):
            connection._close()
