"""What the HTTP client refuses from a server: an SSE answer over the 16 MiB cap (per line,
per event, as a JSON body), failing the request naming the limit; a malformed response to
the request, failing it at once as a protocol violation."""

from __future__ import annotations

from collections.abc import AsyncIterator

import httpx
import pytest

from mcp_elicit.client.transport import Ended
from mcp_elicit.errors import ProtocolViolation
from mcp_elicit.transports.http_client import HttpTransport
from mcp_elicit.wire.sse import encode_event

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


@pytest.mark.parametrize("sse", [False, True], ids=["json", "sse"])
@pytest.mark.parametrize(
    ("body", "what"),
    [
        (b'{"jsonrpc":"2.0","id":1,"result":"a string"}', '"result" must be an object'),
        (b'{"jsonrpc":"2.0","id":1,"error":{"message":"no code"}}', '"error" must be an object'),
    ],
)
async def test_a_malformed_response_fails_its_request(body: bytes, what: str, sse: bool) -> None:
    async def handler(request: httpx.Request) -> httpx.Response:
        if sse:
            return httpx.Response(
                200, headers={"content-type": "text/event-stream"}, content=encode_event(body)
            )
        return httpx.Response(200, headers={"content-type": "application/json"}, content=body)

    async with httpx.AsyncClient(transport=httpx.MockTransport(handler)) as http:
        transport = HttpTransport("http://127.0.0.1:9/mcp", client=http)
        exchange = await transport.exchange({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}, {})
        ended = await exchange.receive()
        await exchange.aclose()
    assert isinstance(ended, Ended) and isinstance(ended.error, ProtocolViolation)
    assert "malformed response" in str(ended.error) and what in str(ended.error)
