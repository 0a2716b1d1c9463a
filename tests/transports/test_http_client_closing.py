"""Closing an ``HttpTransport`` ends every exchange still open: a ``receive`` waiting on
one (the server has not answered, or keeps its event stream open) ends at once with a
``TransportError`` saying the transport was closed, for any caller of the transport,
not only the client (which ends its own calls first). On a real 127.0.0.1 socket."""

from __future__ import annotations

import asyncio
import contextlib

import pytest

from mcp_elicit.client.transport import Ended
from mcp_elicit.errors import TransportError
from mcp_elicit.transports.http_client import HttpTransport
from mcp_elicit.wire import jsonrpc

pytestmark = pytest.mark.anyio

SSE_HEAD = b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nCache-Control: no-cache\r\n\r\n"


async def _nothing(message: jsonrpc.Message) -> None:
    return None


@pytest.mark.parametrize("answer", [b"", SSE_HEAD], ids=["no-answer", "stream-kept-open"])
async def test_closing_the_transport_ends_a_receive_waiting_with_a_transport_error(answer: bytes) -> None:
    served = asyncio.Event()

    async def hold(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await reader.readuntil(b"\r\n\r\n")
        writer.write(answer)
        await writer.drain()
        served.set()
        with contextlib.suppress(ConnectionError):
            await reader.read()  # until the client goes
        writer.close()

    server = await asyncio.start_server(hold, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    async with server:
        transport = HttpTransport(f"http://127.0.0.1:{port}/mcp")
        await transport.open(_nothing)
        exchange = await transport.exchange({"jsonrpc": "2.0", "id": 1, "method": "ping"}, {})
        waiting = asyncio.ensure_future(exchange.receive())
        async with asyncio.timeout(10):
            await served.wait()
        await transport.aclose()
        async with asyncio.timeout(10):
            ended = await waiting
    assert isinstance(ended, Ended), ended
    assert isinstance(ended.error, TransportError), ended
    assert "closed" in str(ended.error)
    assert await exchange.receive() is ended  # and so does every later receive
