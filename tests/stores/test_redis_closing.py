"""The Redis store closed while it works, against a real server: a close waits for the
commands under way rather than cutting them (the caller was told "Connection closed by
server" of a write Redis may have made); a cancelled close goes on and a later one waits
for it; and a store whose event loop closed before its close ended is closed by a close
on another loop, every connection ended and nothing said on stderr ("Task was destroyed
but it is pending!", "Event loop is closed")."""

from __future__ import annotations

import asyncio
import logging
import os
import subprocess
import sys
import uuid
from collections.abc import AsyncIterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from mcp_elicit.stores import RedisStore

from support.redis import redis_available, redis_server
from support.waiting import HANG_GUARD, eventually, hang_guard

if TYPE_CHECKING:
    from redis.asyncio import Redis

pytestmark = pytest.mark.anyio

redis_asyncio = pytest.importorskip("redis.asyncio")
redis_sync = pytest.importorskip("redis")

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
async def raw(redis_url: str) -> AsyncIterator[Redis]:
    """A plain redis-py client on the test server: it pauses the writes and counts clients."""
    client = redis_asyncio.Redis.from_url(redis_url)
    yield client
    await client.execute_command("CLIENT", "UNPAUSE")
    await client.aclose()


async def _blocked_set(raw: Redis) -> bool:
    """Whether a client's ``SET`` waits in Redis (the writes are paused)."""
    return any(c["cmd"] == "set" for c in await raw.client_list())


@pytest.mark.parametrize("cancelled", [False, True], ids=["closed", "close-cancelled"])
async def test_a_close_waits_for_the_commands_under_way(redis_url: str, raw: Redis, cancelled: bool) -> None:
    """A put Redis holds (its writes paused) when the store is closed ends written, as its
    caller is told; the close returns once it has, every connection closed. A close
    cancelled meanwhile ends at once, and the closing goes on: a later close waits for it."""
    prefix = f"test-{uuid.uuid4().hex[:12]}"
    connected = len(await raw.client_list())
    store = RedisStore(redis_url, prefix=prefix)
    await store.get("flow", "warm")  # connected
    await raw.execute_command("CLIENT", "PAUSE", "60000", "WRITE")
    put = asyncio.ensure_future(store.put("flow", "k", b"v"))
    await eventually(lambda: _blocked_set(raw), "the put's SET waits in Redis")
    closing = asyncio.ensure_future(store.close())
    for _ in range(10):  # turns enough for a close that cuts the connection to have cut it
        await asyncio.sleep(0)
    assert not closing.done(), "the close did not wait for the put under way"
    if cancelled:
        closing.cancel()
        async with hang_guard("a cancelled close"):
            await asyncio.wait({closing})
        assert closing.cancelled()
    with pytest.raises(RuntimeError, match="closed"):
        await store.get("flow", "k")  # new calls are refused at once
    await raw.execute_command("CLIENT", "UNPAUSE")
    async with hang_guard("the put and the close"):
        await put  # written, as it says
        await store.close()
    assert await raw.get(f"{prefix}:flow:k") == b"v"

    async def closed() -> bool:  # Redis drops a closed connection a moment later
        return len(await raw.client_list()) == connected

    await eventually(closed, "every connection of the store is closed")


#: A loop on which a put waits in Redis (its writes paused) while the store closes, the
#: loop closed before either ends; then the store closed on another loop.
_CLOSED_WHILE_CLOSING = """
import asyncio, gc, sys, time
import redis
from mcp_elicit.stores import RedisStore

url, prefix = sys.argv[1], sys.argv[2]
raw = redis.Redis.from_url(url)
store = RedisStore(url, prefix=prefix)
early = asyncio.new_event_loop()
mine = []  # this script's own tasks, given up with their loop: it says nothing of them

async def begin():
    await store.put("flow", "done", b"1")
    raw.execute_command("CLIENT", "PAUSE", "60000", "WRITE")
    mine.append(asyncio.ensure_future(store.put("flow", "k", b"v")))
    while not any(c["cmd"] == "set" for c in raw.client_list()):
        await asyncio.sleep(0)
    mine.append(asyncio.ensure_future(store.close()))
    for _ in range(10):
        await asyncio.sleep(0)
    print("under way" if not any(task.done() for task in mine) else "ended", flush=True)

early.run_until_complete(begin())
early.close()  # the put and the close never end on it
for task in mine:
    task._log_destroy_pending = False  # as run_until_complete does for its own
del mine[:]
raw.execute_command("CLIENT", "UNPAUSE")
asyncio.run(store.close())
print("closed", flush=True)
gc.collect()
for _ in range(2000):  # Redis drops a closed connection a moment later
    if len(raw.client_list()) == 1:  # this one
        break
    time.sleep(0.01)
print("clients", len(raw.client_list()) - 1, flush=True)
print("done" if raw.get(f"{prefix}:flow:done") == b"1" else "lost", flush=True)
"""


@pytest.mark.skipif(not redis_available(), reason="redis-server is not installed")
def test_a_store_whose_loop_closed_while_it_closed_is_closed_by_the_next_close_quietly(
    tmp_path: Path,
) -> None:
    """The close a closed loop cut short was taken for done: a later close returned at
    once, the store's connections left open, and the collector then said "Task was destroyed
    but it is pending!" for its commands and "Event loop is closed" for their clean-up.
    Now the later close, on another loop, lets go of that work and ends every connection."""
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])),
    }
    with redis_server(tmp_path) as server:  # its own: every client it has is counted
        done = subprocess.run(
            [sys.executable, "-c", _CLOSED_WHILE_CLOSING, server.url, f"test-{uuid.uuid4().hex[:12]}"],
            capture_output=True,
            text=True,
            env=env,
            timeout=HANG_GUARD,
            check=False,
        )
    assert done.returncode == 0, done.stderr
    assert done.stdout.split("\n")[:4] == ["under way", "closed", "clients 0", "done"], (
        done.stdout,
        done.stderr,
    )
    for noise in ("Task was destroyed", "Event loop is closed", "Exception ignored", "never awaited"):
        assert noise not in done.stderr, done.stderr
    assert done.stderr == "", done.stderr


