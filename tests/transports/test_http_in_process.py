"""Streamable HTTP (2026-07-28) served by uvicorn in process on 127.0.0.1: what only the
server's own code can show (integer headers compared as numbers, notifications flushed as
they happen, a closed connection cancelling its handler, the watchlist), and the
``Origin: null`` rule on every method of the endpoint (a 2025-11-25 session's too)."""

from __future__ import annotations

import asyncio
import logging
from typing import Any

import httpx
import orjson
import pytest
from starlette.applications import Starlette
from starlette.routing import Mount

from mcp_elicit import Context, Server
from mcp_elicit.transports.http_server import StreamableHTTP

from support.http import McpHttp, build_request, meta, raw_request, sentinel
from support.http_sessions import Session
from support.procs import uvicorn_server
from support.wire import WireChecker

pytestmark = pytest.mark.anyio


def mirroring_server() -> Server:
    app = Server("mirroring")

    @app.tool(
        input_schema={
            "type": "object",
            "properties": {"count": {"type": "integer", "x-mcp-header": "Count"}},
            "required": ["count"],
        }
    )
    def counted(count: int) -> str:
        return f"count={count}"

    return app


@pytest.mark.parametrize(
    ("count", "header", "served"),
    [
        pytest.param(42, "42", True, id="decimal"),
        pytest.param(42, "42.0", True, id="the same number written with a fraction"),
        pytest.param(-7, "-7", True, id="negative"),
        pytest.param(42, "4.2e1", True, id="the same number with an exponent"),
        pytest.param(42, "4_2", False, id="underscore"),
        pytest.param(42, sentinel("\u0664\u0662"), False, id="Arabic-Indic digits"),
        pytest.param(42, sentinel(" 42 "), False, id="white space inside Base64"),
        pytest.param(42, "42.0000000000000001", False, id="a different number rounding to the same float"),
        pytest.param(9007199254740991, "9007199254740990.9999999", False, id="near the safe limit"),
        pytest.param(42, "43", False, id="another number"),
        pytest.param(42, "0x2a", False, id="hexadecimal"),
        pytest.param(42, "nan", False, id="nan"),
        pytest.param(42, "1e" + "9" * 40, False, id="an exponent beyond any number"),
    ],
)
async def test_an_integer_header_is_compared_as_the_exact_number(
    wire: WireChecker, count: int, header: str, served: bool
) -> None:
    """An integer argument and its header are compared as numbers (``42.0`` is ``42``),
    but only a header that is a decimal number, compared exactly: read with ``float()``,
    ``4_2``, Arabic-Indic digits and ``42.0000000000000001`` all were 42, so a request a
    gateway read as another value (or as no number) ran with the body's."""
    async with (
        uvicorn_server(StreamableHTTP(mirroring_server())) as server,
        httpx.AsyncClient(timeout=10.0) as client,
    ):
        mcp = McpHttp(client, server.url, wire)
        reply = await mcp.call("counted", {"count": count}, rid="n", headers={"Mcp-Param-Count": header})
    if served:
        assert reply.status == 200 and reply.result["content"][0]["text"] == f"count={count}", reply.body
    else:
        assert (reply.status, reply.error["code"]) == (400, -32020), reply.body
        assert "Mcp-Param-Count" in reply.error["message"]


@pytest.mark.parametrize("allowed", [None, ["*"]], ids=["loopback", "any host"])
async def test_a_null_origin_is_served_only_when_any_host_is_allowed(
    wire: WireChecker, allowed: list[str] | None
) -> None:
    """``Origin: null`` (a sandboxed frame, a page after a cross-site redirect) is refused
    like another site's, unless the server was told to take any Host and Origin."""
    async with (
        uvicorn_server(StreamableHTTP(mirroring_server(), allowed_hosts=allowed)) as server,
        httpx.AsyncClient(timeout=10.0) as client,
    ):
        mcp = McpHttp(client, server.url, wire)
        reply = await mcp.request("tools/list", headers={"Origin": "null"}, refused=allowed is None)
    if allowed is None:
        assert (reply.status, reply.error["code"]) == (403, -32600), reply.body
        assert "origin 'null' is not allowed" in reply.error["message"]
    else:
        assert reply.status == 200 and reply.result["tools"][0]["name"] == "counted", reply.body


class Gates:
    """Events a tool and its test meet at (created inside the test's event loop)."""

    def __init__(self) -> None:
        self.release = asyncio.Event()
        self.started = asyncio.Event()
        self.cancelled = asyncio.Event()


def gated_server(gates: Gates) -> Server:
    app = Server("gated")

    @app.tool()
    async def held(ctx: Context) -> str:
        await ctx.report_progress(1, 2, "first")
        await gates.release.wait()
        return "released"

    @app.tool()
    async def hang() -> str:
        gates.started.set()
        try:
            await asyncio.sleep(30)
        except asyncio.CancelledError:
            gates.cancelled.set()
            raise
        return "never"

    return app


async def test_notifications_are_flushed_as_they_happen(wire: WireChecker) -> None:
    gates = Gates()
    message, headers = build_request("tools/call", {"name": "held"}, rid=1, meta_=meta(progressToken="p"))
    async with (
        uvicorn_server(StreamableHTTP(gated_server(gates))) as server,
        httpx.AsyncClient(timeout=10.0) as client,
    ):
        body = b""
        async with client.stream("POST", server.url, json=message, headers=headers) as response:
            assert response.headers["content-type"] == "text/event-stream"
            chunks = response.aiter_bytes()
            async with asyncio.timeout(5):  # the tool is still waiting: the event came early
                while b"\n\n" not in body:
                    body += await anext(chunks)
            assert b"notifications/progress" in body and b'"result"' not in body
            gates.release.set()
            async for chunk in chunks:
                body += chunk
        mcp = McpHttp(client, server.url, wire)
        reply = mcp.checked(httpx.Response(200, headers=response.headers, content=body), "tools/call")
    assert [m.get("method") for m in reply.messages] == ["notifications/progress", None]
    assert reply.result["content"][0]["text"] == "released"


