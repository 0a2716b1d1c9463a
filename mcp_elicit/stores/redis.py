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
  that cannot be read is named, a key or channel an ACL
  user may not use (``NOPERM``) names the prefix's patterns, and a ``rediss://`` that
  cannot connect asks whether TLS is on there. Something that is not Redis on the port (a web server)
  is a ``redis.InvalidResponse`` naming the store, whatever redis-py made of its reply.
* ``close`` (idempotent) ends the subscriptions (a waiting ``next`` raises
  ``RuntimeError``), then closes the connection pool.
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
import re
from collections.abc import AsyncIterator, Awaitable
from contextlib import AbstractAsyncContextManager
from types import ModuleType
from typing import TYPE_CHECKING, Any, TypeVar
from urllib.parse import parse_qs, urlsplit

from mcp_elicit.errors import ConfigError
from mcp_elicit.stores.base import Subscription
from mcp_elicit.stores.checks import check_channel, check_key, check_timeout, check_ttl, check_value
from mcp_elicit.stores.redis_url import redact_url, shown_valid_url, split_url

if TYPE_CHECKING:
    from redis.asyncio import Redis
    from redis.asyncio.client import PubSub

__all__ = ["RedisStore", "RedisSubscription", "redact_url"]

T = TypeVar("T")

log = logging.getLogger("mcp_elicit.stores")

DEFAULT_PREFIX = "mcp-elicit"
CONNECT_TIMEOUT = 5.0
SOCKET_TIMEOUT = 10.0
#: Seconds a subscription may stay silent before it checks its connection with a PING.
HEALTH_CHECK_INTERVAL = 15.0
SUBSCRIBE_TIMEOUT = 10.0
#: Seconds until a task redis-py did not let end when cancelled is cancelled again.
_CANCEL_AGAIN = 0.05
#: The longest ``PX`` sent: Redis adds it to its clock in milliseconds, as a signed 64-bit integer.
MAX_PX = 2**62
_PREFIX = re.compile(r"[A-Za-z0-9_.-]{1,64}")
_MISSING = "the Redis store needs the redis package: pip install 'mcp-elicit[redis]'"


