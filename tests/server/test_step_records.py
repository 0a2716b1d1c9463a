"""``complete_elicitation`` in a process that never started the server (a payment
webhook's): configured with a store URL that cannot be used, the call returns, and the
log says the completion was not recorded, naming the step and why. A webhook's code calls
it as a plain function, and a store is opened only for the write, on the event loop: from
several threads at once, each running its own loop, every store so opened is closed; a
loop closed with writes under way leaves nothing stuck for the next completion."""

from __future__ import annotations

import asyncio
import inspect
import logging
import os
import subprocess
import sys
import threading
import uuid
from pathlib import Path

import pytest

from mcp_elicit import KeyRing, Server, stores
from mcp_elicit.server.url_steps import StepCompletions
from mcp_elicit.stores import Store

from support.handles import database_handles
from support.waiting import HANG_GUARD, eventually, hang_guard

pytestmark = pytest.mark.anyio

KEYS = KeyRing([bytes(range(40, 72))])
THREADS = 4
ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize(
    ("url", "why"),
    [
        ("bogus://x", "expected memory://"),
        ("sqlite://", "no database file"),
        ("redis://u:hunter2@:6379/0", "no host"),
    ],
)
async def test_a_store_url_that_cannot_be_used_is_logged_not_raised(
    url: str, why: str, caplog: pytest.LogCaptureFixture
) -> None:
    app = Server("shop", state_keys=KEYS, store=url)
    with caplog.at_level(logging.WARNING, logger="mcp_elicit.server"):
        assert app.complete_elicitation("pay-1", "alice") is False, "no session here asked it"
        await app.url_mode.close()  # the write under way ends first
    assert "'pay-1' could not be recorded" in caplog.text
    assert why in caplog.text, caplog.text
    assert "hunter2" not in caplog.text


