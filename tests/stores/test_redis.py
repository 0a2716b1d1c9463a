"""What the Redis store promises beyond the contract, checked against a real server: the
key layout and PX expiry Redis sees, prefixes and databases that keep deployments apart,
connections all closed, errors that propagate, passwords never shown."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import math
import os
import signal
import uuid
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from mcp_elicit.errors import ConfigError
from mcp_elicit.stores import RedisStore
from mcp_elicit.stores import redis as redis_store
from mcp_elicit.stores.redis import CONNECT_TIMEOUT, SOCKET_TIMEOUT

from support.redis import SKIP_REASON, SilencingProxy, redis_available, redis_server
from support.waiting import HOURS, eventually, hang_guard

if TYPE_CHECKING:
    from redis.asyncio import Redis

pytestmark = pytest.mark.anyio

redis_asyncio = pytest.importorskip("redis.asyncio")


def fresh_prefix() -> str:
    return f"test-{uuid.uuid4().hex[:12]}"


@pytest.fixture
def hours_by_default(monkeypatch: pytest.MonkeyPatch) -> None:
    """The store's own timeouts (connect, reply, health check, subscribe) made hours long:
    a test whose URL sets short ones sees an error in time only if the URL's are used."""
    for name in ("CONNECT_TIMEOUT", "SOCKET_TIMEOUT", "HEALTH_CHECK_INTERVAL", "SUBSCRIBE_TIMEOUT"):
        monkeypatch.setattr(redis_store, name, HOURS)


async def test_keys_live_under_prefix_namespace_key_with_px_expiry(redis_url: str, raw: Redis) -> None:
    prefix = fresh_prefix()
    store = RedisStore(redis_url, prefix=prefix)
    try:
        await store.put("flow", "a:b", b"v", ttl=3600.5)
        await store.put("vault", "forever", b"w")
        assert await raw.get(f"{prefix}:flow:a:b".encode()) == b"v"
        # PX 3600500: what is left a moment later (a minute, however loaded the machine)
        assert 3_540_500 < await raw.pttl(f"{prefix}:flow:a:b") <= 3_600_500
        assert await raw.pttl(f"{prefix}:vault:forever") == -1
        keys = sorted(await raw.keys(f"{prefix}:*"))
        assert keys == sorted([f"{prefix}:flow:a:b".encode(), f"{prefix}:vault:forever".encode()])
        assert await store.add("used", "m", b"", ttl=0.0001) is True
        assert await raw.pttl(f"{prefix}:used:m") in (-2, 0, 1), "a tiny ttl rounds up to 1 ms"
    finally:
        await store.close()


async def test_prefixes_keep_deployments_apart(redis_url: str) -> None:
    one, two = RedisStore(redis_url, prefix=fresh_prefix()), RedisStore(redis_url, prefix=fresh_prefix())
    try:
        await one.put("flow", "k", b"one")
        assert await two.get("flow", "k") is None
        assert await two.add("flow", "k", b"two") is True
        async with two.subscribe("done") as sub:
            await one.publish("done", b"for one only")
            assert await sub.next(0.1) is None
    finally:
        await one.close()
        await two.close()


async def test_the_prefix_and_database_come_from_the_url(redis_url: str, raw: Redis) -> None:
    prefix = fresh_prefix()
    base = redis_url.rsplit("/", 1)[0]
    store = RedisStore(f"{base}/3?prefix={prefix}")
    try:
        assert store.prefix == prefix
        await store.put("flow", "k", b"in db 3")
        assert await raw.get(f"{prefix}:flow:k") is None
        db3 = redis_asyncio.Redis.from_url(f"{base}/3")
        try:
            assert await db3.get(f"{prefix}:flow:k") == b"in db 3"
        finally:
            await db3.aclose()
    finally:
        await store.close()
    assert RedisStore(f"{base}/0?prefix=url", prefix="argument").prefix == "argument"
    assert RedisStore(redis_url).prefix == "mcp-elicit"


