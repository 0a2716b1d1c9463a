"""Where a ``Server``'s start and stop meet something other than one transport starting
once and stopping once: a subclass overriding ``start``/``stop``, or ``open_session``,
written before the ``transport`` keyword existed (served over HTTP, stdio and in memory,
each transport still counted as its own, its sessions still its own), a server started again after ``begin_shutdown`` (its 2026-07-28 retries wait
for the page again), a start while the last stop is still releasing (it gets the relay
back), and one transport object started twice (its first stop keeps its sessions)."""

from __future__ import annotations

import asyncio
import contextlib

import pytest
from transports.test_two_transports import Three, opened, opened_by

from mcp_elicit import Context, Principal, Server
from mcp_elicit.errors import TransportError
from mcp_elicit.server.sessions import Session
from mcp_elicit.stores.memory import MemoryStore
from mcp_elicit.transports.http_client import connect_http
from mcp_elicit.transports.http_server import StreamableHTTP
from mcp_elicit.transports.memory import connect_memory
from mcp_elicit.wire import jsonrpc

from support.memory import MemoryClient
from support.procs import uvicorn_server
from support.stdio_pipes import stdio_session
from support.tasks import WITH_TASKS
from support.waiting import hang_guard

pytestmark = pytest.mark.anyio
TIMEOUT = 30.0


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


class OldStyle(Server):
    """Overrides ``start`` and ``stop`` as a subclass did before they took ``transport``."""

    def __init__(self) -> None:
        super().__init__("old", store=MemoryStore())
        self.calls: list[str] = []

        @self.tool()
        def hello() -> str:
            return "hello"

    async def start(self) -> None:  # type: ignore[override]
        self.calls.append("start")
        await super().start()

    async def stop(self) -> None:  # type: ignore[override]
        self.calls.append("stop")
        await super().stop()


async def test_an_override_without_the_keyword_serves_each_transport_as_its_own() -> None:
    app = OldStyle()
    first, second = StreamableHTTP(app), StreamableHTTP(app)
    async with (
        uvicorn_server(second, lifespan="on") as on_second,
        connect_http(on_second.url, answerer=Three(), versions=("2025-11-25",), timeout=TIMEOUT) as stays,
    ):
        kept = opened(app, [])
        async with uvicorn_server(first, lifespan="on") as on_first:
            async with connect_http(on_first.url, versions=("2025-11-25",), timeout=TIMEOUT) as goes:
                ended = opened(app, [kept])
                assert (await goes.call_tool("hello"))["content"][0]["text"] == "hello"
        assert ended.closed and not kept.closed, "the first app's stop ended its own session only"
        async with stdio_session(app):
            on_stdio = opened(app, [kept])
        assert on_stdio.closed and not kept.closed, "stdio's stop, its own only"
        assert app.calls == ["start", "start", "stop", "start", "stop"]
        assert (await stays.call_tool("hello"))["content"][0]["text"] == "hello"
    assert app.calls[-1] == "stop" and kept.closed
    assert not app.sessions.live()


class OldSessions(Server):
    """Overrides ``open_session`` as a subclass did before it took ``transport``."""

    def __init__(self) -> None:
        super().__init__("old-sessions", store=MemoryStore())
        self.opened: list[Session] = []

        @self.tool()
        def hello() -> str:
            return "hello"

    def open_session(  # type: ignore[override]
        self, message: jsonrpc.Request, principal: Principal | None = None
    ) -> tuple[bytes, Session | None, int]:
        payload, session, status = super().open_session(message, principal)
        if session is not None:
            self.opened.append(session)
        return payload, session, status


async def test_an_open_session_override_without_the_keyword_keeps_each_transports_sessions_its_own() -> None:
    app = OldSessions()
    http = StreamableHTTP(app)
    async with (
        uvicorn_server(http, lifespan="on") as on_http,
        connect_http(on_http.url, versions=("2025-11-25",), timeout=TIMEOUT) as over_http,
    ):
        kept = opened(app, [])
        assert kept.transport is http
        async with connect_memory(app, versions=["2025-11-25"]) as in_memory:
            in_memory_session = opened(app, [kept])
            assert (await in_memory.call_tool("hello"))["content"][0]["text"] == "hello"
        assert in_memory_session.closed and not kept.closed, "the memory client's close, its own only"
        async with stdio_session(app):
            on_stdio = opened(app, [kept])
        assert on_stdio.closed and not kept.closed, "stdio's stop, its own only"
        assert (await over_http.call_tool("hello"))["content"][0]["text"] == "hello"
    assert app.opened == [kept, in_memory_session, on_stdio]
    assert kept.closed and not app.sessions.live()


async def test_a_restart_after_begin_shutdown_waits_for_the_page_again() -> None:
    app = Server("again", store="memory://")
    http = StreamableHTTP(app)
    async with http.lifespan():
        http.begin_shutdown()  # as serve does when told to stop
    again = StreamableHTTP(app)  # the same server served again in this process

    async def said(what: str) -> str:
        return what

    async with again.lifespan():
        out = await app.url_mode.unless_stopping(lambda: said("waited"), lambda: said("looked"))
    assert out == "waited", "a retry's round waits for the page, not ends at once"


