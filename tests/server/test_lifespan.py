"""``Server(lifespan=...)``: entered once when the server starts serving, exited once it
stops, what it yielded read by handlers as ``ctx.lifespan_context`` (at both revisions,
across 2026-07-28 rounds and in a task) and outside them as ``server.lifespan_context``; a
failure on entry stops the start, with nothing left held. Through mcp-elicit's client in
memory (``connect_memory`` starts the server) and ``Server.start``/``stop`` as transports await
them; the real transports are in tests/transports/test_lifespan_transports.py."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import sqlite3
import threading
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import anyio
import pytest

from mcp_elicit import Context, Form, Integer, KeyRing, Server
from mcp_elicit.client import ElicitAnswer, ElicitationRequest
from mcp_elicit.errors import ConfigError
from mcp_elicit.stores.memory import MemoryStore
from mcp_elicit.transports.memory import connect_memory

from support.memory import MemoryClient
from support.readme import REVISIONS
from support.tasks import WITH_TASKS, settle
from support.waiting import eventually, hang_guard

pytestmark = pytest.mark.anyio


class Pool:
    """What a lifespan opens: a stand-in for a database pool, saying when it is used."""

    def __init__(self, events: list[str]) -> None:
        self.events = events
        self.open = True

    def query(self, what: str) -> str:
        assert self.open, "the pool was used after it was closed"
        self.events.append(f"query {what}")
        return f"rows for {what}"


def pooled(events: list[str], **options: Any) -> Server:
    @contextlib.asynccontextmanager
    async def lifespan(server: Server) -> AsyncIterator[dict[str, Pool]]:
        events.append(f"enter {server.name}")
        pool = Pool(events)
        try:
            yield {"pool": pool}
        finally:
            pool.open = False
            events.append("exit")

    app = Server("pooled", lifespan=lifespan, **options)

    @app.tool
    async def count(ctx: Context, table: str) -> str:
        """Count a table's rows, asking how many to show."""
        pool = ctx.lifespan_context["pool"]
        events.append("round")  # once per round: twice on 2026-07-28
        answer = await ctx.elicit(f"How many rows of {table}?", Form(value=Integer()))
        same = ctx.lifespan_context["pool"] is pool is app.lifespan_context["pool"]
        return f"{pool.query(table)}, {answer.data['value'] if answer.data else '-'} shown, same pool: {same}"

    @app.tool
    def count_in_a_thread(table: str, ctx: Context) -> str:
        """The same from a plain function (a worker thread)."""
        return str(ctx.lifespan_context["pool"].query(table))

    return app


class Three:
    modes = frozenset({"form"})

    async def elicit(self, request: ElicitationRequest) -> ElicitAnswer:
        return ElicitAnswer.accept(value=3)


@pytest.mark.parametrize("revision", REVISIONS)
async def test_the_yielded_value_reaches_handlers_and_every_round(revision: str) -> None:
    events: list[str] = []
    app = pooled(events)
    async with connect_memory(app, answerer=Three(), versions=(revision,)) as client:
        assert events == ["enter pooled"]
        result = await client.call_tool("count", {"table": "bookings"})
        assert result["content"][0]["text"] == "rows for bookings, 3 shown, same pool: True"
        threaded = await client.call_tool("count_in_a_thread", {"table": "guests"})
        assert threaded["content"][0]["text"] == "rows for guests"
        assert isinstance(app.lifespan_context["pool"], Pool)
    rounds = 2 if revision == "2026-07-28" else 1  # the handler runs again on the retry
    assert events == ["enter pooled", *["round"] * rounds, "query bookings", "query guests", "exit"]


async def test_several_connections_share_one_entry_exited_after_the_last() -> None:
    events: list[str] = []
    app = pooled(events)
    async with connect_memory(app, answerer=Three()) as first:
        async with connect_memory(app, answerer=Three(), versions=("2025-11-25",)) as second:
            await first.call_tool("count_in_a_thread", {"table": "a"})
            await second.call_tool("count_in_a_thread", {"table": "b"})
        assert events == ["enter pooled", "query a", "query b"]  # the first still holds it
        await first.call_tool("count_in_a_thread", {"table": "c"})
    assert events == ["enter pooled", "query a", "query b", "query c", "exit"]
    async with connect_memory(app, answerer=Three()) as again:  # a later start enters it anew
        await again.call_tool("count_in_a_thread", {"table": "d"})
    assert events[5:] == ["enter pooled", "query d", "exit"]


