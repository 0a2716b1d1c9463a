"""A request body that does not arrive in time (a stalled or trickling client, slowloris)
is answered 408 once ``body_timeout`` has passed, and its connection closed; a slow body
that completes in time, and a body sent at once, are served as usual.

Real uvicorn on 127.0.0.1 (both of its HTTP parsers), raw sockets for the clients that
stall, and every JSON-RPC message checked against its revision's schema.
"""

from __future__ import annotations

import asyncio
import contextlib
import math
from typing import Any

import httpx
import orjson
import pytest

from mcp_elicit.errors import ConfigError
from mcp_elicit.transports.http_server import StreamableHTTP

from support.http import check_error, meta, mirrored_headers, raw_request
from support.procs import uvicorn_server
from support.sessions import ask_name_server
from support.wire import WireChecker

pytestmark = pytest.mark.anyio

WAIT = 10.0  # how long a test waits for any answer before calling it a hang
PARSERS = [pytest.param("h11", id="h11"), pytest.param("httptools", id="httptools")]


def tools_list() -> tuple[bytes, dict[str, str]]:
    params = {"_meta": meta()}
    body = orjson.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": params})
    return body, mirrored_headers("tools/list", params)


async def exchange(port: int, pieces: list[bytes], *, pause: float = 0.0) -> bytes:
    """Send a POST whose body comes in ``pieces`` (``pause`` seconds apart); the raw
    response."""
    _, headers = tools_list()
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    try:
        writer.write(raw_request(port, b"", headers, length=sum(map(len, pieces))))
        for piece in pieces:
            await writer.drain()
            await asyncio.sleep(pause)
            writer.write(piece)
        await writer.drain()
        async with asyncio.timeout(WAIT):
            head = await reader.readuntil(b"\r\n\r\n")
            return head + await reader.readexactly(content_length(head))
    finally:
        writer.close()
        await writer.wait_closed()


def content_length(head: bytes) -> int:
    return int(head.lower().split(b"content-length:", 1)[1].split(b"\r\n", 1)[0])


def parsed(raw: bytes) -> tuple[int, dict[str, str], dict[str, Any]]:
    head, _, body = raw.partition(b"\r\n\r\n")
    status_line, *lines = head.decode("latin-1").split("\r\n")
    headers = {k.strip().lower(): v.strip() for k, v in (line.split(":", 1) for line in lines)}
    return int(status_line.split()[1]), headers, orjson.loads(body)


async def closed_by_server(port: int, pieces: list[bytes], length: int) -> tuple[bytes, bytes]:
    """Like :func:`exchange` for a body that never completes: the response, and what
    came after it before the server closed the connection (nothing, once it closes)."""
    _, headers = tools_list()
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    try:
        writer.write(raw_request(port, b"", headers, length=length))
        for piece in pieces:
            writer.write(piece)
        await writer.drain()
        async with asyncio.timeout(WAIT):
            head = await reader.readuntil(b"\r\n\r\n")
            response = head + await reader.readexactly(content_length(head))
            rest = await reader.read()  # b"" once the server has closed it
        return response, rest
    finally:
        writer.close()
        await writer.wait_closed()


@pytest.mark.parametrize("parser", PARSERS)
async def test_a_stalled_body_is_408_and_its_connection_closed(parser: str, wire: WireChecker) -> None:
    body, _ = tools_list()
    app = StreamableHTTP(ask_name_server("stall"), body_timeout=0.3)
    async with uvicorn_server(app, http=parser) as running:
        response, rest = await closed_by_server(running.port, [body[:10]], length=1000)
        status, headers, message = parsed(response)
        assert status == 408, response
        assert headers["connection"] == "close"
        assert headers["content-type"].startswith("application/json")
        assert message.get("id") is None
        assert message["error"]["code"] == -32600
        assert message["error"]["message"] == "Request body not received within 0.3 s: send it again, at once"
        check_error(wire, message)
        assert rest == b""
        # the server goes on serving
        async with httpx.AsyncClient(timeout=WAIT) as http:
            body, headers = tools_list()
            normal = await http.post(running.url, content=body, headers=headers)
        assert normal.status_code == 200, normal.text
        wire.response("tools/list", normal.json())


