"""``SqliteStore``: the embedded default, one SQLite file that survives restarts.

Rules:

* One table, ``entries(namespace, key, value BLOB, expires REAL)`` with the primary key
  ``(namespace, key)``; ``expires`` is wall-clock time (``clock``: ``time.time`` unless a
  test injects its own), so it means the same after a restart and in another process on
  the same host.
* The standard library ``sqlite3`` runs on one worker thread per store, never on the
  event loop. The connection is opened there on first use (creating the directory, mode
  0700, and the file, mode 0600), in WAL mode with ``synchronous=NORMAL``; a path that
  cannot be opened raises ``ConfigError`` from that first call. Opening takes the write
  lock only to set up the table in a new file; a lock held elsewhere then is met as by
  any later call (below), never as a ``ConfigError``.
* ``add`` is one ``INSERT ... ON CONFLICT DO UPDATE ... WHERE <the row has expired>``;
  ``take`` is ``SELECT`` + ``DELETE`` inside ``BEGIN IMMEDIATE``. Both hold SQLite's
  write lock, so they are atomic across connections and processes sharing the file;
  a busy database is waited for up to ``busy_timeout`` seconds, then the call raises
  ``sqlite3.OperationalError`` naming the file and the wait (reads are never blocked).
* Every ``sqlite3.Error`` a call raises names the file; its class and SQLite error code
  stay SQLite's own.
* Each call first checks that the path still names the file the connection opened (device
  and inode). A file deleted or replaced while open (``rm state.db*``, a restored backup)
  is let go with a warning on the ``mcp_elicit.stores`` logger and the path opened again,
  so every store on the path uses one file and a single-use marker is never spent once
  in each; what the old file held is gone with it.
* Expired rows read as absent and are purged lazily: on open, and every
  ``PURGE_EVERY`` writes (or ``purge()``).
* **Publish/subscribe stays in this process**: stores opened on the same file in one
  process share a ``Hub`` (by the file's real path: a symlinked directory is the same
  file), but another process never hears a publish. Several processes
  need Redis, or waiters that re-check the state whenever ``next`` times out.
* A database holding tables the store did not make (another program's) is refused with a
  ``ConfigError``, and nothing is written into it.
* SQLite's ``:memory:`` name is refused (``ConfigError``): it would be a file of that name
  in the working directory here, and a store for this process only is ``MemoryStore``.
* After ``close`` (idempotent: closes the subscriptions, the connection, the thread)
  every operation raises ``RuntimeError``. The connection is closed on the thread that
  opened it, after the calls already under way, even when ``close`` itself is cancelled:
  a cancelled ``close`` returns at once, never blocking the event loop until a call under
  way ends, and the worker closes the connection (once) and ends in the background; a
  ``close`` after it returns once the connection is closed. A failed open closes what it
  opened before it raises.
* A store dropped without ``close`` while it holds a connection is a leak (the file's
  handles and its lock held until the garbage collector comes): when collected it closes
  the connection and warns (``ResourceWarning``, as an unclosed file does). It closes it
  where the collector runs, taking no lock: the collector runs on any thread, inside any
  code, an executor's ``submit`` holding its module's lock included, where handing the
  close to the worker would wait for ever. No call of the store can be under way then
  (each holds the store), and its worker ends with its executor.
"""

from __future__ import annotations

import asyncio
import logging
import os
import sqlite3
import threading
import time
import warnings
import weakref
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import AbstractAsyncContextManager
from pathlib import Path
from typing import TypeVar

from mcp_elicit.errors import ConfigError
from mcp_elicit.stores.base import Subscription
from mcp_elicit.stores.checks import check_channel, check_key, check_ttl, check_value
from mcp_elicit.stores.hub import Hub, SubscriptionSet

__all__ = ["SqliteStore"]

log = logging.getLogger("mcp_elicit.stores")

T = TypeVar("T")

PURGE_EVERY = 256
MEMORY_NAME = ":memory:"
MEMORY_ADVICE = (
    "SQLite's ':memory:' is not supported (it would be a file named ':memory:' here): use "
    "memory:// (MemoryStore) for a store in this process only, or a file, "
    "sqlite:///path/to/state.db, for one shared by the processes of this host"
)
SCHEMA_VERSION = 1
_SCHEMA = (
    """CREATE TABLE IF NOT EXISTS entries (
        namespace TEXT NOT NULL,
        key TEXT NOT NULL,
        value BLOB NOT NULL,
        expires REAL,
        PRIMARY KEY (namespace, key)
    )""",
    "CREATE INDEX IF NOT EXISTS entries_by_expiry ON entries (expires) WHERE expires IS NOT NULL",
)
_LIVE = "namespace = ? AND key = ? AND (expires IS NULL OR expires > ?)"
_GET = f"SELECT value FROM entries WHERE {_LIVE}"
_PUT = (
    "INSERT INTO entries (namespace, key, value, expires) VALUES (?, ?, ?, ?) "
    "ON CONFLICT (namespace, key) DO UPDATE SET value = excluded.value, expires = excluded.expires"
)
_ADD = _PUT + " WHERE entries.expires IS NOT NULL AND entries.expires <= ?"
_DELETE = f"DELETE FROM entries WHERE {_LIVE}"
_PURGE = "DELETE FROM entries WHERE expires IS NOT NULL AND expires <= ?"

