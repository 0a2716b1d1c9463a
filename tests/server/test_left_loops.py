"""A ``Server`` whose event loop ended while it was started, its stop never awaited (a test
that failed part way, an ``asyncio.run`` that ended, a loop closed with work pending),
starts on the next loop as it would the first time: the ``lifespan`` entered again, the
relay listening again, the stores it opened closed and opened again, and nothing said on
stderr of what the old loop left. A start while the first loop still runs, on another
thread, is refused with a message saying what to do (``server/left_loops.py``).

Each test runs its event loops itself (``asyncio.run``, a loop on a thread), as a module's
``app = Server(...)`` is served by one test's loop after another."""

from __future__ import annotations

import asyncio
import contextlib
import gc
import logging
import threading
import uuid
from collections.abc import AsyncIterator
from contextlib import AbstractAsyncContextManager
from pathlib import Path
from typing import Any

import pytest
import uvicorn

from mcp_elicit import Context, Form, Integer, Server
from mcp_elicit.client import ElicitAnswer, ElicitationRequest
from mcp_elicit.stores.base import Subscription
from mcp_elicit.stores.memory import MemoryStore
from mcp_elicit.transports.http_server import StreamableHTTP
from mcp_elicit.transports.memory import connect_memory

from support.memory import MemoryClient
from support.procs import free_port
from support.subscriptions import build as listened
from support.tasks import WITH_TASKS
from support.waiting import HANG_GUARD, eventually, hang_guard


class Pool:
    """What the lifespan opens, refusing use once it was closed."""

    def __init__(self, number: int) -> None:
        self.number = number
        self.open = True

    def query(self) -> str:
        assert self.open, f"pool {self.number} was used after it was closed"
        return f"pool {self.number}"


class Listened(MemoryStore):
    """A memory store noting the event loop each subscription is opened on."""

    def __init__(self) -> None:
        super().__init__()
        self.subscribed: list[tuple[str, asyncio.AbstractEventLoop]] = []

    def subscribe(self, channel: str) -> AbstractAsyncContextManager[Subscription]:
        self.subscribed.append((channel, asyncio.get_running_loop()))
        return super().subscribe(channel)


class Answers:
    """Accepts a form with value 3, and a URL step; says which modes it was asked in."""

    modes = frozenset({"form", "url"})

    def __init__(self) -> None:
        self.asked: list[str] = []

    async def elicit(self, request: ElicitationRequest) -> ElicitAnswer:
        self.asked.append(request.mode)
        return ElicitAnswer.accept(value=3) if request.mode == "form" else ElicitAnswer.accept()


def pooled(events: list[str], **options: Any) -> Server:
    @contextlib.asynccontextmanager
    async def lifespan(server: Server) -> AsyncIterator[Pool]:
        pool = Pool(events.count("enter") + 1)
        events.append("enter")
        try:
            yield pool
        finally:
            pool.open = False
            events.append("exit")

    app = Server("twice", lifespan=lifespan, **options)

    @app.tool
    async def book(ctx: Context) -> str:
        """Ask how many seats, then send the user to pay."""
        seats = await ctx.elicit("How many seats?", Form(value=Integer()))
        paid = await ctx.elicit_url("Pay for the seats", "https://pay.example/checkout")
        pool: Pool = ctx.lifespan_context
        return f"{pool.query()}: {seats.data['value'] if seats.data else '-'} seats, {paid.action}"

    return app


async def book(app: Server, answers: Answers) -> str:
    async with connect_memory(app, answerer=answers) as client:
        result = await client.call_tool("book", {})
    return str(result["content"][0]["text"])


def relay_loops(store: Listened, app: Server) -> list[asyncio.AbstractEventLoop]:
    return [loop for channel, loop in store.subscribed if channel == app.relay.channel]


def test_asyncio_run_twice_with_the_stop_skipped() -> None:
    events: list[str] = []
    store = Listened()
    app = pooled(events, store=store)
    answers = Answers()
    loops: list[asyncio.AbstractEventLoop] = []

    async def run() -> str:
        loops.append(asyncio.get_running_loop())
        await app.start()  # a transport of one's own, whose stop never comes
        await eventually(lambda: relay_loops(store, app)[-1:] == loops[-1:], "the relay listening here")
        return await book(app, answers)

    assert asyncio.run(run()) == "pool 1: 3 seats, accept"
    assert events == ["enter", "exit"]  # asyncio.run cancelled what it left: the lifespan's exit ran
    assert asyncio.run(run()) == "pool 2: 3 seats, accept"  # a pool of its own, open
    assert events == ["enter", "exit", "enter", "exit"]
    assert relay_loops(store, app) == loops  # the relay listened again, on the second loop
    assert answers.asked == ["form", "url", "form", "url"]


