"""The one narrow storage interface: URL-mode flow state, the secret vault, third-party
tokens and single-use markers all go through it.

Rules:

* Values are opaque bytes under ``(namespace, key)``; a store never interprets them
  (secrets and tokens arrive already encrypted). An empty value is a value (``b""``),
  never absent. Namespaces are short lowercase words (``flow``, ``vault``, ``tokens``,
  ``used``: a letter, then letters, digits, ``_`` or ``-``, at most 32, never ``:``);
  keys and channels are 1 to 512 printable ASCII characters. Misuse raises
  ``ValueError`` (``TypeError`` for a value that is not ``bytes``) before any I/O.
* Every entry may carry a time to live (seconds, finite, above zero); an expired entry
  reads as absent everywhere. ``put`` replaces the value *and* the time to live (without
  ``ttl`` the entry stays until deleted).
* ``add`` is an atomic set-if-absent and ``take`` an atomic get-and-delete, even across
  instances sharing a backend: single-use markers and links rely on that.
* ``subscribe(channel)`` then ``publish(channel, message)``: a subscriber sees every
  message published after its ``subscribe`` block was entered, in order, from every store
  sharing the backend — but SQLite's reach is *this process* only, and Redis pub/sub
  drops what is published while a subscriber's connection is down. So a waiter
  subscribes, *then* checks the state, then waits with ``next`` in bounded slices and
  re-checks the state after each one: it never misses a completion, and a lost event
  costs at most one slice.
* One task reads a subscription at a time. ``next(timeout)`` with ``timeout <= 0``
  only looks at what has already arrived; ``math.inf`` waits without a limit.
* ``close`` is idempotent and ends the store's open subscriptions (a waiting ``next``
  raises ``RuntimeError``); any later call raises ``RuntimeError``.
* A store that cannot reach its backend or file raises ``ConfigError`` for a bad location
  and the backend's own error otherwise (``sqlite3.Error``, ``redis.RedisError``,
  ``OSError``): ``backend_errors()`` lists them, for callers that answer them alike,
  with ``StoreUnavailable``, what the server's ``Guarded`` view of a store makes of them.
  Of those, ``misconfigured`` picks the ones that are the store's configuration, not an
  outage (a password missing or refused, an ACL refusal, a database number the server
  lacks): trying again changes nothing until someone changes that.
* Backends: ``memory://`` (one process, tests), ``sqlite:///path`` (the embedded default:
  survives restarts, one host), ``redis://host:port/db`` (several instances).
"""

from __future__ import annotations

import inspect
import re
import sqlite3
from contextlib import AbstractAsyncContextManager
from typing import Protocol

from mcp_elicit.errors import ConfigError, StoreUnavailable

__all__ = ["Store", "Subscription", "backend_errors", "failure_text", "misconfigured", "shape_problem"]

_NAMED = re.compile(r"Redis store \S+: ")
#: What Redis answers ``SELECT`` with a database number it lacks (7: "DB index is out of
#: range"; before: "invalid DB index").
_NO_DATABASE = re.compile(r"(?i)\bDB index\b")
#: What the server calls on a store (the ``Store`` protocol below).
_METHODS = ("get", "put", "add", "take", "delete", "publish", "subscribe", "close")


def backend_errors() -> tuple[type[Exception], ...]:
    """What a store raises when its backend fails (down, locked, unwritable, misplaced)."""
    try:
        from redis import RedisError
    except ImportError:
        return (ConfigError, OSError, sqlite3.Error, StoreUnavailable)
    return (ConfigError, OSError, sqlite3.Error, StoreUnavailable, RedisError)


def misconfigured(exc: BaseException) -> bool:
    """Whether a backend's error (or the one behind it: ``Guarded``'s ``StoreUnavailable``)
    is the store refusing its configuration rather than failing: Redis refusing the
    password or user (``WRONGPASS``, ``NOAUTH``), an ACL user lacking a right
    (``NOPERM``), a database number the server does not have. Waiting does not mend it."""
    try:
        from redis import exceptions
    except ImportError:
        return False
    refused = tuple(
        getattr(exceptions, name)  # AuthorizationError is not in every redis-py
        for name in ("AuthenticationError", "AuthorizationError", "NoPermissionError")
        if hasattr(exceptions, name)
    )
    seen: BaseException | None = exc
    for _ in range(8):  # the chains are short; never loop on a cycle
        if seen is None:
            return False
        if isinstance(seen, refused):
            return True
        if isinstance(seen, exceptions.ResponseError) and _NO_DATABASE.search(str(seen)):
            return True
        seen = seen.__cause__  # raised from it (``Guarded``, the store naming itself)
    return False


def failure_text(exc: BaseException) -> str:
    """What a backend's error says, without the store's own name in front (``Redis store
    URL: ``): for a line that names the store already."""
    text = str(exc) or type(exc).__name__
    named = _NAMED.match(text)
    return text[named.end() :] if named else text


def shape_problem(store: object) -> str | None:
    """What keeps a store object (a user's own class) from being a ``Store`` at all, said
    before it is called: a method it lacks, or a ``subscribe`` written as an async generator
    that ``async with`` cannot enter. None when it has the shape."""
    missing = [name for name in _METHODS if not callable(getattr(store, name, None))]
    if missing:
        return (
            f"it has no {', '.join(missing)} (a store needs {', '.join(_METHODS)}: "
            "see mcp_elicit.stores.base.Store)"
        )
    if inspect.isasyncgenfunction(getattr(store, "subscribe", None)):
        return (
            f"{type(store).__name__}.subscribe(channel) gives an async generator, not the async "
            "context manager 'async with' enters: decorate it with @contextlib.asynccontextmanager"
        )
    return None


class Subscription(Protocol):
    """Messages published on one channel since the subscription began."""

    async def next(self, timeout: float) -> bytes | None:
        """The next message, or None when ``timeout`` seconds pass without one."""
        ...


class Store(Protocol):
    async def get(self, namespace: str, key: str) -> bytes | None:
        """The value, or None when absent or expired."""
        ...

    async def put(self, namespace: str, key: str, value: bytes, *, ttl: float | None = None) -> None:
        """Store ``value``, replacing any value and time to live the key had."""
        ...

    async def add(self, namespace: str, key: str, value: bytes, *, ttl: float | None = None) -> bool:
        """Store only if absent (or expired); True when this call stored it."""
        ...

    async def take(self, namespace: str, key: str) -> bytes | None:
        """Read and delete in one step; None when absent."""
        ...

    async def delete(self, namespace: str, key: str) -> bool:
        """Delete; True when a live entry was there."""
        ...

    async def publish(self, channel: str, message: bytes) -> None: ...

    def subscribe(self, channel: str) -> AbstractAsyncContextManager[Subscription]:
        """Listen on ``channel`` for the duration of the ``async with`` block."""
        ...

    async def close(self) -> None: ...
