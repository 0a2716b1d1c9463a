"""The server framework and its store: at start a configured store is checked and the default
one left alone; at stop a store the server opened itself is closed, one it was given is not."""

from __future__ import annotations

import asyncio
import threading
import uuid
from pathlib import Path

import pytest

from mcp_elicit import Server
from mcp_elicit.errors import ConfigError
from mcp_elicit.stores.memory import MemoryStore
from mcp_elicit.stores.sqlite import SqliteStore

pytestmark = pytest.mark.anyio


class _BrokenStore(MemoryStore):
    async def get(self, namespace: str, key: str) -> bytes | None:
        raise OSError("disk on fire")


async def test_start_checks_a_configured_store() -> None:
    server = Server("s", store=_BrokenStore())
    with pytest.raises(ConfigError, match="the URL-mode store _BrokenStore cannot be used: disk on fire"):
        await server.start()
    await Server("s", store=MemoryStore()).start()  # a working one passes


async def test_a_store_nothing_answers_for_says_so_in_one_sentence() -> None:
    pytest.importorskip("redis")
    from support.procs import free_port

    port = free_port()
    server = Server("s", store=f"redis://127.0.0.1:{port}/0")
    with pytest.raises(ConfigError) as refused:
        await server.start()
    said = str(refused.value)
    assert said.startswith(f"the URL-mode store redis://127.0.0.1:{port}/0 cannot be used: Error "), said
    assert f" connecting to 127.0.0.1:{port}. " in said, said  # redis-py's words, as they are
    hint = "; nothing accepts connections there: is Redis running at that address?"
    assert said.endswith(hint), said
    assert not said.removesuffix(hint).endswith("."), said  # redis-py's final stop: dropped


async def test_start_refuses_a_store_that_can_be_read_but_not_written(redis_url: str) -> None:
    from redis.asyncio import Redis

    user = f"reader-{uuid.uuid4().hex[:8]}"
    admin = Redis.from_url(redis_url)
    try:
        await admin.execute_command("ACL", "SETUSER", user, "on", ">pw", "~*", "&*", "+@read", "+@connection")
        reader = redis_url.replace("redis://", f"redis://{user}:pw@")
        server = Server("s", store=reader)
        with pytest.raises(
            ConfigError, match=r"redis://reader-\w+:\*\*\*@.* cannot be used: .*(NOPERM|permission)"
        ):
            await server.start()
    finally:
        await admin.execute_command("ACL", "DELUSER", user)
        await admin.aclose()


async def test_start_leaves_the_default_store_unopened() -> None:
    server = Server("s")
    await server.start()
    assert server.url_mode._store is None  # no file created for a server without URL mode


def _sqlite_threads() -> int:
    return sum(t.name.startswith("mcp-elicit-sqlite") for t in threading.enumerate())


async def test_stop_closes_a_sqlite_store_opened_from_its_url(tmp_path: Path) -> None:
    before = _sqlite_threads()
    server = Server("s", store=f"sqlite://{tmp_path}/state.db")
    await server.start()
    assert _sqlite_threads() == before + 1
    await server.stop()
    assert _sqlite_threads() == before, "the worker thread of the store is gone"
    await server.start()  # a server started again opens it again, and finds what it kept
    try:
        await server.url_mode.store.put("flow", "k", b"v")
        assert await server.url_mode.store.get("flow", "k") == b"v"
    finally:
        await server.stop()
    assert _sqlite_threads() == before


async def test_stop_closes_the_default_store_once_opened(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path))
    before = _sqlite_threads()
    server = Server("s")
    await server.start()
    await server.url_mode.store.put("flow", "k", b"v")  # what the first URL-mode request does
    assert _sqlite_threads() == before + 1
    await server.stop()
    assert _sqlite_threads() == before


async def test_stop_closes_a_redis_store_opened_from_its_url(redis_url: str) -> None:
    from redis.asyncio import Redis

    admin = Redis.from_url(redis_url)
    try:
        before = len(await admin.client_list())
        server = Server("s", store=f"{redis_url}?prefix=test-{uuid.uuid4().hex[:12]}")
        await server.start()
        assert server.relay.listening is not None
        await asyncio.wait_for(server.relay.listening.wait(), 5.0)
        await server.url_mode.store.put("flow", "k", b"v")  # a pooled connection besides the relay's
        assert len(await admin.client_list()) >= before + 2
        await server.stop()
        assert len(await admin.client_list()) == before, "every connection of the store is closed"
    finally:
        await admin.aclose()


async def test_stop_leaves_a_store_object_to_its_owner(tmp_path: Path) -> None:
    store = SqliteStore(tmp_path / "state.db")
    try:
        server = Server("s", store=store)
        await server.start()
        await server.stop()
        await store.put("flow", "k", b"still open")
        assert await store.get("flow", "k") == b"still open"
    finally:
        await store.close()


async def test_start_refuses_a_redis_user_without_channel_rights(redis_url: str) -> None:
    # Keys but no channels: put and get work, yet no page could ever be saved (the save
    # publishes) and the relay could never subscribe. The start-up says so, not the first page.
    from redis.asyncio import Redis

    user = f"keysonly-{uuid.uuid4().hex[:8]}"
    admin = Redis.from_url(redis_url)
    try:
        await admin.execute_command(
            "ACL", "SETUSER", user, "on", ">pw", "~mcp-elicit:*", "resetchannels", "+@all"
        )
        server = Server("s", store=redis_url.replace("redis://", f"redis://{user}:pw@"))
        with pytest.raises(
            ConfigError, match=r"cannot be used: .*no permissions.*channels.*&mcp-elicit:\*"
        ) as caught:
            await server.start()
        assert str(caught.value).count("redis://") == 1  # the store's URL is said once
    finally:
        await admin.execute_command("ACL", "DELUSER", user)
        await admin.aclose()


class _GeneratorSubscribe(MemoryStore):
    async def subscribe(self, channel: str):  # type: ignore[override]  # the mistake shown
        yield None


class _NoChannels:
    """A store written before channels were asked of one: no delete, publish, subscribe."""

    async def get(self, namespace: str, key: str) -> bytes | None:
        return None

    async def put(self, namespace: str, key: str, value: bytes, *, ttl: float | None = None) -> None:
        return None

    async def add(self, namespace: str, key: str, value: bytes, *, ttl: float | None = None) -> bool:
        return True

    async def take(self, namespace: str, key: str) -> bytes | None:
        return None

    async def close(self) -> None:
        return None


async def test_start_says_what_a_custom_store_lacks() -> None:
    # a store without channels could never hear a page saved: it fails the start, saying
    # what a store needs, not what Python made of the missing attribute
    server = Server("s", store=_NoChannels())  # type: ignore[arg-type]
    with pytest.raises(ConfigError) as caught:
        await server.start()
    said = str(caught.value)
    assert "the URL-mode store _NoChannels cannot be used: it has no delete, publish, subscribe " in said
    assert "mcp_elicit.stores.base.Store" in said


async def test_start_says_a_subscribe_written_as_a_generator_needs_a_decorator() -> None:
    server = Server("s", store=_GeneratorSubscribe())
    with pytest.raises(ConfigError) as caught:
        await server.start()
    said = str(caught.value)
    assert "_GeneratorSubscribe.subscribe(channel) gives an async generator" in said, said
    assert "@contextlib.asynccontextmanager" in said, said
