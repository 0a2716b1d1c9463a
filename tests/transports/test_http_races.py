"""What the HTTP server does when a client's moves overlap each other or the shutdown:
each race made deterministic with a hook in the ASGI app or the handler, over real
uvicorn on 127.0.0.1. Expected: exactly once where promised, a clear error otherwise,
and nothing left in the server's maps."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

import httpx
import orjson
import pytest

from mcp_elicit import Context, Server
from mcp_elicit.transports.http_server import StreamableHTTP

from support.http import meta, mirrored_headers
from support.procs import uvicorn_server
from support.sessions import ACCEPT, initialize_body, open_session
from support.wire import WireChecker

pytestmark = pytest.mark.anyio

Scope = dict[str, Any]
ASGI = Callable[..., Any]


def entered_body(app: ASGI, started: asyncio.Event) -> ASGI:
    """``app``, setting ``started`` once a request of it reads the first piece of its body
    (it passed every check made before the body)."""

    async def wrapped(scope: Scope, receive: Callable[[], Any], send: Callable[..., Any]) -> None:
        async def reading() -> Any:
            started.set()
            return await receive()

        await app(scope, reading, send)

    return wrapped


def counted_server(runs: list[str]) -> Server:
    app = Server("races")

    @app.tool()
    async def work(ctx: Context) -> str:
        runs.append("work")
        return "done"

    return app


async def _post_in_two_pieces(
    port: int, head: dict[str, str], body: bytes, between: Callable[[], Any]
) -> bytes:
    """POST ``body`` to ``/mcp`` on a raw connection, its first bytes, then ``between()``,
    then the rest; the whole answer."""
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    try:
        lines = "".join(f"{k}: {v}\r\n" for k, v in {**head, "content-length": str(len(body))}.items())
        writer.write(f"POST /mcp HTTP/1.1\r\nhost: 127.0.0.1\r\nconnection: close\r\n{lines}\r\n".encode())
        writer.write(body[:10])
        await writer.drain()
        await between()
        writer.write(body[10:])
        await writer.drain()
        return await asyncio.wait_for(reader.read(), 5)
    finally:
        writer.close()


@pytest.mark.parametrize("era", ["2025-11-25 initialize", "2026-07-28 tools/call"])
async def test_a_request_whose_body_arrives_after_begin_shutdown_is_refused(era: str) -> None:
    runs: list[str] = []
    server = counted_server(runs)
    app = StreamableHTTP(server)
    started = asyncio.Event()
    if era.startswith("2025"):
        body = orjson.dumps(initialize_body())
        head = {"content-type": "application/json", "accept": ACCEPT}
    else:
        params = {"name": "work", "arguments": {}, "_meta": meta()}
        body = orjson.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": params})
        head = mirrored_headers("tools/call", params)

    async def shut() -> None:
        await asyncio.wait_for(started.wait(), 5)  # the request passed the check for a shutdown
        app.begin_shutdown()

    async with uvicorn_server(entered_body(app, started)) as running:
        answer = await _post_in_two_pieces(running.port, head, body, shut)
    status = answer.split(b"\r\n", 1)[0]
    assert status == b"HTTP/1.1 503 Service Unavailable", answer
    refusal = orjson.loads(answer.split(b"\r\n\r\n", 1)[1])
    assert refusal["id"] == (0 if era.startswith("2025") else 1)
    assert "shutting down" in refusal["error"]["message"]
    assert b"mcp-session-id" not in answer.lower()
    assert len(server.sessions) == 0  # no session opened on a server that stopped
    assert runs == []  # nor a handler run


async def test_a_cancelled_request_whose_handler_returns_anyway_is_not_answered(
    wire_2025: WireChecker,
) -> None:
    """The client cancelled the request; its handler caught the cancellation and returned.
    Nothing is sent for the request (as over stdio) and the session keeps no trace of it."""
    started = asyncio.Event()
    server = Server("races")

    @server.tool()
    async def stubborn(ctx: Context) -> str:
        started.set()
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            pass  # swallowed: the handler ends as if nothing happened
        return "finished anyway"

    async with uvicorn_server(StreamableHTTP(server)) as running, httpx.AsyncClient(timeout=10) as http:
        headers = await open_session(http, running.url, wire_2025)
        call = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "stubborn"}}
        answer = asyncio.ensure_future(http.post(running.url, json=call, headers=headers))
        await asyncio.wait_for(started.wait(), 5)
        cancel = {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 1}}
        assert (await http.post(running.url, json=cancel, headers=headers)).status_code == 202
        body = (await asyncio.wait_for(answer, 5)).content
        assert b"finished anyway" not in body, body
        session = server.sessions.get(headers["mcp-session-id"], None)
        assert session is not None
        assert not session.cancelled and not session.inflight
