"""The HTTP client's caps on what a server sends: an SSE answer is held to the same 16 MiB
per line and per event as a JSON body, and the request fails naming the limit."""

from __future__ import annotations

from collections.abc import AsyncIterator

import httpx
import pytest

from mcp_elicit.client.transport import Ended
from mcp_elicit.transports.http_client import HttpTransport

_MIB = 1024 * 1024

pytestmark = pytest.mark.anyio


def _sse(chunks: AsyncIterator[bytes]) -> httpx.MockTransport:
    async def handler(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, headers={"content-type": "text/event-stream"}, content=chunks)

    return httpx.MockTransport(handler)


async def _ended(chunks: AsyncIterator[bytes]) -> Ended:
    async with httpx.AsyncClient(transport=_sse(chunks)) as http:
        transport = HttpTransport("http://127.0.0.1:9/mcp", client=http)
        exchange = await transport.exchange({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}, {})
        while not isinstance(item := await exchange.receive(), Ended):
            pass
        await exchange.aclose()
        return item


async def test_an_event_that_never_ends_fails_at_the_limit() -> None:
    async def data_lines() -> AsyncIterator[bytes]:
        for _ in range(17):  # data: lines, and never the blank line that ends the event
            yield b"data: " + b"x" * (_MIB - 8) + b"\n"

    ended = await _ended(data_lines())
    assert ended.reason is not None and str(16 * _MIB) in ended.reason
    assert "SSE event" in ended.reason


async def test_a_line_that_never_ends_fails_at_the_limit() -> None:
    async def one_line() -> AsyncIterator[bytes]:
        yield b"data: "
        for _ in range(17):
            yield b"x" * _MIB

    ended = await _ended(one_line())
    assert ended.reason is not None and str(16 * _MIB) in ended.reason
    assert "SSE line" in ended.reason