async def test_closing_the_connection_cancels_the_handler(
    wire: WireChecker, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="mcp_elicit.http")
    gates = Gates()
    message, headers = build_request("tools/call", {"name": "hang"}, rid="h-1")
    async with uvicorn_server(StreamableHTTP(gated_server(gates))) as server:
        _, writer = await asyncio.open_connection("127.0.0.1", server.port)
        try:
            writer.write(raw_request(server.port, orjson.dumps(message), headers))
            await writer.drain()
            await asyncio.wait_for(gates.started.wait(), 5)
        finally:
            writer.close()
            await writer.wait_closed()
        await asyncio.wait_for(gates.cancelled.wait(), 5)
        async with httpx.AsyncClient(timeout=10.0) as client:
            reply = await McpHttp(client, server.url, wire).request("tools/list")
        assert reply.status == 200 and [t["name"] for t in reply.result["tools"]] == ["held", "hang"]
    assert "cancelled: the client closed the connection" in caplog.text


async def test_the_watchlist_watches_only_requests_that_run_long() -> None:
    """One timer for the app: a request over before the second tick is never watched; one
    still running is watched once it has run a period (two at most, on an idle loop);
    the timer stops when no request runs."""
    from mcp_elicit.transports.http_exchange import Watchlist

    period = 0.05
    watchlist = Watchlist(period)
    loop = asyncio.get_running_loop()
    started: dict[str, float] = {}
    slow_started = asyncio.Event()

    def starter(name: str) -> Any:
        def start() -> None:
            started.setdefault(name, loop.time())
            slow_started.set()

        return start

    quick, slow = starter("quick"), starter("slow")
    begun = loop.time()
    watchlist.add(quick)
    watchlist.add(slow)
    await asyncio.sleep(period / 2)
    watchlist.discard(quick)
    await asyncio.wait_for(slow_started.wait(), 2.0)
    assert "quick" not in started
    assert started["slow"] - begun >= period * 0.9  # never before it has run one period
    watchlist.discard(slow)
    await asyncio.sleep(period * 2.5)  # a tick with nothing left to watch stops the timer
    assert watchlist._timer is None
    watchlist.add(quick)  # and the next request starts it again
    assert watchlist._timer is not None
    watchlist.discard(quick)


@pytest.mark.parametrize("root", ["", "/tools"], ids=["at the root", "mounted"])
async def test_a_null_origin_is_refused_on_every_method_of_the_endpoint_and_the_session_goes_on(
    wire_2025: WireChecker, root: str
) -> None:
    """A 2025-11-25 session's GET (its stream) and DELETE with ``Origin: null``, or a case
    variant of it, are refused (403) like its POSTs, mounted under a path too; the session
    is untouched (a refused DELETE ends nothing), while the pages under the same app take
    ``null`` (their form is posted with it)."""
    mcp = StreamableHTTP(mirroring_server())
    app = Starlette(routes=[Mount(root, app=mcp)], lifespan=mcp.lifespan) if root else mcp
    async with uvicorn_server(app, lifespan="on") as running, httpx.AsyncClient(timeout=10.0) as http:
        base = f"http://127.0.0.1:{running.port}{root}"
        session = Session(http, f"{base}/mcp", wire_2025)
        await session.open()
        for origin in ("null", "NULL", "Null"):
            headers = {**session.headers(), "origin": origin}
            for method in ("GET", "DELETE", "POST"):
                body = (
                    orjson.dumps({"jsonrpc": "2.0", "id": 9, "method": "ping"}) if method == "POST" else None
                )
                reply = await http.request(method, f"{base}/mcp", headers=headers, content=body)
                assert reply.status_code == 403, (origin, method, reply.text)
                assert f"origin {origin!r} is not allowed" in reply.json()["error"]["message"]
        ping = await session.post({"jsonrpc": "2.0", "id": 10, "method": "ping"})
        assert (ping.status_code, ping.json()["result"]) == (200, {}), ping.text
        page = await http.get(f"{base}/mcp-elicit/flows/unknown", headers={"origin": "null"})
        assert page.status_code == 403 and "not available" in page.text.lower(), page.text


@pytest.mark.parametrize(
    "origin", ["https://me:PASSWORD@elsewhere.example", "https://elsewhere.example/?key=PASSWORD"]
)
async def test_a_refused_origin_is_logged_without_its_password_or_key(
    wire: WireChecker, caplog: pytest.LogCaptureFixture, origin: str
) -> None:
    """An Origin is the client's to write, and one that is no browser's may be any URL: the
    line saying it was refused shows it as any URL is shown."""
    caplog.set_level(logging.WARNING, logger="mcp_elicit.http")
    async with (
        uvicorn_server(StreamableHTTP(mirroring_server())) as server,
        httpx.AsyncClient(timeout=10.0) as client,
    ):
        reply = await McpHttp(client, server.url, wire).request(
            "tools/list", headers={"Origin": origin}, refused=True
        )
    assert reply.status == 403, reply.body
    lines = [r.getMessage() for r in caplog.records if "refused a request" in r.getMessage()]
    assert lines, "the refusal was not logged: the check would prove nothing"
    assert "PASSWORD" not in "\n".join(lines) and "REDACTED" in "\n".join(lines)