async def test_holders_that_come_while_it_is_entered_wait_for_that_entry() -> None:
    entered = 0
    opening = asyncio.Event()

    @contextlib.asynccontextmanager
    async def slow(server: Server) -> AsyncIterator[str]:
        nonlocal entered
        entered += 1
        await opening.wait()
        yield "ready"

    app = Server("slow", lifespan=slow)
    async with hang_guard("three holders entering at once"):
        holders = [asyncio.ensure_future(app.start()) for _ in range(2)]
        held = app.hold_lifespan()
        memory = asyncio.ensure_future(held.__aenter__())
        await asyncio.sleep(0)
        opening.set()
        await asyncio.gather(*holders)
        assert await memory == "ready"
    assert entered == 1 and app.lifespan_context == "ready"
    await app.stop()
    await app.stop()
    assert app.lifespan_context == "ready"  # the memory holder still holds it
    await held.__aexit__(None, None, None)
    with pytest.raises(RuntimeError, match="is not running"):
        app.lifespan_context  # noqa: B018


async def test_read_while_not_running_says_how_it_is_entered() -> None:
    app = pooled([])
    with pytest.raises(
        RuntimeError,
        match=r"the lifespan of server 'pooled' is not running: it is entered when the server starts "
        r"serving \(mcp-elicit serve, StreamableHTTP's lifespan start-up, connect_memory\), or with "
        r"'async with server.hold_lifespan\(\):'",
    ):
        app.lifespan_context  # noqa: B018


async def test_without_a_lifespan_handlers_read_none() -> None:
    app = Server("plain")

    @app.tool
    async def look(ctx: Context) -> str:
        return repr(ctx.lifespan_context)

    assert app.lifespan_context is None
    async with connect_memory(app) as client:
        assert (await client.call_tool("look"))["content"][0]["text"] == "None"


class DatabaseDown(Exception):
    pass


async def test_a_failure_on_entry_stops_the_start_and_nothing_is_held() -> None:
    events: list[str] = []

    @contextlib.asynccontextmanager
    async def failing(server: Server) -> AsyncIterator[None]:
        events.append("enter")
        raise DatabaseDown("db.invalid:5432 refused the connection")
        yield

    app = Server("down", lifespan=failing)
    says = r"the lifespan of server 'down' failed on entry: DatabaseDown: db\.invalid:5432 refused the connection"
    with pytest.raises(ConfigError, match=says) as raised:
        await app.start()
    assert isinstance(raised.value.__cause__, DatabaseDown)
    with pytest.raises(ConfigError, match=says):
        async with connect_memory(app):
            raise AssertionError("connected without its lifespan")
    with pytest.raises(RuntimeError, match="is not running"):
        app.lifespan_context  # noqa: B018
    await app.stop()  # nothing held: nothing to exit
    assert events == ["enter", "enter"]


class BrokenStore(MemoryStore):
    async def get(self, namespace: str, key: str) -> bytes | None:
        raise OSError("disk on fire")


async def test_a_store_that_cannot_be_used_fails_the_start_before_the_lifespan_is_entered(
    tmp_path: Path,
) -> None:
    # a misconfigured store is a configuration error: what the lifespan opens (a database
    # pool, a client) is never opened for a server that does not start
    (tmp_path / "a-file").write_text("not a directory", encoding="utf-8")
    unusable = tmp_path / "a-file" / "state.db"
    for store, says in [
        (BrokenStore(), "the URL-mode store BrokenStore cannot be used: .*disk on fire"),
        (
            f"sqlite:///{unusable}",
            "the URL-mode store sqlite:///.* cannot be used: cannot open the SQLite store",
        ),
    ]:
        events: list[str] = []
        app = pooled(events, store=store)
        with pytest.raises(ConfigError, match=says):
            await app.start()
        assert events == [], store
        await app.stop()  # nothing held: nothing to exit
        assert events == [], store


