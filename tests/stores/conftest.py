"""Fixtures for the store tests: one ``Backend`` per kind of store, so the contract suite
runs unchanged on memory, SQLite (a file in tmp_path) and Redis (a real ``redis-server``
for the session; those cases skip when it is not installed).

``backend.open()`` gives another store object on the same backend, as a second instance
would have (for memory, the same object: a ``MemoryStore`` is its own backend).
``backend.elapse(seconds)`` lets time pass: an injected clock for memory and SQLite, real
sleeping for Redis (whose server keeps the time; ``backend.ttl`` is longer there, so a
loaded machine does not outrun it). Every store opened is closed after the test.
"""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from mcp_elicit.stores import MemoryStore, RedisStore, SqliteStore, Store
from stores.backends import BACKENDS, Backend, FakeClock


@pytest.fixture(params=BACKENDS)
async def backend(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[Backend]:
    name: str = request.param
    if name == "memory":
        clock = FakeClock()
        memory = MemoryStore(clock=clock)
        made = Backend(name, lambda: memory, clock)
    elif name == "sqlite":
        path = tmp_path / "state.db"
        clock = FakeClock()
        made = Backend(name, lambda: SqliteStore(path, clock=clock), clock)
    else:
        url: str = request.getfixturevalue("redis_url")
        prefix = f"test-{uuid.uuid4().hex[:12]}"
        made = Backend(name, lambda: RedisStore(url, prefix=prefix))
    try:
        yield made
    finally:
        await made.close_all()


@pytest.fixture
def store(backend: Backend) -> Store:
    return backend.open()


@pytest.fixture
async def raw(redis_url: str) -> AsyncIterator[Any]:
    """A plain redis-py client on the test server, to look behind the store (a
    ``redis.asyncio.Redis``; the tests using it skip without redis-py)."""
    redis_asyncio = pytest.importorskip("redis.asyncio")
    client = redis_asyncio.Redis.from_url(redis_url)
    yield client
    await client.aclose()
