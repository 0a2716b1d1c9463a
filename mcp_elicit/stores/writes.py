"""Writes sent to a store together: what a burst of work puts and publishes, in one round
trip where the backend can (``RedisStore.write_many``: one pipeline), else one by one.

Rules:

* ``write_all(store, writes)`` applies ``writes`` in order: each ``Put`` as ``put`` and
  each ``Publish`` as ``publish`` would. A store with a ``write_many(writes)`` gets them
  all at once; any other store (a user's own class, memory, SQLite) gets the calls one
  after another, stopping at the first that raises.
* Not atomic: a failure raises the backend's error, and any of the writes may have been
  applied. A caller tries them again (a put replaces; a wake-up published twice wakes
  twice, which a waiter that re-reads the state takes calmly) or one by one.
* Arguments are checked as the single calls check them, before anything is sent.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TypeAlias

from mcp_elicit.stores.base import Store

__all__ = ["Publish", "Put", "Write", "write_all"]


@dataclass(frozen=True, slots=True)
class Put:
    namespace: str
    key: str
    value: bytes
    ttl: float | None = None


@dataclass(frozen=True, slots=True)
class Publish:
    channel: str
    message: bytes


Write: TypeAlias = Put | Publish


async def write_all(store: Store, writes: Sequence[Write]) -> None:
    """Apply ``writes`` to ``store`` in order (see the rules)."""
    many = getattr(store, "write_many", None)
    if callable(many):
        await many(writes)
        return
    for write in writes:
        if isinstance(write, Put):
            await store.put(write.namespace, write.key, write.value, ttl=write.ttl)
        else:
            await store.publish(write.channel, write.message)