def sqlite_threads() -> int:
    return sum(thread.name.startswith("mcp-elicit-sqlite") for thread in threading.enumerate())


async def test_a_lifespan_that_fails_closes_the_store_the_start_opened(tmp_path: Path) -> None:
    @contextlib.asynccontextmanager
    async def failing(server: Server) -> AsyncIterator[None]:
        raise DatabaseDown("db.invalid:5432 refused the connection")
        yield

    before = sqlite_threads()
    app = Server("down", lifespan=failing, store=f"sqlite:///{tmp_path / 'state.db'}")
    with pytest.raises(ConfigError, match="failed on entry: DatabaseDown"):
        await app.start()
    assert sqlite_threads() == before  # the store checked first was closed again, its thread with it


async def test_a_start_cancelled_while_it_checks_the_store_closes_it(tmp_path: Path) -> None:
    # a stop signal while the store does not answer (serve over stdio and --http cancel the
    # start): the store the check opened is closed again, its thread with it
    before = sqlite_threads()
    app = Server("checking", store=f"sqlite:///{tmp_path / 'state.db'}")
    start = asyncio.ensure_future(app.start())
    await asyncio.sleep(0)  # the check has opened the store and waits on its first write
    assert sqlite_threads() == before + 1
    start.cancel()
    with pytest.raises(asyncio.CancelledError):
        await start
    assert sqlite_threads() == before


async def test_a_start_cancelled_in_a_cancel_scope_closes_the_store_to_its_end(tmp_path: Path) -> None:
    # a host's anyio cancel scope cancels every await of the start's undoing, not only the
    # first: the store the check opened is closed all the same before the start raises
    before = sqlite_threads()
    app = Server("checking", store=f"sqlite:///{tmp_path / 'state.db'}")
    with anyio.CancelScope() as scope:
        asyncio.get_running_loop().call_soon(scope.cancel)  # once the check waits on the store
        await app.start()
    assert scope.cancelled_caught
    assert sqlite_threads() == before


async def test_a_function_that_is_not_a_context_manager_says_how_to_write_it() -> None:
    async def returns_a_dict(server: Server) -> dict[str, int]:
        return {"pool": 1}

    app = Server("misshapen", lifespan=returns_a_dict)  # type: ignore[arg-type]
    with pytest.raises(
        ConfigError,
        match=r"failed on entry: TypeError: lifespan= returned coroutine, not an async context manager: "
        r"decorate the function with @contextlib.asynccontextmanager and yield the value",
    ):
        await app.start()  # and the coroutine is closed: no "never awaited" warning (an error here)
    with pytest.raises(ConfigError, match=r"lifespan 42: expected None or a function taking the server"):
        Server("odd", lifespan=42)  # type: ignore[arg-type]


async def test_an_async_generator_is_taken_as_if_decorated() -> None:
    events: list[str] = []

    async def undecorated(server: Server) -> AsyncIterator[str]:
        events.append("enter")
        yield "value"
        events.append("exit")

    app = Server("generator", lifespan=undecorated)
    async with app.hold_lifespan() as value:
        assert value == app.lifespan_context == "value"
    assert events == ["enter", "exit"]


async def test_a_failure_on_exit_is_logged_and_the_stop_goes_on(caplog: pytest.LogCaptureFixture) -> None:
    @contextlib.asynccontextmanager
    async def breaks_on_exit(server: Server) -> AsyncIterator[None]:
        yield
        raise DatabaseDown("the pool would not close")

    app = Server("closing", lifespan=breaks_on_exit)
    await app.start()
    with caplog.at_level(logging.ERROR, logger="mcp_elicit.server"):
        await app.stop()
    (record,) = [r for r in caplog.records if r.levelno >= logging.ERROR]
    assert record.getMessage() == "the lifespan of server 'closing' failed on exit"
    assert record.exc_info is not None and isinstance(record.exc_info[1], DatabaseDown)
    with pytest.raises(RuntimeError, match="is not running"):
        app.lifespan_context  # noqa: B018