def test_the_stores_a_server_opened_are_closed_and_opened_again(tmp_path: Path) -> None:
    events: list[str] = []
    app = pooled(events, store=f"sqlite:///{tmp_path / 'state.db'}")
    opened = []

    async def run() -> str:
        await app.start()
        opened.append(app.url_mode.store)
        return await book(app, Answers())

    assert asyncio.run(run()) == "pool 1: 3 seats, accept"
    assert asyncio.run(run()) == "pool 2: 3 seats, accept"
    first, second = opened
    assert second is not first
    with pytest.raises(RuntimeError, match="closed"):
        asyncio.run(first.get("health", "start-up"))

    async def stop() -> None:
        await app.stop()

    asyncio.run(stop())  # a stop on a third loop: the second's start let go of, its store closed
    with pytest.raises(RuntimeError, match="closed"):
        asyncio.run(second.get("health", "start-up"))


def test_a_loop_closed_with_the_server_busy_is_let_go_of_quietly(caplog: pytest.LogCaptureFixture) -> None:
    # a loop closed with no asyncio.run to cancel what it left: the relay's tasks, the
    # lifespan's, and a task's handler still running, all pending on a closed loop
    events: list[str] = []
    app = pooled(events, store=Listened(), task_poll=0.02)
    ended: list[str] = []
    started = asyncio.Event()  # bound to the first loop when waited on

    @app.tool(task="required")
    async def slow(ctx: Context) -> str:
        """Runs until its loop is gone."""
        await ctx.start_task("working")
        try:
            started.set()
            await asyncio.Event().wait()
        finally:
            ended.append("handler")  # closed with its loop's tasks: what runs before an await
        return "never"

    async def first() -> str:
        await app.start()
        await MemoryClient(app, capabilities=WITH_TASKS).result("tools/call", {"name": "slow"})
        async with hang_guard("the task's handler running"):
            await started.wait()
        return app.tasks.running()[0].task_id

    loop = asyncio.new_event_loop()
    task_id = loop.run_until_complete(first())
    loop.close()  # its tasks still pending
    del loop
    caplog.set_level(logging.DEBUG, logger="asyncio")
    assert asyncio.run(book(app, Answers())) == "pool 2: 3 seats, accept"
    gc.collect()
    said = [r.getMessage() for r in caplog.records]
    assert not [line for line in said if "destroyed" in line or "Event loop is closed" in line], said
    # what the first loop's lifespan and handler did before their first await, when let go of
    assert events == ["enter", "exit", "enter", "exit"]
    assert ended == ["handler"]
    record = app.tasks.record(task_id)
    assert record is not None and record.status == "cancelled", record
    assert record.status_message == "The server is shutting down"


def test_a_start_while_the_first_loop_still_runs_says_what_to_do() -> None:
    events: list[str] = []
    app = pooled(events)
    other = asyncio.new_event_loop()
    thread = threading.Thread(target=other.run_forever, daemon=True)
    thread.start()
    try:
        asyncio.run_coroutine_threadsafe(app.start(), other).result(timeout=60)

        async def here() -> str:
            return await book(app, Answers())

        with pytest.raises(
            RuntimeError,
            match=r"server 'twice' is already started on another event loop, which still runs: a Server "
            r"serves on one event loop at a time .* Stop it there first .* or give each event loop a "
            r"Server of its own",
        ):
            asyncio.run(here())
        asyncio.run_coroutine_threadsafe(app.stop(), other).result(timeout=60)
        assert events == ["enter", "exit"]  # the running one was left alone until its stop
        assert asyncio.run(here()) == "pool 2: 3 seats, accept"  # stopped there: starts here
    finally:
        other.call_soon_threadsafe(other.stop)
        thread.join(timeout=60)
        other.close()