async def test_close_leaves_no_connection_open(redis_url: str, raw: Redis) -> None:
    async def clients() -> int:
        listed = await raw.client_list()
        return len(listed)

    before = await clients()
    store = RedisStore(redis_url, prefix=fresh_prefix())
    await store.put("flow", "k", b"v")
    async with store.subscribe("a") as sub_a, store.subscribe("b"):
        await store.publish("a", b"m")
        assert await sub_a.next(1.0) == b"m"
        assert await clients() >= before + 3
        await store.close()

    async def closed() -> bool:  # Redis drops a client when it reads the socket's close
        return await clients() == before

    await eventually(closed, "Redis to list only the clients it had before the store")


async def test_an_unreachable_server_raises_the_redis_error() -> None:
    from support.procs import free_port

    store = RedisStore(f"redis://127.0.0.1:{free_port()}/0")
    try:
        with pytest.raises(redis_asyncio.ConnectionError) as commanded:
            await store.get("flow", "k")
        with pytest.raises(redis_asyncio.ConnectionError) as subscribed:
            async with store.subscribe("c"):
                pass
    finally:
        await store.close()
    for caught in (commanded, subscribed):  # what to do, besides redis-py's errno
        assert "nothing accepts connections there: is Redis running at that address?" in str(caught.value)


def test_the_password_never_shows() -> None:
    store = RedisStore("redis://user:s3cret@127.0.0.1:6379/0")
    assert "s3cret" not in repr(store)
    assert "user:***@127.0.0.1:6379" in repr(store)