async def test_a_task_reads_it_and_is_cancelled_before_it_is_exited() -> None:
    events: list[str] = []
    app = pooled(events, state_keys=KeyRing([b"t" * 16 + b"k" * 16]))
    queried = asyncio.Event()

    @app.tool(task="optional")
    async def report(ctx: Context, table: str) -> str:
        await ctx.start_task(f"reporting on {table}")
        ctx.lifespan_context["pool"].query(table)  # after the request was answered
        queried.set()
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            events.append("task cancelled")
            raise
        return "never"

    await app.start()
    client = MemoryClient(app, capabilities=WITH_TASKS)
    created = await client.result("tools/call", {"name": "report", "arguments": {"table": "sales"}})
    assert created["resultType"] == "task"
    await settle(client, created["taskId"], "working")
    async with hang_guard("the task's query"):
        await queried.wait()
    await app.stop()
    assert events == ["enter pooled", "query sales", "task cancelled", "exit"]


async def test_a_stop_lets_go_only_of_what_a_start_held() -> None:
    # a stop with no start of its own (a second stop, or the HTTP app's stop after a start
    # cancelled before it held anything) must not release another holder's share
    events: list[str] = []
    app = pooled(events)
    async with connect_memory(app, answerer=Three()) as client:
        await app.stop()  # never started
        await client.call_tool("count_in_a_thread", {"table": "a"})
        await app.start()
        await app.stop()
        await app.stop()  # twice
        await client.call_tool("count_in_a_thread", {"table": "b"})
        assert events == ["enter pooled", "query a", "query b"]
    assert events[-1] == "exit"


async def test_a_start_cancelled_while_the_lifespan_opens_holds_nothing() -> None:
    opening, closed = asyncio.Event(), asyncio.Event()

    @contextlib.asynccontextmanager
    async def slow(server: Server) -> AsyncIterator[str]:
        try:
            opening.set()
            await asyncio.Event().wait()  # a pool that never connects
            yield "never"
        finally:
            closed.set()

    app = Server("slow", lifespan=slow)
    start = asyncio.ensure_future(app.start())
    async with hang_guard("the lifespan starting to open"):
        await opening.wait()
    start.cancel()
    with pytest.raises(asyncio.CancelledError):
        await start
    assert closed.is_set()  # what it was opening was told
    await app.stop()  # a stop after it has nothing to let go
    with pytest.raises(RuntimeError, match="is not running"):
        app.lifespan_context  # noqa: B018


async def test_a_cancel_while_a_failed_start_undoes_itself_is_raised(tmp_path: Path) -> None:
    # The lifespan fails on entry (a ConfigError to raise), and the start is cancelled while
    # it closes the store its check opened (the close waits behind a write another
    # connection's lock holds up): the cancellation was swallowed, the start raising the
    # ConfigError with the task's cancel request pending and never delivered.
    path = tmp_path / "state.db"
    locked = sqlite3.connect(path, isolation_level=None)
    writes: list[asyncio.Future[None]] = []

    @contextlib.asynccontextmanager
    async def lifespan(server: Server) -> AsyncIterator[None]:
        locked.execute("BEGIN EXCLUSIVE")  # the store's next write waits for it
        writes.append(asyncio.ensure_future(server.url_mode.store.put("x", "y", b"", ttl=60)))
        raise OSError("no pool")
        yield  # pragma: no cover

    app = Server("undoing", lifespan=lifespan, store=f"sqlite:///{path}")
    starting = asyncio.ensure_future(app.start())
    try:
        await eventually(lambda: writes and app.url_mode._store is None, "the start closing the store")
        assert not starting.done()
        starting.cancel()
        await asyncio.sleep(0)
    finally:
        locked.execute("COMMIT")
        locked.close()
    async with hang_guard("the start undone"):
        with pytest.raises(asyncio.CancelledError) as raised:
            await starting
    assert isinstance(raised.value.__context__, ConfigError), raised.value.__context__
    assert starting.cancelled()
    await asyncio.gather(*writes, return_exceptions=True)