@pytest.mark.parametrize("parser", PARSERS)
async def test_headers_with_no_body_at_all_are_408(parser: str, wire: WireChecker) -> None:
    """The classic slowloris: the headers promise a body and not a byte of it comes. The
    wait for a first piece is watched by one timer for the whole app, so the answer comes
    between ``body_timeout`` and twice that."""
    app = StreamableHTTP(ask_name_server("headers-only"), body_timeout=0.3)
    async with uvicorn_server(app, http=parser) as running:
        response, rest = await closed_by_server(running.port, [], length=1000)
        status, headers, message = parsed(response)
        assert status == 408, response
        assert headers["connection"] == "close"
        assert message["error"]["message"] == "Request body not received within 0.3 s: send it again, at once"
        check_error(wire, message)
        assert rest == b""
        # requests that came whole meanwhile and since are served
        status, _, message = parsed(await exchange(running.port, [tools_list()[0]]))
        assert status == 200, message


async def test_a_body_trickling_in_past_the_limit_is_408() -> None:
    """The limit is on the whole body, not on each silence: a byte every 0.1 s does not
    keep a request open past ``body_timeout``."""
    body, headers = tools_list()
    app = StreamableHTTP(ask_name_server("trickle"), body_timeout=0.3)
    async with uvicorn_server(app) as running:
        reader, writer = await asyncio.open_connection("127.0.0.1", running.port)
        try:
            writer.write(raw_request(running.port, b"", headers, length=len(body)))
            head = b""
            sent = 0
            async with asyncio.timeout(WAIT):
                while not head and sent < len(body):
                    # a byte, then up to 0.1 s of listening (no byte written once answered)
                    writer.write(body[sent : sent + 1])
                    await writer.drain()
                    sent += 1
                    with contextlib.suppress(TimeoutError):
                        head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), 0.1)
        finally:
            writer.close()
            with contextlib.suppress(ConnectionError):
                await writer.wait_closed()
        assert head.startswith(b"HTTP/1.1 408 "), head
        assert 1 < sent < len(body), "the answer came before the body trickled, or after it was whole"


@pytest.mark.parametrize("parser", PARSERS)
async def test_a_slow_body_that_completes_in_time_is_served(parser: str, wire: WireChecker) -> None:
    body, _ = tools_list()
    app = StreamableHTTP(ask_name_server("slow"), body_timeout=5.0)
    async with uvicorn_server(app, http=parser) as running:
        third = len(body) // 3
        pieces = [body[:third], body[third : 2 * third], body[2 * third :]]
        status, _, message = parsed(await exchange(running.port, pieces, pause=0.1))
    assert status == 200, message
    wire.response("tools/list", message)
    assert [tool["name"] for tool in message["result"]["tools"]]


async def test_without_a_limit_a_slow_body_is_still_served(wire: WireChecker) -> None:
    body, _ = tools_list()
    app = StreamableHTTP(ask_name_server("unlimited"), body_timeout=None)
    async with uvicorn_server(app) as running:
        pieces = [body[:5], body[5:]]
        status, _, message = parsed(await exchange(running.port, pieces, pause=0.1))
    assert status == 200, message
    wire.response("tools/list", message)


async def test_a_body_sent_at_once_is_served(wire: WireChecker) -> None:
    app = StreamableHTTP(ask_name_server("normal"), body_timeout=0.3)
    async with uvicorn_server(app) as running:
        body, _ = tools_list()
        status, _, message = parsed(await exchange(running.port, [body]))
        assert status == 200, message
        wire.response("tools/list", message)


def test_the_default_limit_is_30_seconds() -> None:
    assert StreamableHTTP(ask_name_server("default")).body_timeout == 30.0


@pytest.mark.parametrize("bad", [0, 0.0, -1.0, math.inf, math.nan, "30", True])
def test_a_bad_body_timeout_is_refused(bad: Any) -> None:
    with pytest.raises(ConfigError, match=r"body_timeout must be a positive number of seconds or None"):
        StreamableHTTP(ask_name_server("bad"), body_timeout=bad)
    app = StreamableHTTP(ask_name_server("set later"))
    with pytest.raises(ConfigError, match=r"body_timeout must be a positive number of seconds or None"):
        app.body_timeout = bad
    assert app.body_timeout == 30.0
