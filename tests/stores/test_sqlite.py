"""What the SQLite store promises beyond the contract: the file survives a restart, lives
in WAL mode with private permissions, purges expired rows, refuses files it cannot use,
holds ``add`` atomic between processes, and leaves no thread behind."""

from __future__ import annotations

import asyncio
import sqlite3
import stat
import subprocess
import sys
import textwrap
import threading
from collections.abc import Callable
from pathlib import Path

import pytest

from mcp_elicit.errors import ConfigError
from mcp_elicit.stores import SqliteStore
from mcp_elicit.stores import sqlite as sqlite_module
from stores.backends import FakeClock

from support.waiting import HANG_GUARD, HOURS, hang_guard

pytestmark = pytest.mark.anyio


def rows(path: Path) -> list[tuple[str, str]]:
    with sqlite3.connect(path) as db:
        found = db.execute("SELECT namespace, key FROM entries ORDER BY namespace, key").fetchall()
    db.close()
    return [(str(n), str(k)) for n, k in found]


async def test_entries_survive_close_and_reopen(tmp_path: Path) -> None:
    path = tmp_path / "state.db"
    clock = FakeClock()
    store = SqliteStore(path, clock=clock)
    await store.put("vault", "forever", bytes(range(256)))
    await store.put("flow", "an-hour", b"later", ttl=3600)
    await store.put("flow", "brief", b"gone", ttl=0.1)
    assert await store.add("used", "marker", b"") is True
    await store.close()
    clock.advance(0.15)

    again = SqliteStore(path, clock=clock)
    try:
        assert await again.get("vault", "forever") == bytes(range(256))
        assert await again.get("flow", "an-hour") == b"later"
        assert await again.get("flow", "brief") is None
        assert await again.add("used", "marker", b"") is False, "a single-use marker outlives a restart"
    finally:
        await again.close()
    assert ("flow", "brief") not in rows(path), "opening purges expired rows"


async def test_the_file_is_private_and_in_wal_mode(tmp_path: Path) -> None:
    path = tmp_path / "data" / "mcp-elicit" / "state.db"
    store = SqliteStore(path)
    try:
        await store.put("flow", "k", b"v")
        assert stat.S_IMODE(path.stat().st_mode) == 0o600
        assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700
        with sqlite3.connect(path) as db:
            assert db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
            columns = [(r[1], r[2], r[5]) for r in db.execute("PRAGMA table_info(entries)")]
            assert db.execute("PRAGMA user_version").fetchone()[0] == sqlite_module.SCHEMA_VERSION
        db.close()
        assert columns == [
            ("namespace", "TEXT", 1),
            ("key", "TEXT", 2),
            ("value", "BLOB", 0),
            ("expires", "REAL", 0),
        ]
    finally:
        await store.close()


