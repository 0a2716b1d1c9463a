"""The SQLite store lets go of its file: after ``close`` (cancelled or not), after an open
that fails, after the file is replaced under it, and when it is dropped unclosed (then
with a ``ResourceWarning``). Counted as the descriptors this process holds on the file
(``support.handles``), which every Python shows, where only 3.13 and later warn about a
connection the garbage collector finds open."""

from __future__ import annotations

import asyncio
import gc
import json
import os
import sqlite3
import subprocess
import sys
import threading
import time
import warnings
from pathlib import Path

import pytest

from mcp_elicit.errors import ConfigError
from mcp_elicit.stores import SqliteStore

from support.handles import database_handles
from support.waiting import HANG_GUARD

pytestmark = pytest.mark.anyio

ROOT = Path(__file__).resolve().parents[2]


class GatedClock:
    """``time.time``, except that once ``hold()`` was called the next reading waits (on
    the store's worker thread, inside the call that asked) until ``gate`` is set."""

    def __init__(self, gate: threading.Event) -> None:
        self.held = False
        self.entered = threading.Event()
        self.gate = gate

    def hold(self) -> None:
        self.held = True

    def __call__(self) -> float:
        if self.held:
            self.held = False
            self.entered.set()
            assert self.gate.wait(HANG_GUARD), "the call was never let go on"
        return time.time()


async def _calls_let_go(store: SqliteStore) -> None:
    """Once this returns, the store's worker holds none of its calls (each holds the store):
    the worker may still hold the last one when the caller is told its result, and only
    drops it before it takes the next job, here one that holds nothing."""
    await asyncio.get_running_loop().run_in_executor(store._executor, int)


def _drop(stores: list[SqliteStore]) -> None:
    """Let go of the only references to ``stores``, and collect."""
    stores.clear()
    gc.collect()


def _workers() -> set[threading.Thread]:
    return {t for t in threading.enumerate() if t.name.startswith("mcp-elicit-sqlite")}


async def test_close_lets_go_of_every_handle_on_the_file(tmp_path: Path) -> None:
    path = tmp_path / "state.db"
    store = SqliteStore(path)
    await store.put("flow", "k", b"v")
    assert database_handles(path), "an open store holds the file (what the count sees)"
    await store.close()
    assert database_handles(path) == []


