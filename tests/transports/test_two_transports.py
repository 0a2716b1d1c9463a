"""One ``Server`` served by two transports at once (two ``StreamableHTTP`` apps under uvicorn
on 127.0.0.1, stdio over real pipes in this process): each is a user of its own. One
stopping ends its own 2025-11-25 sessions and subscriptions only; the other's session
goes on, questions included, its subscription too, and a ``memory://`` URL-mode
completion still reaches the round waiting on it; the store and the ``lifespan`` are
closed by the last stop alone. A second stop, or one after a start that failed, lets go
of nothing the other holds."""

from __future__ import annotations

import asyncio
import contextlib
import threading
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from mcp_elicit import Context, Form, Integer, Server
from mcp_elicit.client import ElicitAnswer, ElicitationRequest
from mcp_elicit.errors import ConfigError
from mcp_elicit.server.sessions import Session
from mcp_elicit.stores.memory import MemoryStore
from mcp_elicit.transports.http_client import connect_http
from mcp_elicit.transports.http_server import StreamableHTTP

from support.procs import uvicorn_server
from support.stdio_pipes import stdio_session
from support.waiting import eventually, hang_guard

pytestmark = pytest.mark.anyio
TIMEOUT = 30.0
PAGE = "https://pay.example/order/1"


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


class Three:
    """Answers every form with 3."""

    modes = frozenset({"form"})

    async def elicit(self, request: ElicitationRequest) -> ElicitAnswer:
        return ElicitAnswer.accept(value=3)


class Consenting:
    """Consents to each page (the person pays elsewhere; the test completes the step)."""

    modes = frozenset({"url"})

    def __init__(self) -> None:
        self.asked = asyncio.Event()

    async def elicit(self, request: ElicitationRequest) -> ElicitAnswer:
        assert request.url == PAGE
        self.asked.set()
        return ElicitAnswer("accept")

    async def url_done(self, request: ElicitationRequest) -> None:
        await asyncio.Event().wait()  # 2026-07-28 never asks


def build(store: str | MemoryStore, events: list[str]) -> tuple[Server, set[str]]:
    """A server whose ``ask`` asks a number, whose ``pay`` waits for its own payment page
    (``ctx.require_url``), and whose ``lifespan`` says when it is entered and exited."""

    @contextlib.asynccontextmanager
    async def lifespan(server: Server) -> AsyncIterator[str]:
        events.append("enter")
        yield "pool"
        events.append("exit")

    app = Server("two", store=store, lifespan=lifespan, flow_wait=0.2)
    paid: set[str] = set()

    @app.tool()
    async def ask(ctx: Context) -> str:
        answer = await ctx.elicit("A number?", Form(value=Integer()))
        return f"{answer.action} {answer.data['value']} {ctx.lifespan_context}"

    @app.tool()
    async def pay(ctx: Context, order: str) -> str:
        if order not in paid:
            answer = await ctx.require_url("Pay for your order", PAGE, elicitation_id=f"pay-{order}")
            if answer.action != "accept":
                return f"order {order}: not paid ({answer.action})"
        return f"order {order}: paid" if order in paid else f"order {order}: not paid yet"

    return app, paid


def sqlite_threads() -> int:
    return sum(t.name.startswith("mcp-elicit-sqlite") for t in threading.enumerate())


def opened(app: Server, before: list[Session]) -> Session:
    """The one session opened since ``before`` was taken."""
    (new,) = [s for s in app.sessions.live() if s not in before]
    return new


async def test_the_other_apps_session_goes_on_and_the_last_stop_closes_the_store(tmp_path: Path) -> None:
    events: list[str] = []
    threads = sqlite_threads()
    app, _ = build(f"sqlite://{tmp_path}/state.db", events)
    first, second = StreamableHTTP(app), StreamableHTTP(app)
    async with (
        uvicorn_server(second, lifespan="on") as on_second,
        connect_http(on_second.url, answerer=Three(), versions=("2025-11-25",), timeout=TIMEOUT) as stays,
    ):
        kept = opened(app, [])
        async with contextlib.AsyncExitStack() as clients:
            async with uvicorn_server(first, lifespan="on") as on_first:
                assert events == ["enter"], "one entry for both apps"
                goes = await clients.enter_async_context(
                    connect_http(on_first.url, answerer=Three(), versions=("2025-11-25",), timeout=TIMEOUT)
                )
                ended = opened(app, [kept])
                assert (await goes.call_tool("ask"))["content"][0]["text"] == "accept 3 pool"
                first.begin_shutdown()  # as serve does, before uvicorn's graceful shutdown
                assert ended.closed and not kept.closed, "the first app's session only"
            # the first app is stopped (its lifespan shutdown came): the second serves on
            assert ended.closed and not kept.closed
            assert app.sessions.live() == [kept]
            assert events == ["enter"], "the lifespan is still held by the second app"
            assert sqlite_threads() == threads + 1, "the store is still open"
            out = await asyncio.wait_for(stays.call_tool("ask"), TIMEOUT)
            assert out["content"][0]["text"] == "accept 3 pool", "a question asked in the same session"
            assert app.sessions.live() == [kept]
            with pytest.raises(ConfigError, match="already in use"):
                app.configure_url_mode(store="memory://")  # the second app's relay uses this one
    assert events == ["enter", "exit"]
    assert sqlite_threads() == threads, "the last stop closed the store"
    assert not app.sessions.live()
    app.configure_url_mode(store="memory://")  # nothing serves: it may be replaced now