async def test_a_start_while_the_last_stop_releases_gets_the_relay_back() -> None:
    app = Server("relay", store=MemoryStore())
    running, cancelled, release = asyncio.Event(), asyncio.Event(), asyncio.Event()

    @app.tool(task="required")
    async def slow(ctx: Context) -> str:
        """Its cancellation takes until the test releases it."""
        await ctx.start_task("working")
        running.set()
        try:
            await asyncio.Event().wait()
        finally:
            cancelled.set()
            await release.wait()
        return "never"

    first, second = object(), object()
    await app.start(transport=first)
    client = MemoryClient(app, capabilities=WITH_TASKS)
    await client.result("tools/call", {"name": "slow"})
    async with hang_guard("the task running"):
        await running.wait()
    stopping = asyncio.ensure_future(app.stop(transport=first))  # the last: it cancels the task
    async with hang_guard("the stop cancelling the task"):
        await cancelled.wait()
    starting = asyncio.ensure_future(app.start(transport=second))
    await asyncio.sleep(0)  # let the start run as far as it can before the release ends
    release.set()
    async with hang_guard("the stop and the start"):
        await stopping
        await starting
    try:
        assert app.relay.listening is not None, "the second start's relay listens"
        assert app.url_mode.serving
    finally:
        await app.stop(transport=second)
    assert app.relay.listening is None


async def test_a_transport_started_twice_keeps_its_sessions_until_its_last_stop() -> None:
    app = Server("twice", store=MemoryStore())
    transport = object()
    await app.start(transport=transport)
    await app.start(transport=transport)  # one app whose lifespan two parents run
    session = opened_by(app, transport)
    await app.stop(transport=transport)
    assert not session.closed, "it still holds a start: its sessions go on"
    await app.stop(transport=transport)
    assert session.closed


@pytest.mark.parametrize("then", ["begins", "stops"])
async def test_once_every_transport_began_stopping_retries_stop_waiting_and_tasks_end(then: str) -> None:
    """Two apps stopping together (a stop signal to a process serving both): the first's
    ``begin_shutdown`` finds the second holding a start, and ends its own sessions only;
    when the second begins stopping too, or stops without beginning (stdio's end of
    input), no transport will serve any more, so what ``begin_shutdown`` does when alone
    is done then: the retries waiting for a page end their round, the tasks are cancelled."""
    app = Server("both", store=MemoryStore())
    running, cancelled = asyncio.Event(), asyncio.Event()

    @app.tool(task="required")
    async def slow(ctx: Context) -> str:
        """Runs as a task until cancelled."""
        await ctx.start_task("working")
        running.set()
        try:
            await asyncio.Event().wait()
        finally:
            cancelled.set()
        return "never"

    async def wait_for_the_page() -> str:
        await asyncio.Event().wait()
        return "waited"

    async def look() -> str:
        return "looked"

    first, second = StreamableHTTP(app), StreamableHTTP(app)
    async with first.lifespan():
        async with contextlib.AsyncExitStack() as serving:
            await serving.enter_async_context(second.lifespan())
            await MemoryClient(app, capabilities=WITH_TASKS).result("tools/call", {"name": "slow"})
            async with hang_guard("the task running"):
                await running.wait()
            waiting = asyncio.ensure_future(app.url_mode.unless_stopping(wait_for_the_page, look))
            first.begin_shutdown()  # the second holds a start: the first's own only
            if then == "begins":
                second.begin_shutdown()
            else:
                await serving.aclose()
            async with hang_guard("the round's wait ended by the shutdown"):
                assert await waiting == "looked"
            async with hang_guard("the task cancelled by the shutdown"):
                await cancelled.wait()


async def test_an_app_served_again_after_its_shutdown_answers_again() -> None:
    """The same ``StreamableHTTP`` object served once more in this process (a server
    restarted in place): its earlier ``begin_shutdown`` refuses nothing now."""
    app = OldStyle()
    http = StreamableHTTP(app)
    for _ in range(2):
        async with (
            uvicorn_server(http, lifespan="on") as running,
            connect_http(running.url, versions=("2026-07-28",), timeout=TIMEOUT) as client,
        ):
            assert (await client.call_tool("hello"))["content"][0]["text"] == "hello"
            http.begin_shutdown()  # as serve does when told to stop


async def test_a_client_connecting_to_an_app_shutting_down_is_told_to_try_again() -> None:
    """Not that the server speaks an earlier revision: it is stopping."""
    http = StreamableHTTP(OldStyle())
    async with uvicorn_server(http, lifespan="on") as running:
        http.begin_shutdown()
        with pytest.raises(TransportError, match=r"HTTP 503 .*try again later.*shutting down"):
            async with connect_http(running.url, versions=("2026-07-28",), timeout=TIMEOUT):
                pass