async def test_a_close_cancelled_behind_a_call_under_way_returns_and_still_closes_the_connection(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``close`` waits behind a call on the worker thread (a lock waited for up to
    ``busy_timeout``, say) and is cancelled there (a server stopping under a deadline): it
    returns at once, the call still under way, instead of blocking the event loop until
    that call ended (it waited for the worker thread there). The call ends, and the worker
    then closes the connection, once, and ends. An executor's job cancelled before it
    starts never runs, so a close that let its own job be cancelled left the file open."""
    closes: list[sqlite3.Connection] = []

    class Counted(sqlite3.Connection):
        def close(self) -> None:
            closes.append(self)
            super().close()

    connect = sqlite3.connect
    monkeypatch.setattr(sqlite3, "connect", lambda *args, **kwargs: connect(*args, factory=Counted, **kwargs))
    path = tmp_path / "state.db"
    gate = threading.Event()
    clock = GatedClock(gate)
    before = _workers()
    store = SqliteStore(path, clock=clock)
    await store.put("flow", "first", b"1")
    clock.hold()
    putting = asyncio.create_task(store.put("flow", "second", b"2"))
    assert await asyncio.to_thread(clock.entered.wait, HANG_GUARD), "the put never reached the worker"
    returned, blocked = threading.Event(), threading.Event()

    def watchdog() -> None:  # lets a blocked loop go on, so that the test fails rather than hangs
        if not returned.wait(HANG_GUARD):
            blocked.set()
            gate.set()

    threading.Thread(target=watchdog, daemon=True).start()
    with pytest.raises(TimeoutError):
        async with asyncio.timeout(0):  # cancels the close once it waits behind the put
            await store.close()
    returned.set()
    assert not blocked.is_set(), "the cancelled close blocked the event loop until the put ended"
    assert not putting.done() and not gate.is_set(), "the put is still under way"
    assert closes == [], "the connection is closed after the call under way, not before"
    gate.set()
    await putting
    for worker in _workers() - before:  # it closes the connection, then ends
        await asyncio.to_thread(worker.join, HANG_GUARD)
        assert not worker.is_alive(), "the worker never ended"
    assert len(closes) == 1, f"the connection was closed {len(closes)} times"
    assert database_handles(path) == [], "the cancelled close left the connection open"
    with pytest.raises(RuntimeError, match="closed"):
        await store.get("flow", "first")
    await store.close()  # closed already: nothing more happens
    assert len(closes) == 1
    reopened = SqliteStore(path)
    try:
        assert await reopened.get("flow", "second") == b"2", "the call under way was written"
    finally:
        await reopened.close()


async def test_a_close_after_a_cancelled_one_returns_once_the_connection_is_closed(tmp_path: Path) -> None:
    """A close cancelled behind a call under way returns at once, the connection still
    open until that call ends. Closing again (a caller that makes sure, a second stop)
    waits for that connection's close: it returned at once, the file still open, so a
    caller went on to move or delete a file still held (and on Windows could not)."""
    path = tmp_path / "state.db"
    gate = threading.Event()
    clock = GatedClock(gate)
    store = SqliteStore(path, clock=clock)
    await store.put("flow", "first", b"1")
    clock.hold()
    putting = asyncio.create_task(store.put("flow", "second", b"2"))
    try:
        assert await asyncio.to_thread(clock.entered.wait, HANG_GUARD), "the put never reached the worker"
        with pytest.raises(TimeoutError):
            async with asyncio.timeout(0):  # cancels the close once it waits behind the put
                await store.close()
        again = asyncio.create_task(store.close())
        for _ in range(5):  # turns of the loop: a close that waits for nothing is done by now
            await asyncio.sleep(0)
        assert not again.done(), "the second close returned with the connection still open"
        gate.set()
        async with asyncio.timeout(HANG_GUARD):
            await again
        assert database_handles(path) == [], "the second close returned before the connection closed"
        await putting
    finally:
        gate.set()
        await asyncio.gather(putting, return_exceptions=True)


@pytest.mark.parametrize("kind", ["another program's", "a newer schema"])
async def test_an_open_that_fails_closes_what_it_opened(tmp_path: Path, kind: str) -> None:
    path = tmp_path / "state.db"
    db = sqlite3.connect(path)
    try:
        if kind == "another program's":
            db.execute("CREATE TABLE invoices (id INTEGER)")
        else:
            db.execute("PRAGMA user_version = 99")
        db.commit()
    finally:
        db.close()
    store = SqliteStore(path)
    try:
        with pytest.raises(ConfigError):
            await store.get("flow", "k")
        assert database_handles(path) == [], f"refusing {kind} database left it open"
    finally:
        await store.close()


async def test_a_file_replaced_while_open_is_let_go(tmp_path: Path) -> None:
    """The file is deleted under the store (``rm state.db*``): the next call opens the file
    now at the path and closes the old one, rather than holding a deleted file open."""
    path = tmp_path / "state.db"
    store = SqliteStore(path)
    try:
        await store.put("flow", "k", b"v")
        for name in ("state.db", "state.db-wal", "state.db-shm"):
            (tmp_path / name).unlink(missing_ok=True)
        assert all(h.endswith(" (deleted)") for h in database_handles(path))
        assert await store.get("flow", "k") is None
        assert not [h for h in database_handles(path) if h.endswith(" (deleted)")]
    finally:
        await store.close()
    assert database_handles(path) == []


async def test_a_store_dropped_unclosed_warns_and_closes_its_connection(tmp_path: Path) -> None:
    """A store collected while it holds a connection says so, as an unclosed file does,
    and closes the connection, and its worker thread ends; one that never opened the file
    holds nothing, and says nothing."""
    path = tmp_path / "state.db"
    before = _workers()
    stores = [SqliteStore(path)]
    await stores[0].put("flow", "k", b"v")
    await _calls_let_go(stores[0])
    assert database_handles(path)
    with pytest.warns(ResourceWarning, match=r"unclosed SqliteStore\(.*state\.db'\).*await store\.close\(\)"):
        _drop(stores)
    for worker in _workers() - before:  # it ends with the store's executor
        worker.join(HANG_GUARD)
    assert database_handles(path) == []

    unused = [SqliteStore(tmp_path / "unused.db")]
    with warnings.catch_warnings():
        warnings.simplefilter("error", ResourceWarning)
        _drop(unused)
    assert not (tmp_path / "unused.db").exists()


#: Run in a child process (a hang there cannot take the suite's executors with it): a
#: store dropped unclosed in a reference cycle, then the collector coming while the thread
#: is inside an executor's ``submit``, as any ``run_in_executor`` or ``to_thread`` may be
#: when an allocation there triggers a collection. ``submit`` holds its module's lock then.
_COLLECTED_INSIDE_SUBMIT = """
import asyncio, gc, json, os, sys, warnings
from concurrent.futures import thread
from mcp_elicit.stores import SqliteStore

path = sys.argv[1]

async def opened():
    store = SqliteStore(path)
    await store.put("flow", "k", b"v")
    await asyncio.get_running_loop().run_in_executor(store._executor, int)  # the worker let go of the put
    return store

cycle = [asyncio.run(opened())]
cycle.append(cycle)
del cycle
with warnings.catch_warnings(record=True) as seen:
    warnings.simplefilter("always")
    with thread._global_shutdown_lock:  # what every executor's submit holds
        gc.collect()
names = {os.path.realpath(path) + end for end in ("", "-wal", "-shm")}
held = []
for fd in os.listdir("/proc/self/fd"):
    try:
        held.append(os.readlink(f"/proc/self/fd/{fd}"))
    except OSError:
        pass
print(json.dumps({
    "warned": [str(w.message) for w in seen if issubclass(w.category, ResourceWarning)],
    "held": [h for h in held if h.removesuffix(" (deleted)") in names],
}))
"""


def test_a_store_collected_inside_an_executors_submit_is_closed_without_hanging(tmp_path: Path) -> None:
    """The collector runs on whatever thread allocates, inside whatever call: handing the
    connection's close to the worker from there (``submit``, ``shutdown``) takes a lock
    the interrupted code may hold, and a collection inside another executor's ``submit``
    (an ``asyncio.to_thread``) hung the event loop for ever. The store closes it there and
    then, and still says it was leaked."""
    if not Path("/proc/self/fd").is_dir():
        pytest.skip("counting open files needs /proc/self/fd (Linux)")
    path = tmp_path / "state.db"
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])),
    }
    try:
        done = subprocess.run(
            [sys.executable, "-c", _COLLECTED_INSIDE_SUBMIT, str(path)],
            capture_output=True,
            text=True,
            env=env,
            timeout=HANG_GUARD,
            check=False,
        )
    except subprocess.TimeoutExpired:
        raise AssertionError("the collector, inside an executor's submit, hung closing the store") from None
    assert done.returncode == 0, done.stderr
    seen = json.loads(done.stdout)
    assert seen["held"] == [], "the collected store left its connection open"
    assert len(seen["warned"]) == 1 and "unclosed SqliteStore" in seen["warned"][0], seen