async def test_a_memory_completion_after_one_stop_reaches_the_waiting_round() -> None:
    events: list[str] = []
    app, paid = build("memory://", events)
    first, second = StreamableHTTP(app), StreamableHTTP(app)
    person = Consenting()
    async with (
        uvicorn_server(second, lifespan="on") as on_second,
        connect_http(on_second.url, answerer=person, versions=("2026-07-28",), timeout=TIMEOUT) as client,
    ):
        async with uvicorn_server(first, lifespan="on"):
            call = asyncio.ensure_future(client.call_tool("pay", {"order": "1"}))
            async with hang_guard("the page asked for"):
                await person.asked.wait()
        assert events == ["enter"]  # the first app stopped; the call's retry waits on the second
        paid.add("1")
        app.complete_elicitation("pay-1")  # the page's backend: into the store the round reads
        out = await asyncio.wait_for(call, TIMEOUT)
        assert out["content"][0]["text"] == "order 1: paid"
    assert events == ["enter", "exit"]


async def test_http_serves_on_after_stdio_stops_its_listener_included() -> None:
    events: list[str] = []
    app, _ = build(MemoryStore(), events)
    http_app = StreamableHTTP(app)
    async with (
        uvicorn_server(http_app, lifespan="on") as on_http,
        connect_http(on_http.url, versions=("2026-07-28",), timeout=TIMEOUT) as modern,
        connect_http(on_http.url, answerer=Three(), versions=("2025-11-25",), timeout=TIMEOUT) as old,
        modern.listen(tools=True) as changes,
    ):
        kept = opened(app, [])
        async with stdio_session(app):
            on_stdio = opened(app, [kept])
            await eventually(lambda: len(app.subscriptions) == 1, "the HTTP listener listening")
        # stdin closed: the stdio transport stopped
        assert on_stdio.closed and not kept.closed
        assert len(app.subscriptions) == 1, "the HTTP listener goes on"
        assert events == ["enter"]
        out = await asyncio.wait_for(old.call_tool("ask"), TIMEOUT)
        assert out["content"][0]["text"] == "accept 3 pool"

        @app.tool()
        def added() -> str:
            """Added once stdio stopped."""
            return "added"

        async with hang_guard("the HTTP listener told of the change"):
            method, _ = await anext(aiter(changes))
        assert method == "notifications/tools/list_changed"
    assert events == ["enter", "exit"]


async def test_an_apps_shutdown_ends_its_own_listener_the_others_goes_on() -> None:
    events: list[str] = []
    app, _ = build(MemoryStore(), events)
    first, second = StreamableHTTP(app), StreamableHTTP(app)
    async with (
        uvicorn_server(second, lifespan="on") as on_second,
        connect_http(on_second.url, versions=("2026-07-28",), timeout=TIMEOUT) as stays,
        stays.listen(tools=True) as kept,
    ):
        async with (
            uvicorn_server(first, lifespan="on") as on_first,
            connect_http(on_first.url, versions=("2026-07-28",), timeout=TIMEOUT) as goes,
            goes.listen(tools=True) as ended,
        ):
            await eventually(lambda: len(app.subscriptions) == 2, "both listeners listening")
            first.begin_shutdown()
            async with hang_guard("the first app's listener answered"):
                assert [change async for change in ended] == []
            assert len(app.subscriptions) == 1, "the second app's listener goes on"
        assert events == ["enter"]

        @app.tool()
        def added() -> str:
            """Added once the first app stopped."""
            return "added"

        async with hang_guard("the second app's listener told of the change"):
            method, _ = await anext(aiter(kept))
        assert method == "notifications/tools/list_changed"


class Failing(MemoryStore):
    """A store whose writes fail once ``fail`` is set (a Redis gone read-only)."""

    def __init__(self) -> None:
        super().__init__()
        self.fail = False

    async def put(self, namespace: str, key: str, value: bytes, *, ttl: float | None = None) -> None:
        if self.fail:
            raise OSError("read-only")
        await super().put(namespace, key, value, ttl=ttl)


async def test_a_second_stop_and_a_failed_start_let_go_of_nothing_the_other_holds() -> None:
    events: list[str] = []
    store = Failing()
    app, _ = build(store, events)
    serving, stopping, failing = object(), object(), object()
    await app.start(transport=serving)
    await app.start(transport=stopping)
    try:
        kept = opened_by(app, serving)
        await app.stop(transport=stopping)
        await app.stop(transport=stopping)  # twice: it holds nothing now
        store.fail = True
        with pytest.raises(ConfigError, match="read-only"):
            await app.start(transport=failing)
        await app.stop(transport=failing)  # after its start failed: it holds nothing
        store.fail = False
        assert events == ["enter"] and app.lifespan_context == "pool"
        assert not kept.closed and app.relay.listening is not None, "the serving transport's, untouched"
    finally:
        await app.stop(transport=serving)
    assert events == ["enter", "exit"] and kept.closed and app.relay.listening is None
    await app.stop(transport=serving)  # once more: nothing held, nothing to let go
    assert events == ["enter", "exit"]


def opened_by(app: Server, transport: object) -> Session:
    """A 2025-11-25 session ``transport`` opens, as a transport does at ``initialize``."""
    from mcp_elicit.wire import jsonrpc

    from support.sessions import initialize_body

    init = initialize_body()
    request = jsonrpc.Request(init["id"], init["method"], init["params"])
    _, session, status = app.open_session(request, transport=transport)
    assert status == 200 and session is not None
    return session
