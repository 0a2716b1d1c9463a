"""``complete_elicitation`` called by a webhook that is not on the server's event loop,
while the server serves under uvicorn with a Redis store: a synchronous webhook
(``http.server`` in a thread of its own, no event loop there, as a Flask or Django view
runs), and an async one in a thread running an event loop of its own (uvicorn on a second
port). Each hands the completion to the server's loop: the 2026-07-28 retry held on the
step goes on, a 2025-11-25 session is told ``notifications/elicitation/complete``, and the
completion is recorded in the store. Before, the first was dropped with a warning (the
person asked again), and the second wrote through the server's Redis pool from the other
loop (logged "could not be recorded") and told the session from the wrong thread."""

from __future__ import annotations

import asyncio
import http.server
import logging
import threading
import uuid
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import asynccontextmanager, contextmanager
from typing import Any

import httpx
import pytest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import PlainTextResponse
from starlette.routing import Mount, Route

from mcp_elicit import Context, KeyRing, Server
from mcp_elicit.server.url_steps import StepCompletions
from mcp_elicit.stores import open_store
from mcp_elicit.transports.http_server import StreamableHTTP

from support.http_sessions import Session, _events
from support.procs import uvicorn_server
from support.url_mode import Mcp
from support.waiting import HANG_GUARD, eventually, hang_guard
from support.wire import WireChecker

pytestmark = pytest.mark.anyio

KEYS = KeyRing([bytes(range(40, 72))])
MAX_ROUNDS = 200  # a hang guard for the retries, never reached when it works


def shop(url: str) -> Server:
    """A server whose ``pay`` tool holds its answer until the payment page is done: it has
    no record of its own, so only the completion releases the step."""
    app = Server("shop", state_keys=KEYS, store=url, flow_wait=0.2)

    @app.tool()
    async def pay(ctx: Context) -> str:
        answer = await ctx.require_url("Pay for your order", "https://pay.example/1", elicitation_id="pay-1")
        return answer.action

    return app


@asynccontextmanager
async def served(app: Server) -> AsyncIterator[str]:
    mcp = StreamableHTTP(app)
    asgi = Starlette(routes=[Mount("/", app=mcp)], lifespan=mcp.lifespan)
    async with uvicorn_server(asgi, lifespan="on") as running:
        yield running.url


