"""The start-up check of URL mode's configured store: try once, cheaply, each thing the
server will ask of it, so that a store that is down or refuses a part of it fails the
start-up with a clear message rather than every request that needs it.

Rules:

* What is tried is what the server does: write, read, take (flows, the vault, markers),
  subscribe and publish (the relay and waiting retries listen; saving a page publishes).
  A read-only replica or user, or a Redis user without channel rights, fails here.
* A store object of the user's own is first checked for the methods a store needs
  (``stores.base.shape_problem``).
* Any backend's failure (redis, sqlite3, ``OSError``) is a ``ConfigError`` naming the
  store (a URL without its password; an object by its class) and what failed. A store
  opened from its URL is closed then (its threads, sockets); a store object stays open,
  for its owner.
* The default file is never checked here: it is opened when first needed, so nothing is
  created for a server that never uses URL mode.
"""

from __future__ import annotations

import contextlib

from mcp_elicit.errors import ConfigError
from mcp_elicit.stores.base import Store

__all__ = ["check_store"]


async def check_store(store: Store, spec: str | Store) -> None:
    """Try ``store``, configured as ``spec`` (its URL, or the object itself); a
    ``ConfigError`` saying what fails (the store closed when opened from a URL)."""
    if not isinstance(spec, str):  # a user's own store may lack a part
        from mcp_elicit.stores.base import shape_problem

        problem = shape_problem(store)
        if problem is not None:
            raise ConfigError(f"the URL-mode store {type(spec).__name__} cannot be used: {problem}")
    try:
        await store.put("health", "start-up", b"", ttl=60.0)
        await store.get("health", "start-up")
        await store.take("health", "start-up")
        async with store.subscribe("health:start-up"):  # as the relay and waiting retries do
            await store.publish("health:start-up", b"")  # as saving a page does
    except Exception as exc:  # any backend's failure: redis, sqlite3, OSError
        from mcp_elicit.stores.base import failure_text
        from mcp_elicit.stores.redis import redact_url

        if isinstance(spec, str):  # opened from its URL: close it (its threads, sockets)
            with contextlib.suppress(Exception):
                await store.close()
        where = redact_url(spec) if isinstance(spec, str) else type(spec).__name__
        raise ConfigError(f"the URL-mode store {where} cannot be used: {failure_text(exc)}") from exc