def test_a_store_used_again_under_a_new_event_loop_opens_new_connections(
    redis_url: str, caplog: pytest.LogCaptureFixture
) -> None:
    """A script's store used under ``asyncio.run`` twice: every call of the second run
    failed ("got Future attached to a different loop", then "Event loop is closed"), its
    connections being the closed loop's. Now the second run opens its own, quietly, since
    nothing was under way when the first loop closed."""
    store = RedisStore(redis_url, prefix=f"test-{uuid.uuid4().hex[:12]}")

    async def job(n: int) -> tuple[bytes | None, bytes | None]:
        await store.put("flow", f"k{n}", b"v")
        async with store.subscribe("c") as subscription:
            await store.publish("c", f"m{n}".encode())
            heard = await subscription.next(HANG_GUARD)
        return await store.get("flow", f"k{n}"), heard

    with caplog.at_level(logging.WARNING, logger="mcp_elicit.stores"):
        assert asyncio.run(job(1)) == (b"v", b"m1")
        assert asyncio.run(job(2)) == (b"v", b"m2")
    asyncio.run(store.close())
    assert caplog.records == []


@pytest.mark.parametrize("first", ["asyncio", "uvloop"])
@pytest.mark.filterwarnings("ignore::ResourceWarning")  # uvloop's close names the transport it left
def test_a_store_whose_loop_closed_with_a_command_under_way_works_and_closes_on_the_next(
    redis_url: str, caplog: pytest.LogCaptureFixture, first: str
) -> None:
    """The first loop closes while a put waits in Redis (its writes paused): the next loop's
    calls work on new connections, a warning says what was under way is lost, and the
    store's close returns (it does not wait for the put the closed loop left). The first
    loop a uvloop one (as ``mcp-elicit serve`` runs): the next call raised uvloop's
    "transport sockets do not support shutdown() method", and so did every one after."""
    store = RedisStore(redis_url, prefix=f"test-{uuid.uuid4().hex[:12]}")
    raw = redis_sync.Redis.from_url(redis_url)  # a loop of its own would close with the first
    early = pytest.importorskip(first).new_event_loop()
    mine: list[asyncio.Future[None]] = []  # the test's own task, given up with its loop

    async def begin() -> None:
        raw.execute_command("CLIENT", "PAUSE", "60000", "WRITE")
        mine.append(asyncio.ensure_future(store.put("flow", "early", b"v")))

        async def blocked() -> bool:
            return any(c["cmd"] == "set" for c in raw.client_list())

        await eventually(blocked, "the put's SET waits in Redis")

    try:
        early.run_until_complete(begin())
    finally:
        early.close()
        raw.execute_command("CLIENT", "UNPAUSE")
        raw.close()
    for task in mine:
        task._log_destroy_pending = False  # type: ignore[attr-defined]  # as run_until_complete does

    async def later() -> bytes | None:
        async with hang_guard("calls and the close on the next loop"):
            await store.put("flow", "later", b"w")
            got = await store.get("flow", "later")
            await store.close()
        return got

    with caplog.at_level(logging.WARNING, logger="mcp_elicit.stores"):
        assert asyncio.run(later()) == b"w"
    assert "what was under way there is lost" in caplog.text, caplog.text


#: A store used under ``asyncio.run`` twice, letting go of the first loop's connections
#: failing (an internal that changed): the second run's calls work, a warning says so.
_LET_GO_FAILS = """
import asyncio, logging, sys
from mcp_elicit.stores import RedisStore
from mcp_elicit.stores import redis as module

def changed(writer):
    raise TypeError("an internal that changed")

logging.basicConfig(level=logging.WARNING, format="%(message)s")
store = RedisStore(sys.argv[1], prefix=sys.argv[2])
asyncio.run(store.put("flow", "early", b"v"))  # connections left on the closed loop
module.shut_down = changed

async def later():
    await store.put("flow", "later", b"w")
    print(await store.get("flow", "later"), flush=True)
    await store.close()

asyncio.run(later())
"""


def test_a_failure_letting_go_of_a_closed_loop_is_logged_and_the_store_works_on(redis_url: str) -> None:
    """Letting go of a closed loop's connections works on redis-py's and asyncio's internals;
    one that changed (here: the shutdown raising, as uvloop's socket did) is a warning, and
    the store opens new connections all the same. The raise escaped: every later call of
    the store failed the same way, and its close did too. (In a process of its own: the
    connections not let go of are left to its collector.)"""
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])),
    }
    done = subprocess.run(
        [sys.executable, "-W", "ignore", "-c", _LET_GO_FAILS, redis_url, f"test-{uuid.uuid4().hex[:12]}"],
        capture_output=True,
        text=True,
        env=env,
        timeout=HANG_GUARD,
        check=False,
    )
    assert (done.returncode, done.stdout) == (0, "b'w'\n"), done.stderr
    assert "could not all be let go of (TypeError: an internal that changed)" in done.stderr, done.stderr