# Stores on the same file in this process share one hub (kept alive by the stores).
_HUBS: weakref.WeakValueDictionary[str, Hub] = weakref.WeakValueDictionary()
_HUBS_LOCK = threading.Lock()


class SqliteStore:
    """A ``Store`` in one SQLite file; see the module docstring for the rules."""

    def __init__(
        self,
        path: str | os.PathLike[str],
        *,
        busy_timeout: float = 5.0,
        clock: Callable[[], float] = time.time,
    ) -> None:
        if sqlite3.sqlite_version_info < (3, 24, 0):
            raise ConfigError(
                f"the SQLite store needs SQLite 3.24 or later; this Python has {sqlite3.sqlite_version}"
            )
        if os.fspath(path) == MEMORY_NAME:
            raise ConfigError(MEMORY_ADVICE)
        self.path = Path(os.path.abspath(Path(path).expanduser()))
        self._busy_timeout = busy_timeout
        self._clock = clock
        self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="mcp-elicit-sqlite")
        self._held = _Held()  # the connection: used on the worker thread only
        self._writes = 0  # worker thread only
        same_file = os.path.realpath(self.path)  # one hub per file, however it is spelled
        with _HUBS_LOCK:  # stores may be made on several threads, each with its own loop
            hub = _HUBS.get(same_file)
            if hub is None:
                hub = _HUBS[same_file] = Hub()
        self._hub = hub
        self._subs = SubscriptionSet(hub)
        self._closed = False
        self._closing: Future[None] | None = None  # the connection's close, once queued
        self._finalizer = weakref.finalize(self, _release, self._held, str(self.path))
        self._finalizer.atexit = False  # a store still referenced at exit is not a leak

    def __repr__(self) -> str:
        return f"SqliteStore({str(self.path)!r}{', closed' if self._closed else ''})"

    async def get(self, namespace: str, key: str) -> bytes | None:
        check_key(namespace, key)
        return await self._run(lambda db: _first(db.execute(_GET, (namespace, key, self._clock()))))

    async def put(self, namespace: str, key: str, value: bytes, *, ttl: float | None = None) -> None:
        check_key(namespace, key)
        check_value(value)
        ttl = check_ttl(ttl)

        def put(db: sqlite3.Connection) -> None:
            db.execute(_PUT, (namespace, key, value, _expires(ttl, self._clock())))
            self._wrote(db)

        await self._run(put)

    async def add(self, namespace: str, key: str, value: bytes, *, ttl: float | None = None) -> bool:
        check_key(namespace, key)
        check_value(value)
        ttl = check_ttl(ttl)

        def add(db: sqlite3.Connection) -> bool:
            now = self._clock()
            stored = db.execute(_ADD, (namespace, key, value, _expires(ttl, now), now)).rowcount == 1
            self._wrote(db)
            return stored

        return await self._run(add)

    async def take(self, namespace: str, key: str) -> bytes | None:
        check_key(namespace, key)

        def take(db: sqlite3.Connection) -> bytes | None:
            db.execute("BEGIN IMMEDIATE")
            try:
                value = _first(db.execute(_GET, (namespace, key, self._clock())))
                if value is not None:
                    db.execute("DELETE FROM entries WHERE namespace = ? AND key = ?", (namespace, key))
                db.execute("COMMIT")
            except BaseException:
                if db.in_transaction:
                    db.execute("ROLLBACK")
                raise
            return value

        return await self._run(take)

    async def delete(self, namespace: str, key: str) -> bool:
        check_key(namespace, key)
        return await self._run(lambda db: db.execute(_DELETE, (namespace, key, self._clock())).rowcount > 0)

    async def publish(self, channel: str, message: bytes) -> None:
        check_channel(channel)
        check_value(message)
        self._check_open()
        self._hub.publish(channel, message)

    def subscribe(self, channel: str) -> AbstractAsyncContextManager[Subscription]:
        check_channel(channel)
        self._check_open()
        return self._subs.subscribe(channel)

    async def purge(self) -> int:
        """Delete every expired row now; how many were deleted."""
        return await self._run(lambda db: _purge(db, self._clock()))

    async def close(self) -> None:
        if self._closing is not None:  # closed, or closing behind a call under way
            if not self._closing.done():  # a close cancelled before: wait for what it queued
                await asyncio.shield(asyncio.wrap_future(self._closing))
            return
        self._closed = True
        self._finalizer.detach()
        self._subs.close()
        # Queued after the calls under way; shielded, so that a cancelled close (a task
        # cancelled, a server stopping under a deadline) still closes the connection: an
        # executor's job cancelled before it starts never runs.
        closing = self._closing = self._executor.submit(self._held.close, final=True)
        try:
            await asyncio.shield(asyncio.wrap_future(closing))
        except BaseException:
            # Cancelled while a call under way holds the worker (a lock waited for up to
            # busy_timeout): the worker closes the connection once that call ends, then
            # its thread ends. Waiting for it here would block the event loop meanwhile.
            self._executor.shutdown(wait=False)
            raise
        self._executor.shutdown(wait=True)  # the worker is idle: its thread ends at once

    # ---- the worker thread -------------------------------------------------------------

    async def _run(self, job: Callable[[sqlite3.Connection], T]) -> T:
        self._check_open()
        return await asyncio.get_running_loop().run_in_executor(self._executor, self._call, job)

    def _call(self, job: Callable[[sqlite3.Connection], T]) -> T:
        held = self._held
        if held.db is not None and not self._still_the_file():
            log.warning(
                "the SQLite store %r was deleted or replaced while open: opening the file now at that path",
                str(self.path),
            )
            held.close()
        if held.released:  # after close's own job: never open the file again
            raise RuntimeError("the store is closed")
        db = held.db if held.db is not None else self._connect()
        try:
            return job(db)
        except sqlite3.Error as exc:
            raise _named(exc, self.path, self._busy_timeout) from exc

    def _connect(self) -> sqlite3.Connection:
        path = self.path
        try:
            path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
            os.close(os.open(path, os.O_CREAT | os.O_RDWR, 0o600))
            # Used on the worker thread only, but closed by _release wherever the collector
            # runs when the store is dropped unclosed (no call can be under way then).
            db = sqlite3.connect(
                path, timeout=self._busy_timeout, isolation_level=None, check_same_thread=False
            )
            try:
                opened = path.stat()
            except BaseException:
                db.close()
                raise
        except (FileExistsError, NotADirectoryError) as exc:  # mkdir's words for a file on the way
            raise ConfigError(f"cannot open the SQLite store {str(path)!r}: {_blocking(path, exc)}") from exc
        except (OSError, sqlite3.Error) as exc:
            raise ConfigError(f"cannot open the SQLite store {str(path)!r}: {exc}") from exc
        try:
            if self._schema_version(db) == 0:
                self._refuse_foreign(db)  # before WAL mode changes the file
            self._use_wal(db)
            db.execute("PRAGMA synchronous = NORMAL")
            if self._schema_version(db) < SCHEMA_VERSION:  # set up under the write lock
                db.execute("BEGIN IMMEDIATE")
                try:
                    if self._schema_version(db) < SCHEMA_VERSION:
                        self._refuse_foreign(db)
                        for statement in _SCHEMA:
                            db.execute(statement)
                        db.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
                    db.execute("COMMIT")
                except BaseException:
                    if db.in_transaction:
                        db.execute("ROLLBACK")
                    raise
            self._purge_if_free(db)
        except sqlite3.Error as exc:
            db.close()
            if _is_lock(exc):  # a good file, busy: the caller may try again
                raise _named(exc, path, self._busy_timeout) from exc
            raise ConfigError(f"cannot use the SQLite store {str(path)!r}: {exc}") from exc
        except BaseException:
            db.close()
            raise
        self._held.db = db
        self._held.opened = (opened.st_dev, opened.st_ino)
        return db

    def _still_the_file(self) -> bool:
        try:
            now = self.path.stat()
        except FileNotFoundError:
            return False
        except OSError:
            return True  # not checkable (a permission changed): the next statement says what is wrong
        return (now.st_dev, now.st_ino) == self._held.opened

    def _schema_version(self, db: sqlite3.Connection) -> int:
        version = int(db.execute("PRAGMA user_version").fetchone()[0])
        if version > SCHEMA_VERSION:
            raise ConfigError(
                f"the SQLite store {str(self.path)!r} has schema version {version}, "
                f"newer than this mcp-elicit's {SCHEMA_VERSION}"
            )
        return version

    def _refuse_foreign(self, db: sqlite3.Connection) -> None:
        """Refuse a database holding tables this store did not make (another program's)."""
        tables = [
            str(name)
            for (name,) in db.execute(
                "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\'"
            )
        ]
        columns = [str(row[1]) for row in db.execute("PRAGMA table_info(entries)")]
        foreign = [t for t in tables if t != "entries"]
        if columns and columns != ["namespace", "key", "value", "expires"]:
            foreign.append("entries")
        if foreign:
            raise ConfigError(
                f"the SQLite store {str(self.path)!r} is another program's database (it holds the "
                f"table{'s' if len(foreign) > 1 else ''} {', '.join(sorted(foreign))}): give the store "
                "a file of its own"
            )

    def _purge_if_free(self, db: sqlite3.Connection) -> None:
        """Purge on open unless another connection holds the write lock (then a later
        write purges): opening never waits for a lock to read."""
        db.execute("PRAGMA busy_timeout = 0")
        try:
            _purge(db, self._clock())
        except sqlite3.OperationalError as exc:
            if not _is_lock(exc):
                raise
        finally:
            db.execute(f"PRAGMA busy_timeout = {int(self._busy_timeout * 1000)}")

    def _use_wal(self, db: sqlite3.Connection) -> None:
        """Switch the file to WAL (a lasting property of the file). Two connections making
        the switch at once get "database is locked" without the busy handler being
        consulted, so this retries until ``busy_timeout``."""
        deadline = time.monotonic() + self._busy_timeout
        if db.execute("PRAGMA journal_mode").fetchone()[0] == "wal":
            return
        while True:
            try:
                db.execute("PRAGMA journal_mode = WAL").fetchall()
                return
            except sqlite3.OperationalError as exc:
                if "locked" not in str(exc) or time.monotonic() >= deadline:
                    raise
                time.sleep(0.01)

    def _wrote(self, db: sqlite3.Connection) -> None:
        self._writes += 1
        if self._writes % PURGE_EVERY == 0:
            _purge(db, self._clock())

    def _check_open(self) -> None:
        if self._closed:
            raise RuntimeError("the store is closed")