class RedisStore:
    """A ``Store`` on a Redis server (``redis://host:port/db`` or ``rediss://``)."""

    def __init__(self, url: str = "redis://127.0.0.1:6379/0", *, prefix: str | None = None) -> None:
        redis_url, url_prefix = split_url(url)
        chosen = prefix if prefix is not None else url_prefix if url_prefix is not None else DEFAULT_PREFIX
        if not _PREFIX.fullmatch(chosen):
            raise ConfigError(
                f"Redis key prefix {chosen!r}: expected 1 to 64 letters, digits, '_', '.' or '-'"
            )
        aioredis = _import_redis()
        try:
            client = _client(aioredis, redis_url)
        except (ValueError, TypeError) as exc:
            raise ConfigError(f"Redis URL {redact_url(url)!r}: {exc}") from exc
        self.url = shown_valid_url(url)
        self.prefix = chosen
        self._client = client
        options = client.connection_pool.connection_kwargs
        self._health_check = float(options.get("health_check_interval") or HEALTH_CHECK_INTERVAL)
        self._reply_within = float(options.get("socket_timeout") or SOCKET_TIMEOUT)
        self._ca_file: str | None = options.get("ssl_ca_certs")
        self._subs: set[RedisSubscription] = set()
        self._closed = False

    def __repr__(self) -> str:
        return f"RedisStore({self.url!r}, prefix={self.prefix!r}{', closed' if self._closed else ''})"

    async def get(self, namespace: str, key: str) -> bytes | None:
        name = self._key(namespace, key)
        return _bytes(await self._named(self._client.get(name)))

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
            return _bytes(await self._named(self._client.getdel(name)))
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
        await self._named(self._client.publish(name, message))

    def subscribe(self, channel: str) -> AbstractAsyncContextManager[Subscription]:
        return self._subscription(self._channel(channel))

    async def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        try:
            for sub in tuple(self._subs):
                await sub.aclose()
        finally:
            await self._client.aclose()

    # ---- internals ---------------------------------------------------------------------

    @contextlib.asynccontextmanager
    async def _subscription(self, name: bytes) -> AsyncIterator[RedisSubscription]:
        sub = RedisSubscription(self._client.pubsub(), self._health_check, self._reply_within, self.url)
        self._subs.add(sub)
        try:
            await self._named(sub.start(name))
            yield sub
        finally:
            self._subs.discard(sub)
            await sub.aclose()

    async def _named(self, command: Awaitable[T]) -> T:
        """``command``'s result; a Redis error raised again (same class) with the store's
        URL, password hidden, in front of redis-py's message; a reply redis-py cannot make
        sense of (something else listens there) as ``redis.InvalidResponse``."""
        aioredis = _import_redis()
        try:
            return await _own_task(command)
        except aioredis.AuthenticationError as exc:  # redis-py's text names HELLO, not the fix
            if "@" in urlsplit(self.url).netloc:
                fix = "the server refused the user name or password given in the URL; check them"
            else:
                fix = "the server wants a password: give it in the URL, redis://:PASSWORD@host:port/db"
            raise _renamed(exc, f"Redis store {self.url}: {fix} ({exc})") from exc
        except aioredis.RedisError as exc:
            text = str(exc)
            if _caused_by(exc, ConnectionRefusedError):
                text += "; nothing accepts connections there: is Redis running at that address?"
            elif self._ca_file is not None and _caused_by(
                exc, FileNotFoundError, PermissionError, IsADirectoryError
            ):
                text += f"; ssl_ca_certs cannot be read: {self._ca_file!r}"  # ssl names no file
            elif text.startswith("this user has no permissions") or text.startswith("NOPERM"):
                text += (  # Redis names no key: say which ones the store uses
                    f"; this store's keys and channels start with {self.prefix}: give the user "
                    f"~{self.prefix}:* &{self.prefix}:*, or set ?prefix= to keys it may use"
                )
            elif text == "No connection available.":  # BlockingConnectionPool's wait ran out
                cap = self._client.connection_pool.max_connections
                text = (
                    f"no connection came free within the socket timeout: all max_connections={cap} "
                    "connections are in use, and each subscription holds one while it lasts (the "
                    "server's relay, each retry waiting for a page; serving needs 2 at least): raise "
                    "max_connections"
                )
            elif self.url.startswith("rediss:") and re.search(r"(?i)connecting|ssl", text):
                # a plain Redis takes the TLS hello for a command and never answers as TLS does
                text += "; rediss:// speaks TLS: is TLS on at that port? A plain Redis takes redis://"
            raise _renamed(exc, f"Redis store {self.url}: {text}") from exc
        except _GARBLED as exc:  # redis-py choking on a reply no Redis sends
            raise aioredis.InvalidResponse(
                f"Redis store {self.url}: the server did not answer as Redis does "
                f"({type(exc).__name__}: {exc}); is it a Redis server?"
            ) from exc

    def _key(self, namespace: str, key: str) -> bytes:
        check_key(namespace, key)
        self._check_open()
        return f"{self.prefix}:{namespace}:{key}".encode("ascii")

    def _channel(self, channel: str) -> bytes:
        check_channel(channel)
        self._check_open()
        return f"{self.prefix}:{channel}".encode("ascii")

    def _check_open(self) -> None:
        if self._closed:
            raise RuntimeError("the store is closed")