@contextmanager
def sync_webhook(app: Server, gate: threading.Event) -> Iterator[str]:
    """A synchronous webhook: ``http.server`` answering on a thread with no event loop. Once
    it has called ``complete_elicitation`` it goes on with work of its own until ``gate``
    is set: nothing of the completion may wait for its thread."""

    class Hook(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            assert not _loop_running(), "the webhook's thread runs no event loop"
            app.complete_elicitation(self.path.rsplit("/", 1)[-1], None)
            assert gate.wait(HANG_GUARD)
            self.send_response(200)
            self.send_header("content-length", "4")
            self.end_headers()
            self.wfile.write(b"paid")

        def log_message(self, format: str, *args: Any) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Hook)
    thread = threading.Thread(target=server.serve_forever, name="sync webhook", daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
        thread.join()


@contextmanager
def async_webhook(app: Server, gate: threading.Event) -> Iterator[str]:
    """An async webhook served by uvicorn on a thread running an event loop of its own. Once
    it has called ``complete_elicitation`` it blocks that loop (a synchronous call, as a
    database driver's) until ``gate`` is set: nothing of the completion may wait for it."""
    ready: list[str] = []
    up = threading.Event()
    stops: list[tuple[asyncio.AbstractEventLoop, asyncio.Event]] = []
    failed: list[BaseException] = []

    async def page(request: Request) -> PlainTextResponse:
        app.complete_elicitation(request.path_params["step"], None)
        assert gate.wait(HANG_GUARD)  # the loop blocked meanwhile
        return PlainTextResponse("paid")

    async def serve() -> None:
        stop = asyncio.Event()
        stops.append((asyncio.get_running_loop(), stop))
        hook = Starlette(routes=[Route("/pay/{step}", page, methods=["GET"])])
        async with uvicorn_server(hook) as running:
            ready.append(f"http://127.0.0.1:{running.port}")
            up.set()
            await stop.wait()

    def run() -> None:
        try:
            asyncio.run(serve())
        except BaseException as exc:  # said by the test, not lost in the thread
            failed.append(exc)
            up.set()

    thread = threading.Thread(target=run, name="async webhook", daemon=True)
    thread.start()
    assert up.wait(HANG_GUARD) and not failed, failed
    try:
        yield ready[0]
    finally:
        ((loop, stop),) = stops
        loop.call_soon_threadsafe(stop.set)
        thread.join(HANG_GUARD)
    assert not failed, failed


WEBHOOKS: dict[str, Callable[[Server, threading.Event], Any]] = {
    "sync thread": sync_webhook,
    "own event loop": async_webhook,
}


@contextmanager
def opened(gate: threading.Event) -> Iterator[None]:
    """``gate`` set when the block ends, however: no webhook's thread is left waiting."""
    try:
        yield
    finally:
        gate.set()


def _loop_running() -> bool:
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return False
    return True


async def recorded(url: str) -> bool:
    """Whether the store holds the completion of ``pay-1`` (read on this loop, its own pool)."""
    reader = StepCompletions(open_store(url), ttl=600.0)
    try:
        return bool(await reader.marker("pay-1", None))
    finally:
        await reader.store.close()


def warned(caplog: pytest.LogCaptureFixture) -> list[str]:
    """What the server warned of the step (not recorded, not told, written from the wrong
    loop): nothing, when the completion is done on the server's loop."""
    return [
        r.getMessage()
        for r in caplog.records
        if r.name.startswith("mcp_elicit") and r.levelno >= logging.WARNING and "pay-1" in r.getMessage()
    ]


@pytest.mark.parametrize("webhook", WEBHOOKS)
async def test_a_webhook_off_the_servers_loop_releases_the_held_retry(
    webhook: str, redis_url: str, wire: WireChecker, caplog: pytest.LogCaptureFixture
) -> None:
    url = f"{redis_url}?prefix=test-{uuid.uuid4().hex[:12]}"
    app, gate = shop(url), threading.Event()
    with (
        caplog.at_level(logging.INFO, logger="mcp_elicit"),
        WEBHOOKS[webhook](app, gate) as hook,
        opened(gate),
    ):
        async with served(app) as mcp_url, httpx.AsyncClient(timeout=30) as http:
            mcp = Mcp(http, mcp_url, wire, tool="pay")
            first = (await mcp.call(arguments={}))["result"]
            ((key, step),) = first["inputRequests"].items()
            assert step["params"]["mode"] == "url"
            accepted = {key: {"action": "accept"}}
            result = (
                await mcp.call(arguments={}, inputResponses=accepted, requestState=first["requestState"])
            )["result"]
            assert result["resultType"] == "input_required", "accept is consent: the page is not done"
            paying = asyncio.ensure_future(http.get(f"{hook}/pay/pay-1"))  # the person paid
            async with hang_guard("the retry released by the completion"):
                for _ in range(MAX_ROUNDS):
                    if result.get("resultType") != "input_required":
                        break
                    assert "inputRequests" not in result, "the step was asked again: its completion was lost"
                    result = (await mcp.call(arguments={}, requestState=result["requestState"]))["result"]
            assert result.get("content") == [{"type": "text", "text": "accept"}], result
            assert await recorded(url)
            gate.set()
            assert (await paying).text == "paid"
    assert not warned(caplog), caplog.text


@pytest.mark.parametrize("webhook", WEBHOOKS)
async def test_a_webhook_off_the_servers_loop_tells_a_2025_session(
    webhook: str, redis_url: str, wire_2025: WireChecker, caplog: pytest.LogCaptureFixture
) -> None:
    url = f"{redis_url}?prefix=test-{uuid.uuid4().hex[:12]}"
    app, gate = shop(url), threading.Event()
    with (
        caplog.at_level(logging.INFO, logger="mcp_elicit"),
        WEBHOOKS[webhook](app, gate) as hook,
        opened(gate),
    ):
        async with served(app) as mcp_url, httpx.AsyncClient(timeout=30) as http:
            session = Session(http, mcp_url, wire_2025)
            await session.open()
            required = (await session.post(session.call("pay"))).json()
            wire_2025.response("tools/call", required)
            assert required["error"]["code"] == -32042
            async with http.stream("GET", mcp_url, headers=session.headers()) as stream:
                assert stream.status_code == 200
                events = _events(stream)
                paying = asyncio.ensure_future(http.get(f"{hook}/pay/pay-1"))
                async with hang_guard("notifications/elicitation/complete on the session's stream"):
                    done = await anext(events)
            wire_2025.notification(done)
            assert done == {
                "jsonrpc": "2.0",
                "method": "notifications/elicitation/complete",
                "params": {"elicitationId": "pay-1"},
            }
            await eventually(lambda: recorded(url), "the completion recorded in the store")
            gate.set()
            assert (await paying).text == "paid"
    assert not warned(caplog), caplog.text
