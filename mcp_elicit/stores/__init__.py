"""Stores: where URL-mode flow state, the secret vault, third-party tokens and single-use
markers live, behind one narrow interface (``Store``, in ``base``).

::

    base.py     the Store and Subscription protocols, and their rules
    checks.py   argument rules every backend enforces (namespaces, keys, values, ttl)
    hub.py      in-process publish/subscribe (memory, SQLite)
    memory.py   MemoryStore     memory://            one process; tests and demos
    sqlite.py   SqliteStore     sqlite:///path       the default; survives restarts; one host
    redis.py    RedisStore      redis://host:port/db several instances
    redis_url.py  what a Redis URL may hold; redact_url(), how any store URL is shown
    redis_pubsub.py  RedisSubscription; redis-py's work on tasks whose cancellation sticks
    redis_errors.py  how a Redis store's errors read: its URL, what to fix
    closed_loops.py  what an event loop closed mid-work left: let go of quietly
    url.py      open_store(url), default_store_url()
    guarded.py  Guarded: the server's view, a failing backend as StoreUnavailable (503)
    failure_log.py  FailureLog: an outage said when it begins, once a minute, when it ends
    writes.py   Put, Publish, write_all(): writes sent together (one Redis pipeline)

Rules: this package imports the standard library, ``mcp_elicit.errors`` and (lazily, in
``redis.py``) ``redis``; nothing else. Every backend passes the one contract suite,
``tests/stores/test_contract.py``.
"""

from __future__ import annotations

from mcp_elicit.stores.base import Store, Subscription
from mcp_elicit.stores.memory import MemoryStore
from mcp_elicit.stores.redis import RedisStore
from mcp_elicit.stores.sqlite import SqliteStore
from mcp_elicit.stores.url import default_data_dir, default_store_url, open_store

__all__ = [
    "MemoryStore",
    "RedisStore",
    "SqliteStore",
    "Store",
    "Subscription",
    "default_data_dir",
    "default_store_url",
    "open_store",
]