class RedisSubscription:
    """One ``PubSub`` connection listening on one channel.

    ``next`` reads on a task of its own, so ``aclose`` can stop a waiting reader without
    letting redis-py reconnect underneath it, and a cancelled ``next`` ends whatever
    redis-py does with the cancellation. It reads in slices of at most
    ``health_check`` seconds (never an unbounded read, whose meaning changed between
    redis-py versions), pinging the server when a slice passed in silence.
    """

    def __init__(self, pubsub: PubSub, health_check: float, reply_within: float, where: str = "") -> None:
        self._pubsub = pubsub
        self._where = where
        self._health_check = health_check
        self._reply_within = reply_within
        self._heard = 0.0  # loop time the connection last brought something
        self._pinged: float | None = None  # loop time of a PING not answered yet
        self._reader: asyncio.Task[bytes | None] | None = None
        self._closed = False

    async def start(self, name: bytes) -> None:
        """Subscribe, and return once Redis has confirmed it: within ``reply_within`` (the
        socket timeout, as for any command), else ``redis.TimeoutError``."""
        loop = asyncio.get_running_loop()
        within = min(self._reply_within, SUBSCRIBE_TIMEOUT)
        deadline = loop.time() + within
        await self._pubsub.subscribe(name)
        while True:
            message = await self._pubsub.get_message(timeout=max(0.0, deadline - loop.time()))
            if message is not None and message["type"] == "subscribe":
                self._heard = loop.time()
                return
            if loop.time() >= deadline:
                raise _import_redis().TimeoutError(
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
            await _ended(reader)
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
            await _stopped(reader)
        await self._pubsub.aclose()  # type: ignore[no-untyped-call, unused-ignore]  # untyped before redis-py 8.2

    async def _read(self, limit: float | None) -> bytes | None:
        """Read until a message arrives or ``limit`` seconds pass (None: no limit)."""
        aioredis = _import_redis()
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
                    return _bytes(message["data"])
            if deadline is not None and loop.time() >= deadline:
                return None

    async def _drop(self) -> None:
        """Close the connection (dead or closed by Redis): the next read opens it again."""
        connection = self._pubsub.connection
        if connection is not None:
            await connection.disconnect()


async def _own_task(work: Awaitable[T]) -> T:
    """``work``'s result, on a task of its own (see :func:`_ended`)."""
    task = asyncio.ensure_future(work)
    await _ended(task)
    return task.result()


async def _ended(task: asyncio.Future[Any]) -> None:
    """Wait until ``task`` has ended. Cancelled meanwhile: stop it (:func:`_stopped`), then
    raise ``CancelledError``, always. Awaiting redis-py directly would not: it writes a
    command with ``asyncio.wait_for``, which on Python 3.11 returns a write that ended in
    the same turn as a cancellation and drops the cancellation, so a task stopped while it
    connected or subscribed went on, and whoever stopped it waited for ever."""
    try:
        await asyncio.wait({task})
    except asyncio.CancelledError:
        await _stopped(task)
        raise


async def _stopped(task: asyncio.Future[Any]) -> None:
    """Cancel ``task`` until it has ended (redis-py may drop a cancellation, see
    :func:`_ended`: the next one, a moment later, finds it waiting for a reply), its outcome
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


#: What redis-py raises, beyond its own errors, on replies no Redis sends (seen: an
#: ``AttributeError`` when a server answers ``+OK`` to ``HELLO``).
_GARBLED = (AttributeError, IndexError, KeyError, TypeError, ValueError)


def _renamed(exc: Exception, message: str) -> Exception:
    """``exc``'s class with ``message``; ``exc`` itself when that class wants other arguments."""
    try:
        return type(exc)(message)
    except Exception:
        return exc


def _caused_by(exc: BaseException, *kinds: type[BaseException]) -> bool:
    """Whether ``exc`` came of one of ``kinds`` (a refused connection, a CA file that
    cannot be read), as its chain of causes says."""
    seen: BaseException | None = exc
    for _ in range(8):  # the chain redis-py builds is short; never loop on a cycle
        if seen is None:
            return False
        if isinstance(seen, kinds):
            return True
        seen = seen.__cause__ or seen.__context__
    return False


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


def _import_redis() -> ModuleType:
    try:
        import redis.asyncio as aioredis
    except ImportError as exc:
        raise ConfigError(_MISSING) from exc
    return aioredis


def _px(ttl: float | None) -> int | None:
    return None if ttl is None else max(1, math.ceil(min(ttl * 1000, MAX_PX)))


def _bytes(value: Any) -> bytes | None:
    return None if value is None else bytes(value)