async def test_expired_rows_are_purged(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "state.db"
    clock = FakeClock()
    store = SqliteStore(path, clock=clock)
    try:
        for i in range(3):
            await store.put("flow", f"brief-{i}", b"v", ttl=0.05)
        await store.put("flow", "kept", b"v", ttl=60)
        clock.advance(0.1)
        assert len(rows(path)) == 4, "expired rows stay until a purge"
        assert await store.purge() == 3
        assert rows(path) == [("flow", "kept")]

        monkeypatch.setattr(sqlite_module, "PURGE_EVERY", 2)
        await store.put("flow", "brief", b"v", ttl=0.05)
        clock.advance(0.1)
        await store.put("flow", "w1", b"v")
        await store.put("flow", "w2", b"v")
        assert ("flow", "brief") not in rows(path), "writes purge now and then"
    finally:
        await store.close()


async def test_close_stops_the_worker_thread(tmp_path: Path) -> None:
    store = SqliteStore(tmp_path / "state.db")
    await store.put("flow", "k", b"v")
    assert any(t.name.startswith("mcp-elicit-sqlite") for t in threading.enumerate())
    await store.close()
    assert not any(t.name.startswith("mcp-elicit-sqlite") for t in threading.enumerate())
    unused = SqliteStore(tmp_path / "never-used.db")
    await unused.close()
    assert not (tmp_path / "never-used.db").exists(), "nothing is opened before the first call"


async def test_closing_one_store_leaves_the_other_listening(tmp_path: Path) -> None:
    a, b = SqliteStore(tmp_path / "state.db"), SqliteStore(tmp_path / "state.db")
    try:
        async with b.subscribe("done") as sub:
            await a.close()
            await b.publish("done", b"still here")
            assert await sub.next(1.0) == b"still here"
    finally:
        await a.close()
        await b.close()


def not_a_database(tmp: Path) -> Path:
    path = tmp / "state.db"
    path.write_bytes(b"this is not a database, just some bytes" * 100)
    return path


def a_directory(tmp: Path) -> Path:
    path = tmp / "state.db"
    path.mkdir()
    return path


def under_a_file(tmp: Path) -> Path:
    (tmp / "file").write_bytes(b"")
    return tmp / "file" / "state.db"


@pytest.mark.parametrize(
    ("make", "match"),
    [(not_a_database, "cannot use"), (a_directory, "cannot open"), (under_a_file, "cannot open")],
)
async def test_unusable_files_are_config_errors(
    tmp_path: Path, make: Callable[[Path], Path], match: str
) -> None:
    store = SqliteStore(make(tmp_path))
    try:
        with pytest.raises(ConfigError, match=match):
            await store.get("flow", "k")
    finally:
        await store.close()


async def test_a_file_where_a_directory_of_the_path_belongs_is_named_as_such(tmp_path: Path) -> None:
    """``mkdir`` says "File exists" of a file in the directory part of the path, which
    reads as if the database were there already: the error names the file and says it
    is not a directory."""
    store = SqliteStore(under_a_file(tmp_path))
    try:
        with pytest.raises(ConfigError) as caught:
            await store.get("flow", "k")
    finally:
        await store.close()
    text = str(caught.value)
    assert f"{str(tmp_path / 'file')!r} is a file, not a directory" in text, text
    assert "File exists" not in text, text


@pytest.mark.parametrize(
    "schema",
    ["CREATE TABLE users (id INTEGER, name TEXT)", "CREATE TABLE entries (id INTEGER, title TEXT)"],
)
async def test_another_programs_database_is_refused_and_left_as_it_was(tmp_path: Path, schema: str) -> None:
    """A URL that names another program's database (a typo, a shared data directory):
    the store says so and writes nothing into it."""
    path = tmp_path / "other.db"
    with sqlite3.connect(path) as db:
        db.execute(schema)
    db.close()
    before = path.read_bytes()
    store = SqliteStore(path)
    try:
        with pytest.raises(ConfigError, match="another program") as caught:
            await store.put("flow", "k", b"v")
        assert str(path) in str(caught.value)
    finally:
        await store.close()
    assert path.read_bytes() == before


async def test_a_newer_schema_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "state.db"
    with sqlite3.connect(path) as db:
        db.execute("PRAGMA user_version = 99")
    db.close()
    store = SqliteStore(path)
    try:
        with pytest.raises(ConfigError, match="schema version 99"):
            await store.get("flow", "k")
    finally:
        await store.close()


WORKER = textwrap.dedent(
    """
    import asyncio, sys
    from mcp_elicit.stores import SqliteStore

    async def main():
        store = SqliteStore(sys.argv[1])
        await store.get("flow", "warm")
        print("ready", flush=True)
        sys.stdin.readline()
        won = [await store.add("used", f"k{i}", b"child") for i in range(int(sys.argv[2]))]
        await store.close()
        print(sum(won))

    asyncio.run(main())
    """
)


async def test_add_is_atomic_between_processes(tmp_path: Path) -> None:
    path = tmp_path / "state.db"
    keys = 200
    store = SqliteStore(path)
    try:
        await store.put("flow", "warm", b"")  # the file exists before the race starts
        child = await asyncio.create_subprocess_exec(
            sys.executable, "-c", WORKER, str(path), str(keys), stdin=subprocess.PIPE, stdout=subprocess.PIPE
        )
        assert child.stdin is not None and child.stdout is not None
        assert await asyncio.wait_for(child.stdout.readline(), 30) == b"ready\n"
        child.stdin.write(b"go\n")  # both sides race over the same keys from here
        mine = [await store.add("used", f"k{i}", b"parent") for i in range(keys)]
        out, _ = await asyncio.wait_for(child.communicate(), 30)
        assert child.returncode == 0
        assert sum(mine) + int(out) == keys, "every key was added exactly once"
        values = [await store.get("used", f"k{i}") for i in range(keys)]
        assert all(v == (b"parent" if won else b"child") for v, won in zip(values, mine, strict=True))
    finally:
        await store.close()


async def test_repr_names_the_file(tmp_path: Path) -> None:
    store = SqliteStore(tmp_path / "state.db")
    assert repr(store) == f"SqliteStore({str(tmp_path / 'state.db')!r})"
    await store.close()
    assert repr(store).endswith(", closed)")


HOLDER = textwrap.dedent(
    """
    import sqlite3, sys
    db = sqlite3.connect(sys.argv[1], isolation_level=None)
    db.execute("BEGIN IMMEDIATE")
    print("holding", flush=True)
    sys.stdin.readline()
    db.execute("COMMIT")
    """
)


async def test_a_write_lock_held_too_long_elsewhere_is_a_clear_error_naming_the_file(tmp_path: Path) -> None:
    """Another process (a backup, a stuck instance) holds the file's write lock: a write
    waits ``busy_timeout``, then fails saying which file and what to do, not only
    SQLite's "database is locked"; reads go on (WAL); once the lock is gone, writes work."""
    path = tmp_path / "state.db"
    store = SqliteStore(path, busy_timeout=0.3)
    try:
        await store.put("flow", "k", b"v")
        holder = await asyncio.create_subprocess_exec(
            sys.executable, "-c", HOLDER, str(path), stdin=subprocess.PIPE, stdout=subprocess.PIPE
        )
        assert holder.stdin is not None and holder.stdout is not None
        try:
            assert await asyncio.wait_for(holder.stdout.readline(), 30) == b"holding\n"
            for write in (
                store.put("flow", "k", b"w"),
                store.add("used", "m", b""),
                store.take("flow", "k"),
            ):
                started = asyncio.get_running_loop().time()
                with pytest.raises(sqlite3.OperationalError) as caught:
                    async with hang_guard("a write waiting for a lock held elsewhere"):
                        await write
                assert asyncio.get_running_loop().time() - started >= 0.25, "busy_timeout was waited"
                message = str(caught.value)
                assert str(path) in message and "locked" in message and "0.3 s" in message, message
            assert await store.get("flow", "k") == b"v", "reads go on while another process writes"
        finally:
            holder.stdin.write(b"done\n")
            await asyncio.wait_for(holder.wait(), 30)
        assert await store.take("flow", "k") == b"v"
    finally:
        await store.close()


TAKER = textwrap.dedent(
    """
    import asyncio, sys
    from mcp_elicit.stores import SqliteStore

    async def main():
        store = SqliteStore(sys.argv[1])
        await store.get("flow", "warm")
        print("ready", flush=True)
        sys.stdin.readline()
        got = [await store.take("flow", f"k{i}") for i in range(int(sys.argv[2]))]
        await store.close()
        print(sum(v is not None for v in got))

    asyncio.run(main())
    """
)


async def test_take_is_atomic_between_processes(tmp_path: Path) -> None:
    """A single-use value (a link, a state) taken by two processes at once goes to one."""
    path = tmp_path / "state.db"
    keys = 200
    store = SqliteStore(path)
    try:
        for i in range(keys):
            await store.put("flow", f"k{i}", b"once")
        child = await asyncio.create_subprocess_exec(
            sys.executable, "-c", TAKER, str(path), str(keys), stdin=subprocess.PIPE, stdout=subprocess.PIPE
        )
        assert child.stdin is not None and child.stdout is not None
        assert await asyncio.wait_for(child.stdout.readline(), 30) == b"ready\n"
        child.stdin.write(b"go\n")
        mine = [await store.take("flow", f"k{i}") for i in range(keys)]
        out, _ = await asyncio.wait_for(child.communicate(), 30)
        assert child.returncode == 0
        assert sum(v is not None for v in mine) + int(out) == keys, "every value was taken exactly once"
    finally:
        await store.close()


async def test_stores_on_one_file_by_two_spellings_hear_each_other(tmp_path: Path) -> None:
    """The file through a symlinked directory, or with a doubled leading '/', is still the
    one file: a publish on one store reaches a subscriber on the other."""
    (tmp_path / "real").mkdir()
    (tmp_path / "link").symlink_to(tmp_path / "real", target_is_directory=True)
    spellings = [
        (tmp_path / "real" / "state.db", tmp_path / "link" / "state.db"),
        (tmp_path / "real" / "state.db", Path("/" + str(tmp_path / "real" / "state.db"))),
    ]
    for first, second in spellings:
        a, b = SqliteStore(first), SqliteStore(second)
        try:
            await a.put("flow", "k", b"v")
            assert await b.get("flow", "k") == b"v", "the same file"
            async with a.subscribe("done") as sub:
                await b.publish("done", b"from b")
                assert await sub.next(1.0) == b"from b", (first, second)
        finally:
            await a.close()
            await b.close()


def test_a_publish_from_another_event_loop_thread_wakes_the_waiter_at_once(tmp_path: Path) -> None:
    """Two event loops in two threads (an embedded server beside the application's own
    loop) with stores on one file: a waiter on one loop hears a publish from the other
    at once, not when its wait runs out."""
    path = tmp_path / "state.db"
    subscribed = threading.Event()
    heard: list[bytes | None] = []

    async def wait() -> None:
        store = SqliteStore(path)
        try:
            async with store.subscribe("done") as sub:
                subscribed.set()
                async with hang_guard("a waiter hearing a publish from another loop"):
                    heard.append(await sub.next(HOURS))
        finally:
            await store.close()

    async def publish() -> None:
        store = SqliteStore(path)
        try:
            await store.publish("done", b"from the other loop")
        finally:
            await store.close()

    waiter = threading.Thread(target=asyncio.run, args=(wait(),))
    waiter.start()
    try:
        assert subscribed.wait(10)
        asyncio.run(publish())
    finally:
        waiter.join(HANG_GUARD + 10)
    assert not waiter.is_alive(), "the waiter did not hear the publish from the other loop"
    assert heard == [b"from the other loop"]


async def test_a_file_deleted_while_open_is_followed_so_a_marker_is_spent_once(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """Someone deletes the file (``rm state.db*``) while a server runs: a store opened
    afterwards makes a new file, and a store already open must use that one too, or a
    single-use marker could be spent once in each file."""
    path = tmp_path / "state.db"
    running = SqliteStore(path)
    try:
        await running.put("flow", "k", b"v")
        for name in ("state.db", "state.db-wal", "state.db-shm"):
            (tmp_path / name).unlink(missing_ok=True)
        later = SqliteStore(path)
        try:
            assert await later.add("used", "m", b"later") is True
            assert await running.add("used", "m", b"running") is False, "spent in the new file already"
            assert f"{str(path)!r} was deleted or replaced" in caplog.text
            assert await running.take("used", "m") == b"later"
            assert await later.add("used", "m", b"again") is True
        finally:
            await later.close()
        await running.close()
        again = SqliteStore(path)
        try:
            assert await again.get("used", "m") == b"again", "closing the old connection removed nothing"
        finally:
            await again.close()
    finally:
        await running.close()


async def test_a_write_lock_held_elsewhere_at_the_first_call_is_the_lock_error_not_a_config_error(
    tmp_path: Path,
) -> None:
    """The first call of a store (a server starting while another instance or a backup
    writes) meets the lock like any later call: reads go on, a write waits
    ``busy_timeout`` and fails with the lock error naming the file, never a
    ``ConfigError`` calling a good file unusable; once the lock is gone all works."""
    path = tmp_path / "state.db"
    setup = SqliteStore(path)
    await setup.put("flow", "k", b"v")
    await setup.close()
    fresh = tmp_path / "fresh.db"  # a file the store has never set up: it must wait to write its table
    with sqlite3.connect(fresh) as db:
        db.execute("PRAGMA journal_mode = WAL")
    db.close()
    for file, readable in ((path, True), (fresh, False)):
        holder = await asyncio.create_subprocess_exec(
            sys.executable, "-c", HOLDER, str(file), stdin=subprocess.PIPE, stdout=subprocess.PIPE
        )
        assert holder.stdin is not None and holder.stdout is not None
        store = SqliteStore(file, busy_timeout=0.3)
        try:
            try:
                assert await asyncio.wait_for(holder.stdout.readline(), 30) == b"holding\n"
                if readable:
                    assert await asyncio.wait_for(store.get("flow", "k"), 10) == b"v"
                with pytest.raises(sqlite3.OperationalError) as caught:
                    await asyncio.wait_for(store.put("flow", "k", b"w"), 10)
                assert not isinstance(caught.value, ConfigError)
                message = str(caught.value)
                assert str(file) in message and "locked" in message and "0.3 s" in message, message
            finally:
                holder.stdin.write(b"done\n")
                await asyncio.wait_for(holder.wait(), 30)
            await store.put("flow", "k", b"w")
            assert await store.get("flow", "k") == b"w"
        finally:
            await store.close()