async def test_webhook_threads_each_running_a_loop_close_every_store_they_open(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A webhook's threads, each running an event loop of its own, complete steps at once
    on one server that never started: every completion is recorded and every store opened
    for them is closed. The count of writes under way was kept unlocked by URL alone: two
    threads opening the store at once each counted themselves alone, and the store all but
    one of them opened was never closed (nor was one store kept to its own loop)."""
    path = tmp_path / "state.db"
    url = "sqlite:///" + str(path).lstrip("/")
    app = Server("shop", state_keys=KEYS, store=url)
    together = threading.Barrier(THREADS)
    opened: list[Store] = []
    open_store = stores.open_store

    def opening_at_once(where: str) -> Store:  # the threads open their stores at the same moment
        store = open_store(where)
        opened.append(store)
        together.wait(HANG_GUARD)
        return store

    monkeypatch.setattr(stores, "open_store", opening_at_once)

    def webhook(n: int) -> None:
        async def main() -> None:
            app.complete_elicitation(f"pay-{n}", "alice")
            await app.url_mode.close()  # as a webhook's worker does before its loop ends

        asyncio.run(main())

    threads = [threading.Thread(target=webhook, args=(n,), daemon=True) for n in range(THREADS)]
    for thread in threads:
        thread.start()
    for thread in threads:
        await asyncio.to_thread(thread.join, HANG_GUARD)
        assert not thread.is_alive(), "a webhook thread never ended"
    assert len(opened) == THREADS, "each loop opened a store of its own"
    assert database_handles(path) == [], "a store opened for a completion was left open"
    monkeypatch.undo()
    reader = StepCompletions(stores.open_store(url), ttl=600.0)
    try:
        missing = [n for n in range(THREADS) if not await reader.marker(f"pay-{n}", "alice")]
    finally:
        await reader.store.close()
    assert missing == [], f"completions lost: {missing}"


def _close_early(app: Server, *steps: str) -> None:
    """Complete ``steps`` on an event loop of its own, let their writes begin, and close the
    loop without awaiting or cancelling them (a webhook's code that returned too soon)."""
    loop = asyncio.new_event_loop()

    async def begin() -> None:
        for step in steps:
            app.complete_elicitation(step, "alice")
        for _ in range(3):  # a few turns: the writes are under way
            await asyncio.sleep(0)

    try:
        loop.run_until_complete(begin())
    finally:
        loop.close()


async def test_a_loop_closed_with_writes_under_way_leaves_nothing_stuck(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """A loop closed while its completions were being written never runs them on. A later
    completion, on another loop, is recorded; the store those writes held is closed; the
    steps they were writing are named in the log; and the server's close returns: it
    waited for the writes of the closed loop, for ever."""
    path = tmp_path / "state.db"
    url = "sqlite:///" + str(path).lstrip("/")
    app = Server("shop", state_keys=KEYS, store=url)
    await asyncio.to_thread(_close_early, app, "pay-0", "pay-1")
    # the store opens on its worker thread, which the closed loop did not wait for
    await eventually(lambda: database_handles(path), "the closed loop's writes hold the store open")
    with caplog.at_level(logging.WARNING, logger="mcp_elicit.server"):
        app.complete_elicitation("pay-2", "alice")
        async with hang_guard("the close, after a loop closed with writes under way"):
            await app.url_mode.close()
    assert "'pay-0', 'pay-1'" in caplog.text and "may not be recorded" in caplog.text, caplog.text
    assert database_handles(path) == [], "the store the closed loop's writes held was left open"
    reader = StepCompletions(stores.open_store(url), ttl=600.0)
    try:
        assert await reader.marker("pay-2", "alice"), "the later completion was lost"
    finally:
        await reader.store.close()


async def test_loops_closed_one_after_another_leave_no_write_half_closed(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """A loop closed with a write under way; the next loop's write takes over the store it
    held, to close it, and that loop is closed early too. A later completion lets go of
    both: the second write's coroutine, closed, then ended inside that store's close
    ("coroutine ignored GeneratorExit", swallowed) and stayed suspended there, to be run
    on by the garbage collector wherever it came (an executor's shutdown, a store's close
    with no loop), and every store it was to close after that one was never closed."""
    path = tmp_path / "state.db"
    url = "sqlite:///" + str(path).lstrip("/")
    app = Server("shop", state_keys=KEYS, store=url)
    records = app.url_mode._records
    stranded = []
    for step in ("pay-0", "pay-1"):
        await asyncio.to_thread(_close_early, app, step)
        stranded += [task.get_coro() for task in records._writing if task.get_loop().is_closed()]
    assert len(stranded) >= 2, "each closed loop left its write under way"
    with caplog.at_level(logging.WARNING, logger="mcp_elicit.server"):
        app.complete_elicitation("pay-2", "alice")
        async with hang_guard("the close, after two loops closed with writes under way"):
            await app.url_mode.close()
    half = [coro for coro in stranded if inspect.getcoroutinestate(coro) != inspect.CORO_CLOSED]
    assert half == [], "a closed loop's write was left suspended, for the collector to run on"
    assert database_handles(path) == [], "a store a closed loop's write held was left open"
    reader = StepCompletions(stores.open_store(url), ttl=600.0)
    try:
        assert await reader.marker("pay-2", "alice"), "the later completion was lost"
    finally:
        await reader.store.close()


#: A webhook's process on a Redis store: a loop closed with two writes under way on the
#: store's one connection (the second waiting for it), then a completion on another loop.
_CLOSED_EARLY_ON_REDIS = """
import asyncio, sys
from mcp_elicit import KeyRing, Server
from mcp_elicit.server.url_steps import StepCompletions
from mcp_elicit.stores import open_store

url, plain, bound = sys.argv[1], sys.argv[2], float(sys.argv[3])
app = Server("shop", state_keys=KeyRing([bytes(range(40, 72))]), store=url)
early = asyncio.new_event_loop()

async def begin():
    app.complete_elicitation("pay-0", "alice")
    app.complete_elicitation("pay-1", "alice")
    for _ in range(3):
        await asyncio.sleep(0)

early.run_until_complete(begin())
early.close()

async def later():
    reader = StepCompletions(open_store(plain), ttl=600.0)  # its own connections, uncapped
    try:
        app.complete_elicitation("pay-2", "alice")
        done = await reader.wait("pay-2", "alice", "", bound)  # a hang guard, not a time to beat
        print("recorded" if done else "lost", flush=True)
        await app.url_mode.close()
        print("closed", flush=True)
    finally:
        await reader.store.close()

asyncio.run(later())
"""


def test_a_redis_store_held_by_a_closed_loop_is_not_handed_to_another(redis_url: str) -> None:
    """On Redis the store a closed loop's writes held is bound to that loop (its pool's
    waiters): handed to a later completion on another loop, it failed with "bound to a
    different event loop", that completion and every later one lost. What the closed loop
    left pending (the writes, the store's commands) is let go of quietly: the collector
    said "Task was destroyed but it is pending!" for each, and "Event loop is closed"."""
    prefix = f"test-{uuid.uuid4().hex[:12]}"
    plain = f"{redis_url}?prefix={prefix}"
    url = f"{plain}&max_connections=1"
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])),
    }
    try:
        done = subprocess.run(
            [sys.executable, "-c", _CLOSED_EARLY_ON_REDIS, url, plain, str(HANG_GUARD / 2)],
            capture_output=True,
            env=env,
            timeout=HANG_GUARD,
            check=False,
        )
        said, errors = done.stdout, done.stderr
    except subprocess.TimeoutExpired as exc:  # its close hung: what it said before counts
        said, errors = exc.stdout or b"", exc.stderr or b""
    text = errors.decode(errors="replace")
    assert said.split()[:1] == [b"recorded"], text
    assert said.split() == [b"recorded", b"closed"], f"the close never ended: {text}"
    for noise in ("Task was destroyed", "Event loop is closed", "Exception ignored", "never awaited"):
        assert noise not in text, f"what the closed loop left was let go of aloud: {text}"