def test_a_loop_closed_while_a_client_listens_is_let_go_of_quietly(caplog: pytest.LogCaptureFixture) -> None:
    # the listen request waits in an asyncio.Queue's get, whose clean-up cancels the future
    # it waits on: on the closed loop that raised "Event loop is closed" into the request,
    # which the dispatcher logged as the request's failure once the next start let go of it
    app = listened()
    kept: list[object] = []

    async def first() -> None:
        connected = connect_memory(app)  # its block never left, as in a test that failed
        client = await connected.__aenter__()
        listening = client.listen(resource_uris=["file:///notes.txt"])
        changes = await listening.__aenter__()
        kept.extend((connected, listening))
        assert app.notify_resource_updated("file:///notes.txt") == 1
        assert (await changes.__anext__())[0] == "notifications/resources/updated"

    loop = asyncio.new_event_loop()
    loop.run_until_complete(first())
    loop.close()  # the listen request still pending on it
    del loop
    caplog.set_level(logging.DEBUG)

    async def second() -> list[str]:
        async with connect_memory(app) as client:
            return [r["uri"] for r in await client.list_resources()]

    assert asyncio.run(second()) == ["file:///notes.txt"]
    kept.clear()
    gc.collect()
    said = [f"{r.getMessage()} {r.exc_text or ''}" for r in caplog.records if r.levelno >= logging.WARNING]
    assert not said, said


def test_a_loop_closed_with_the_relay_on_redis_is_let_go_of_quietly(
    redis_url: str, capfd: pytest.CaptureFixture[str], caplog: pytest.LogCaptureFixture
) -> None:
    # Servers sharing a Redis, their relays subscribed, a client listening; the loop
    # closed with no cancelling. The next start let go of the relay's task, whose
    # subscription block then closed its PubSub through the closed loop: that failed
    # ("Future exception was never retrieved ... Event loop is closed") and left its
    # connection open, where the store's close no longer found it (ResourceWarning).
    # Now it is shut down, nothing is said, and the relay hears again.
    store = f"{redis_url}?prefix=test-{uuid.uuid4().hex[:12]}"
    servers = [listened(), listened()]
    for server in servers:
        server.configure_url_mode(store=store)
    kept: list[object] = []

    async def run() -> str:
        for server in servers:
            await server.start()
            assert server.relay.listening is not None
            await asyncio.wait_for(server.relay.listening.wait(), HANG_GUARD)
        connected = connect_memory(servers[-1])
        client = await connected.__aenter__()  # its block never left, as in a test that failed
        listening = client.listen(resource_uris=["file:///notes.txt"])
        changes = await listening.__aenter__()
        kept.extend((connected, listening))
        servers[0].notify_resource_updated("file:///notes.txt")
        async with hang_guard("the update heard through Redis"):  # its PUBLISH done: none under way
            method, _ = await changes.__anext__()
        return method

    loop = asyncio.new_event_loop()
    assert loop.run_until_complete(run()) == "notifications/resources/updated"
    loop.close()
    del loop
    caplog.set_level(logging.DEBUG, logger="asyncio")
    assert asyncio.run(run()) == "notifications/resources/updated"
    kept.clear()

    async def stop() -> None:
        for server in servers:
            await server.stop()

    asyncio.run(stop())
    gc.collect()  # a connection left open: ResourceWarning, an error here
    said = [f"{r.getMessage()} {r.exc_text or ''}" for r in caplog.records if r.levelno >= logging.WARNING]
    assert not [line for line in said if "no state key is configured" not in line], said
    assert not noise(capfd.readouterr().err)


def noise(err: str) -> list[str]:
    return [line for line in err.splitlines() if "destroyed" in line or "never" in line or "closed" in line]


@pytest.mark.parametrize("lifespan", ["auto", "on"])
def test_an_http_app_on_a_second_loop_fails_its_start_up_while_the_first_runs(
    lifespan: str, capsys: pytest.CaptureFixture[str]
) -> None:
    # The refusal was raised out of the app's lifespan: uvicorn's default lifespan="auto"
    # took that for an app without lifespan support and served on, requests on this loop
    # using what the server holds on the other (the silent sharing the refusal is for).
    events: list[str] = []
    app = pooled(events)
    other = asyncio.new_event_loop()
    thread = threading.Thread(target=other.run_forever, daemon=True)
    thread.start()
    try:
        asyncio.run_coroutine_threadsafe(app.start(), other).result(timeout=HANG_GUARD)

        async def serve() -> None:
            config = uvicorn.Config(
                StreamableHTTP(app), host="127.0.0.1", port=free_port(), lifespan=lifespan, log_level="error"
            )
            with pytest.raises(SystemExit):
                async with hang_guard("uvicorn refusing to start", 10.0):
                    await uvicorn.Server(config).serve()  # exits when the start-up fails

        asyncio.run(serve())
        assert (
            "server 'twice' is already started on another event loop, which still runs"
            in capsys.readouterr().err
        )
        asyncio.run_coroutine_threadsafe(app.stop(), other).result(timeout=HANG_GUARD)
        assert events == ["enter", "exit"]  # the running one was left alone until its stop
    finally:
        other.call_soon_threadsafe(other.stop)
        thread.join(timeout=HANG_GUARD)
        other.close()