async def test_a_server_without_getdel_is_named_as_too_old(
    redis_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = RedisStore(redis_url, prefix=fresh_prefix())

    async def getdel(name: bytes) -> None:
        raise redis_asyncio.ResponseError("unknown command 'GETDEL', with args beginning with: 'k'")

    monkeypatch.setattr(store._client, "getdel", getdel)
    try:
        with pytest.raises(ConfigError, match=r"Redis 6\.2"):
            await store.take("flow", "k")
    finally:
        await store.close()


async def test_a_subscription_whose_connection_is_dropped_listens_again(redis_url: str, raw: Redis) -> None:
    """Redis closes a subscriber's connection on a failover, a client kill or an output
    buffer limit while it stays up: ``next`` does not fail, it subscribes again (what was
    published in between is lost, as the contract allows)."""
    store = RedisStore(redis_url, prefix=fresh_prefix())
    publisher = RedisStore(redis_url, prefix=store.prefix)
    try:
        async with store.subscribe("c") as sub:
            await publisher.publish("c", b"before")
            assert await sub.next(1.0) == b"before"
            assert await raw.execute_command("CLIENT", "KILL", "TYPE", "pubsub") >= 1
            assert await sub.next(0.2) is None
            await publisher.publish("c", b"after")
            assert await sub.next(1.0) == b"after"
    finally:
        await store.close()
        await publisher.close()


@pytest.mark.skipif(not redis_available(), reason=SKIP_REASON)
async def test_a_subscription_whose_server_is_gone_raises_the_redis_error(tmp_path: Path) -> None:
    with redis_server(tmp_path) as server:
        store = RedisStore(server.url)
        try:
            async with store.subscribe("c") as sub:
                server.proc.kill()
                server.proc.wait()
                with pytest.raises(redis_asyncio.ConnectionError, match=f"Redis store {server.url}"):
                    await sub.next(1.0)
        finally:
            await store.close()


async def test_the_store_sets_its_own_timeouts_unless_the_url_gives_them(redis_url: str) -> None:
    """Older redis-py has no socket timeout by default: a command to a server that stopped
    answering (a partition, no reset) would wait forever. The store never relies on that."""
    store = RedisStore(redis_url)
    given = RedisStore(f"{redis_url}?socket_timeout=2.5&socket_connect_timeout=1.5")
    try:
        kwargs = store._client.connection_pool.connection_kwargs
        assert (kwargs["socket_connect_timeout"], kwargs["socket_timeout"]) == (
            CONNECT_TIMEOUT,
            SOCKET_TIMEOUT,
        )
        kwargs = given._client.connection_pool.connection_kwargs
        assert (kwargs["socket_connect_timeout"], kwargs["socket_timeout"]) == (1.5, 2.5)
    finally:
        await store.close()
        await given.close()


@pytest.mark.skipif(not redis_available(), reason=SKIP_REASON)
async def test_a_server_that_stops_answering_is_noticed_by_commands_and_subscriptions(
    tmp_path: Path, hours_by_default: None
) -> None:
    """A partition looks like a server that is there but silent (SIGSTOP): a command fails
    after the socket timeout, and a subscription waiting without limit raises within one
    health check interval and timeout, instead of waiting for ever."""
    with redis_server(tmp_path) as server:
        store = RedisStore(
            f"{server.url}?health_check_interval=1&socket_timeout=0.5&socket_connect_timeout=0.5"
        )
        try:
            async with store.subscribe("c") as sub:
                os.kill(server.proc.pid, signal.SIGSTOP)
                try:
                    with pytest.raises((redis_asyncio.TimeoutError, redis_asyncio.ConnectionError)):
                        async with hang_guard("a subscription waiting without limit on a silent server"):
                            await sub.next(math.inf)
                    with pytest.raises(redis_asyncio.TimeoutError):
                        async with hang_guard("a command to a silent server"):
                            await store.get("flow", "k")
                finally:
                    os.kill(server.proc.pid, signal.SIGCONT)
        finally:
            await store.close()


@pytest.mark.skipif(not redis_available(), reason=SKIP_REASON)
async def test_a_subscription_whose_connection_goes_silent_listens_again(tmp_path: Path) -> None:
    """A connection cut without a reset (a NAT or firewall dropping it) stays silent for
    ever while Redis is well: the subscription notices at its next health check, connects
    again and hears what is published from then on, within the same ``next``."""
    with redis_server(tmp_path) as server:
        async with SilencingProxy(server.port) as proxy:
            store = RedisStore(f"redis://127.0.0.1:{proxy.port}/0?health_check_interval=1&socket_timeout=0.5")
            publisher = RedisStore(server.url, prefix=store.prefix)
            try:
                async with store.subscribe("c") as sub:
                    await publisher.publish("c", b"before")
                    assert await sub.next(2.0) == b"before"
                    proxy.silence()

                    async def publish_until_heard() -> None:
                        while True:
                            await publisher.publish("c", b"after")
                            await asyncio.sleep(0.2)

                    publishing = asyncio.ensure_future(publish_until_heard())
                    try:
                        assert await asyncio.wait_for(sub.next(math.inf), 8.0) == b"after"
                    finally:
                        publishing.cancel()
            finally:
                await store.close()
                await publisher.close()


@pytest.mark.skipif(not redis_available(), reason=SKIP_REASON)
async def test_a_subscribe_a_silent_server_never_confirms_is_a_redis_timeout_naming_the_store(
    tmp_path: Path, hours_by_default: None
) -> None:
    """A server that takes the connection but never answers (stopped, partitioned): the
    subscribe gives up after the URL's socket timeout, as a command does, with a Redis
    error (what callers catch as a backend failure) naming the store, password hidden."""
    from mcp_elicit.stores.base import backend_errors

    with redis_server(tmp_path) as server:
        url = server.url.replace("redis://", "redis://:s3cret@")
        store = RedisStore(f"{url}?socket_timeout=0.5&socket_connect_timeout=0.5")
        server.command("CONFIG", "SET", "requirepass", "s3cret")
        try:
            await store.get("flow", "warm")
            os.kill(server.proc.pid, signal.SIGSTOP)
            try:
                with pytest.raises(redis_asyncio.TimeoutError) as caught:
                    async with hang_guard("a subscribe a silent server never confirms"), store.subscribe("c"):
                        pass
            finally:
                os.kill(server.proc.pid, signal.SIGCONT)
            assert isinstance(caught.value, backend_errors())
            message = str(caught.value)
            assert f"127.0.0.1:{server.port}" in message and "s3cret" not in message, message
        finally:
            await store.close()


async def test_an_unreachable_or_silent_host_is_a_bounded_redis_error_naming_the_store(
    hours_by_default: None,
) -> None:
    """Nothing listening (refused at once) and a host that never completes the connection
    (a full backlog here; a firewall that drops packets elsewhere): each a Redis error,
    within the connect timeout, naming the store's URL with the password hidden."""
    import socket

    from support.procs import free_port

    silent = socket.socket()
    silent.bind(("127.0.0.1", 0))
    silent.listen(0)
    waiting = []  # connections nobody accepts fill the backlog: the next connect hangs
    for _ in range(4):
        filler = socket.socket()
        filler.setblocking(False)
        filler.connect_ex(silent.getsockname())
        waiting.append(filler)
    try:
        cases = [
            (free_port(), redis_asyncio.ConnectionError),
            (silent.getsockname()[1], redis_asyncio.TimeoutError),
        ]
        for port, error in cases:
            url = f"redis://admin:s3cret@127.0.0.1:{port}/0?socket_connect_timeout=0.3"
            store = RedisStore(url)
            try:
                operations = (
                    lambda s=store: s.get("flow", "k"),
                    lambda s=store: s.add("used", "m", b""),
                    lambda s=store: s.take("flow", "k"),
                    lambda s=store: s.publish("c", b""),
                )
                for operation in operations:
                    with pytest.raises(error) as caught:
                        async with hang_guard(f"a command to port {port}, nothing listening or silent"):
                            await operation()
                    message = str(caught.value)
                    assert f"redis://admin:***@127.0.0.1:{port}/0" in message, message
                    assert "s3cret" not in message
            finally:
                await store.close()
    finally:
        for sock in (*waiting, silent):
            sock.close()


@pytest.mark.parametrize(
    "reply",
    [b"HTTP/1.1 400 Bad Request\r\n\r\n", b"+OK\r\n"],
    ids=["http", "ok-to-everything"],
)
async def test_a_server_that_is_not_redis_is_a_redis_error_naming_the_store(reply: bytes) -> None:
    """The URL names a port where something else listens (a web server, a proxy speaking
    another protocol): every operation fails at once with a Redis error (what callers
    catch as a backend failure) naming the store, password hidden, never a bare
    ``AttributeError`` from deep in the client."""
    from mcp_elicit.stores.base import backend_errors

    async def answer(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        with contextlib.suppress(ConnectionError):
            while await reader.read(65536):
                writer.write(reply)
                await writer.drain()
        writer.close()

    server = await asyncio.start_server(answer, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    store = RedisStore(f"redis://admin:s3cret@127.0.0.1:{port}/0?socket_timeout=2")
    try:
        operations = (
            lambda: store.get("flow", "k"),
            lambda: store.add("used", "m", b""),
            lambda: store.take("flow", "k"),
            lambda: store.publish("c", b""),
            lambda: store.subscribe("c").__aenter__(),
        )
        for operation in operations:
            with pytest.raises(redis_asyncio.RedisError) as caught:
                await asyncio.wait_for(operation(), 10)
            assert isinstance(caught.value, backend_errors())
            message = str(caught.value)
            assert f"redis://admin:***@127.0.0.1:{port}/0" in message and "s3cret" not in message, message
    finally:
        await store.close()
        server.close()
        await server.wait_closed()


async def test_a_database_number_the_server_does_not_have_is_a_redis_error_naming_the_store(
    redis_url: str,
) -> None:
    base = redis_url.rsplit("/", 1)[0]
    store = RedisStore(f"{base}/99999")
    try:
        with pytest.raises(redis_asyncio.RedisError, match=r"out of range") as caught:
            await store.get("flow", "k")
        assert f"{base}/99999" in str(caught.value)
    finally:
        await store.close()


async def test_a_lost_subscription_connection_is_logged_naming_the_store(
    redis_url: str, raw: Redis, caplog: pytest.LogCaptureFixture
) -> None:
    """Messages published while a subscription's connection is down are lost: an operator
    sees that it happened, and on which store, in the log (a warning)."""
    store = RedisStore(redis_url, prefix=fresh_prefix())
    publisher = RedisStore(redis_url, prefix=store.prefix)
    try:
        async with store.subscribe("c") as sub:
            assert await raw.execute_command("CLIENT", "KILL", "TYPE", "pubsub") >= 1
            with caplog.at_level(logging.WARNING, logger="mcp_elicit.stores"):
                assert await sub.next(0.3) is None
            await publisher.publish("c", b"after")
            assert await sub.next(2.0) == b"after"
    finally:
        await store.close()
        await publisher.close()
    warnings = [r for r in caplog.records if r.name == "mcp_elicit.stores" and r.levelno == logging.WARNING]
    assert len(warnings) == 1, caplog.text
    text = warnings[0].getMessage()
    assert store.url in text and "lost" in text, text


@pytest.mark.skipif(not redis_available(), reason=SKIP_REASON)
async def test_a_password_missing_or_refused_says_where_it_goes_in_the_url(tmp_path: Path) -> None:
    with redis_server(tmp_path) as redis:
        redis.command("CONFIG", "SET", "requirepass", "right-one")
        without = RedisStore(redis.url)
        wrong = RedisStore(redis.url.replace("redis://", "redis://:wrong-one@"))
        try:
            with pytest.raises(redis_asyncio.AuthenticationError) as missing:
                await without.get("flow", "k")
            with pytest.raises(redis_asyncio.AuthenticationError) as refused:
                await wrong.get("flow", "k")
        finally:
            await without.close()
            await wrong.close()
    assert "wants a password" in str(missing.value)
    assert "redis://:PASSWORD@" in str(missing.value) or "redis://USER:PASSWORD@" in str(missing.value)
    assert "refused the user name or password" in str(refused.value)
    assert "wrong-one" not in str(refused.value)


async def test_rediss_to_a_server_without_tls_says_so(redis_url: str) -> None:
    tls = redis_url.replace("redis://", "rediss://") + "?socket_connect_timeout=1"
    store = RedisStore(tls)
    try:
        with pytest.raises((redis_asyncio.ConnectionError, redis_asyncio.TimeoutError)) as caught:
            await store.get("flow", "k")
    finally:
        await store.close()
    assert tls.split("?")[0] in str(caught.value)
    assert "TLS" in str(caught.value) and "redis://" in str(caught.value).split(": ", 1)[1]


@pytest.mark.skipif(not redis_available(), reason=SKIP_REASON)
async def test_an_acl_user_without_the_prefix_is_told_which_keys_and_channels_it_needs(
    tmp_path: Path,
) -> None:
    """An ACL user confined to other keys gets Redis's NOPERM, which names no key: the
    error must name the store's patterns (``~prefix:* &prefix:*``), so the operator can
    widen the user or set ``?prefix=`` to what the user may use."""
    with redis_server(tmp_path) as redis:
        redis.command("ACL", "SETUSER", "app", "on", ">app-pass", "~other:*", "&other:*", "+@all")
        url = redis.url.replace("redis://", "redis://app:app-pass@")
        store = RedisStore(url)
        try:
            with pytest.raises(redis_asyncio.ResponseError) as on_key:
                await store.get("flow", "k")
            with pytest.raises(redis_asyncio.ResponseError) as on_channel:
                await store.publish("flow-done", b"x")
        finally:
            await store.close()
    for caught in (on_key, on_channel):
        text = str(caught.value)
        assert type(caught.value).__name__ == "NoPermissionError", repr(caught.value)
        assert "redis://app:***@" in text and "app-pass" not in text, text
        assert "~mcp-elicit:* &mcp-elicit:*" in text and "prefix=" in text, text


async def test_a_ca_file_that_cannot_be_read_is_named_not_taken_for_a_server_without_tls(
    redis_url: str, tmp_path: Path
) -> None:
    """A ``ssl_ca_certs`` naming no file fails before any byte is sent: the error says so,
    naming the file, and does not ask whether the server speaks TLS."""
    missing = tmp_path / "missing-ca.pem"
    store = RedisStore(redis_url.replace("redis://", "rediss://") + f"?ssl_ca_certs={missing}")
    try:
        with pytest.raises(redis_asyncio.ConnectionError) as caught:
            await store.get("flow", "k")
    finally:
        await store.close()
    text = str(caught.value)
    assert f"ssl_ca_certs cannot be read: {str(missing)!r}" in text, text
    assert "is TLS on" not in text, text