class _Held:
    """A store's connection, apart from the store so that a store collected unclosed can
    still close it (``_release``); touched on the store's worker thread only, until then."""

    __slots__ = ("db", "opened", "released")

    def __init__(self) -> None:
        self.db: sqlite3.Connection | None = None
        self.opened: tuple[int, int] | None = None  # (device, inode) of the file opened
        self.released = False  # closed for good: nothing opens it again

    def close(self, *, final: bool = False) -> None:
        self.released = self.released or final
        db, self.db = self.db, None
        if db is not None:
            db.close()


def _release(held: _Held, path: str) -> None:
    """A store collected without ``close``: its connection closed here, then the leak said,
    as Python says an unclosed file (``ResourceWarning``). Here is wherever the collector
    runs, so nothing that takes a lock: an executor's ``submit`` (its module's lock) or
    ``shutdown`` could be the very call the collector interrupted, and would wait on its
    own thread for ever. The worker thread ends once the store's executor is collected."""
    leaked = held.db is not None
    held.close(final=True)
    if leaked:
        warnings.warn(
            f"unclosed SqliteStore({path!r}): its connection held the file until the garbage "
            "collector came; close the store (await store.close()) when done with it",
            ResourceWarning,
            stacklevel=2,
        )


def _named(exc: sqlite3.Error, path: Path, busy_timeout: float) -> sqlite3.Error:
    """``exc`` again (same class, same SQLite error code), its message naming the file and,
    for a lock that outlasted ``busy_timeout``, what to do about it."""
    detail = str(exc) or type(exc).__name__
    if _is_lock(exc):
        text = (
            f"the SQLite store {str(path)!r} stayed locked by another connection for more than "
            f"{busy_timeout:g} s ({detail}): another process is holding its write lock; "
            "try again, or give several instances a Redis store"
        )
    else:
        text = f"the SQLite store {str(path)!r}: {detail}"
    named = type(exc)(text)
    for attribute in ("sqlite_errorcode", "sqlite_errorname"):
        if hasattr(exc, attribute):
            setattr(named, attribute, getattr(exc, attribute))
    return named


def _blocking(path: Path, exc: OSError) -> str:
    """What stands where a directory of ``path`` belongs (``mkdir`` calls it "File
    exists", as if the database were there), else ``exc`` as it is."""
    for parent in path.parents:
        if parent.exists() and not parent.is_dir():
            return f"{str(parent)!r} is a file, not a directory"
    return str(exc)


def _is_lock(exc: sqlite3.Error) -> bool:
    detail = str(exc)
    return isinstance(exc, sqlite3.OperationalError) and ("locked" in detail or "busy" in detail)


def _expires(ttl: float | None, now: float) -> float | None:
    return None if ttl is None else now + ttl


def _first(cursor: sqlite3.Cursor) -> bytes | None:
    row = cursor.fetchone()
    return None if row is None else bytes(row[0])


def _purge(db: sqlite3.Connection, now: float) -> int:
    return db.execute(_PURGE, (now,)).rowcount
