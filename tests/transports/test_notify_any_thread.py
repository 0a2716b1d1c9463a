"""What tells clients, called from a thread that is neither the server's event loop nor a
handler's worker (a sync webhook, a ``threading.Timer``) while the server serves under
uvicorn: ``notify_resource_updated`` and a tool registered at run time reach a 2025-11-25
session's stream, done on the server's loop. Before, they woke the session's asyncio
event from the calling thread: asyncio's debug mode (on here) refused that ("Non-thread-
safe operation"), and without it the stream was woken only by the loop's next event.

And ``complete_elicitation`` handed to the server's loop: what it raises there is logged
naming the step, and a loop closed before doing it is said, not lost in silence."""

from __future__ import annotations

import asyncio
import logging
import threading
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import Any, TypeVar

import httpx
import pytest
from starlette.applications import Starlette
from starlette.routing import Mount

from mcp_elicit import Server
from mcp_elicit.transports.http_server import StreamableHTTP

from support.http_sessions import Session, _events
from support.procs import uvicorn_server
from support.waiting import HANG_GUARD, hang_guard
from support.wire import WireChecker

pytestmark = pytest.mark.anyio
T = TypeVar("T")
ROUNDS = 3  # each a notification the stream waits for


def board() -> Server:
    app = Server("board")

    @app.resource("test://board")
    def read() -> str:
        return "board"

    @app.tool()
    def look() -> str:
        return "board"

    return app


@asynccontextmanager
async def served(app: Server) -> AsyncIterator[str]:
    mcp = StreamableHTTP(app)
    asgi = Starlette(routes=[Mount("/", app=mcp)], lifespan=mcp.lifespan)
    loop = asyncio.get_running_loop()
    debug = loop.get_debug()
    loop.set_debug(True)  # a loop's object touched from another thread raises
    try:
        async with uvicorn_server(asgi, lifespan="on") as running:
            yield running.url
    finally:
        loop.set_debug(debug)


async def in_thread(call: Callable[[], T]) -> T:
    """``call()`` on a thread of its own, with no event loop (as a sync webhook's)."""
    done: list[T] = []
    failed: list[BaseException] = []

    def run() -> None:
        try:
            done.append(call())
        except BaseException as exc:  # said by the test, not lost in the thread
            failed.append(exc)

    thread = threading.Thread(target=run, name="webhook", daemon=True)
    thread.start()
    await asyncio.to_thread(thread.join, HANG_GUARD)
    assert not failed, failed
    return done[0]


async def test_a_resource_update_from_another_thread_reaches_the_session(wire_2025: WireChecker) -> None:
    app = board()
    async with served(app) as url, httpx.AsyncClient(timeout=30) as http:
        session = Session(http, url, wire_2025)
        await session.open()
        body = {"jsonrpc": "2.0", "id": 2, "method": "resources/subscribe", "params": {"uri": "test://board"}}
        wire_2025.request(body)
        subscribed = await session.post(body)
        wire_2025.response("resources/subscribe", subscribed.json())
        async with http.stream("GET", url, headers=session.headers()) as stream:
            assert stream.status_code == 200
            events = _events(stream)
            for _ in range(ROUNDS):
                assert await in_thread(lambda: app.notify_resource_updated("test://board")) == 1
                async with hang_guard("notifications/resources/updated on the session's stream"):
                    told = await anext(events)
                wire_2025.notification(told)
                assert told["method"] == "notifications/resources/updated", told


async def test_a_tool_registered_from_another_thread_is_said_to_the_session(wire_2025: WireChecker) -> None:
    app = board()
    async with served(app) as url, httpx.AsyncClient(timeout=30) as http:
        session = Session(http, url, wire_2025)
        await session.open()
        async with http.stream("GET", url, headers=session.headers()) as stream:
            assert stream.status_code == 200
            events = _events(stream)
            for n in range(ROUNDS):

                def register(n: int = n) -> None:
                    app.tool(f"late_{n}")(lambda: "late")

                await in_thread(register)
                async with hang_guard("notifications/tools/list_changed on the session's stream"):
                    told = await anext(events)
                wire_2025.notification(told)
                assert told["method"] == "notifications/tools/list_changed", told
        assert f"late_{ROUNDS - 1}" in app.names("tools")


class LoopThread:
    """A server started on an event loop running on a thread of its own."""

    def __init__(self, app: Server) -> None:
        self.app = app
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, name="server loop", daemon=True)

    def __enter__(self) -> LoopThread:
        self.thread.start()
        asyncio.run_coroutine_threadsafe(self.app.start(), self.loop).result(HANG_GUARD)
        return self

    def __exit__(self, *exc: object) -> None:
        if self.loop.is_running():
            self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(HANG_GUARD)
        self.loop.close()

    def hold(self) -> threading.Event:
        """Hold the loop (it runs, busy) until the event returned is set; then it stops."""
        held, go = threading.Event(), threading.Event()

        def busy() -> None:
            held.set()
            assert go.wait(HANG_GUARD)
            self.loop.stop()  # what was handed to it meanwhile is left in its queue

        self.loop.call_soon_threadsafe(busy)
        assert held.wait(HANG_GUARD)
        return go


def said(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [
        r.getMessage()
        for r in caplog.records
        if r.name.startswith("mcp_elicit") and r.levelno >= logging.WARNING and "pay-1" in r.getMessage()
    ]


def test_a_completion_handed_to_a_loop_that_closes_first_is_said(caplog: pytest.LogCaptureFixture) -> None:
    app = Server("shop")
    with LoopThread(app) as served_there:
        go = served_there.hold()
        assert app.complete_elicitation("pay-1") is False  # handed on
        go.set()
    assert said(caplog) == [
        "complete_elicitation('pay-1') was handed to the server's event loop, which closed before "
        "doing it (the server stopping): the completion is not recorded and nobody was told"
    ]


def test_a_completion_that_fails_on_the_servers_loop_is_logged_naming_it(
    caplog: pytest.LogCaptureFixture,
) -> None:
    app = Server("shop")
    done = threading.Event()

    def failing(*args: Any) -> None:  # the store's failure, say
        done.set()
        raise RuntimeError("the store refused it")

    with LoopThread(app):
        app.url_mode.step_completed = failing  # type: ignore[method-assign]
        assert app.complete_elicitation("pay-1") is False
        assert done.wait(HANG_GUARD)
    assert said(caplog) == ["complete_elicitation('pay-1'), handed to the server's event loop, failed there"]
    (record,) = [r for r in caplog.records if "pay-1" in r.getMessage()]
    assert record.exc_info is not None and "the store refused it" in str(record.exc_info[1])
