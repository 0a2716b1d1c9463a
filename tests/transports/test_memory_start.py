"""An in-memory client (``connect_memory``) is a transport's start for as long as it is
connected: on a server also served over HTTP, the HTTP app's stop is not the last while
the memory client is there, so the tasks it follows, the relay and the URL-mode store
stay; its own close, when nothing else holds the server, releases them. Real apps'
lifespans (``StreamableHTTP.lifespan``), no sockets needed for what is tested here."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator

import pytest

from mcp_elicit import Context, Server, StaticTokens
from mcp_elicit.stores.memory import MemoryStore
from mcp_elicit.transports.http_server import StreamableHTTP
from mcp_elicit.transports.memory import connect_memory

from support.waiting import eventually, hang_guard

pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def build(events: list[str]) -> Server:
    """A server on a ``memory://`` store whose ``wait`` task runs until released."""

    @contextlib.asynccontextmanager
    async def lifespan(server: Server) -> AsyncIterator[str]:
        events.append("enter")
        yield "pool"
        events.append("exit")

    app = Server("shared", store="memory://", lifespan=lifespan, task_poll=0.02)
    release = asyncio.Event()
    app.release = release  # type: ignore[attr-defined]

    @app.tool(task="required")
    async def wait(ctx: Context) -> str:
        """Runs as a task until the test releases it."""
        await ctx.start_task("waiting")
        await release.wait()
        return f"released {ctx.lifespan_context}"

    return app


@pytest.mark.parametrize("first", ["http", "memory"])
async def test_the_http_apps_stop_leaves_the_memory_clients_task_relay_and_store(first: str) -> None:
    events: list[str] = []
    app = build(events)
    http = StreamableHTTP(app)
    async with contextlib.AsyncExitStack() as serving:
        if first == "http":
            stopping = await serving.enter_async_context(contextlib.AsyncExitStack())
            await stopping.enter_async_context(http.lifespan())
        client = await serving.enter_async_context(connect_memory(app, versions=["2026-07-28"], tasks=True))
        if first == "memory":
            stopping = await serving.enter_async_context(contextlib.AsyncExitStack())
            await stopping.enter_async_context(http.lifespan())
        call = asyncio.ensure_future(client.call_tool("wait"))
        await eventually(lambda: len(app.tasks), "the task")
        store = app.url_mode.store
        await stopping.aclose()  # the HTTP app stops; the memory client still uses the server
        assert app.relay.listening is not None, "the relay still listens"
        assert app.url_mode.store is store, "the memory:// store is the one the task began with"
        assert app.url_mode.serving
        app.release.set()  # type: ignore[attr-defined]
        async with hang_guard("the memory client's task"):
            out = await call
        assert out["content"][0]["text"] == "released pool"
        assert events == ["enter"]
    # the memory client closed: the last start let go of
    assert events == ["enter", "exit"]
    assert app.relay.listening is None and not app.url_mode.serving


async def test_a_memory_client_alone_releases_what_it_started_when_it_closes() -> None:
    events: list[str] = []
    app = build(events)
    async with connect_memory(app, versions=["2026-07-28"], tasks=True) as client:
        assert app.relay.listening is not None, "the relay listens as for any transport"
        call = asyncio.ensure_future(client.call_tool("wait"))
        await eventually(lambda: len(app.tasks), "the task")
        (running,) = app.tasks._tasks.values()
        call.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await call
    assert events == ["enter", "exit"]
    assert app.relay.listening is None and not app.url_mode.serving
    assert running.record.terminal, "the last stop ended the task"


async def test_a_stop_naming_no_transport_leaves_a_memory_clients_listener() -> None:
    """A transport of one's own that names none (``start()``, ``stop()``) stops: the
    memory client's ``subscriptions/listen`` is the memory client's, not that one's."""
    app = Server("listened", store=MemoryStore())

    @app.tool()
    def hello() -> str:
        return "hello"

    async with (
        connect_memory(app, versions=["2026-07-28"]) as client,
        client.listen(tools=True) as changes,
    ):
        await eventually(lambda: len(app.subscriptions) == 1, "the memory client listening")
        await app.start()
        await app.stop()
        assert len(app.subscriptions) == 1, "the memory client's listener goes on"

        @app.tool()
        def added() -> str:
            """Added once the other transport stopped."""
            return "added"

        async with hang_guard("the memory client's listener told of the change"):
            method, _ = await anext(aiter(changes))
        assert method == "notifications/tools/list_changed"


async def test_a_memory_client_of_a_serving_server_does_not_warn_again(
    caplog: pytest.LogCaptureFixture,
) -> None:
    app = Server("warned", store=MemoryStore(), auth=StaticTokens({"t": "ann"}))  # no page_auth

    @app.tool()
    def hello() -> str:
        return "hello"

    http = StreamableHTTP(app)
    caplog.set_level(logging.WARNING, logger="mcp_elicit")
    async with http.lifespan():
        for _ in range(3):
            async with connect_memory(app, versions=["2026-07-28"]) as client:
                await client.list_tools()
    warned = [r for r in caplog.records if "page_auth" in r.getMessage()]
    assert len(warned) == 1, "said once, when the server started"
