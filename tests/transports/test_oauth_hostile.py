"""The client's authorization requests (discovery, registration, token requests) against a
hostile server on a real 127.0.0.1 socket: a raw asyncio server that answers each request
with whatever bytes its script writes."""

from __future__ import annotations

import asyncio
import contextlib
import zlib
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field

import httpx
import pytest

from mcp_elicit.errors import AuthorizationError
from mcp_elicit.transports.http_documents import get_json, post

pytestmark = pytest.mark.anyio

Script = Callable[[dict[str, str], asyncio.StreamWriter], Awaitable[None]]


@dataclass
class Raw:
    port: int = 0
    seen: list[dict[str, str]] = field(default_factory=list)

    def url(self, path: str) -> str:
        return f"http://127.0.0.1:{self.port}{path}"


@contextlib.asynccontextmanager
async def raw_server(script: Script) -> AsyncIterator[Raw]:
    """A server on 127.0.0.1 that reads each request's head and body and lets ``script``
    answer it (one request per connection); stopped on exit."""
    raw = Raw()

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            await reader.readline()
            headers: dict[str, str] = {}
            while (line := await reader.readline()) not in (b"\r\n", b""):
                name, _, value = line.decode("latin-1").partition(":")
                headers[name.strip().lower()] = value.strip()
            await reader.readexactly(int(headers.get("content-length", "0")))
            raw.seen.append(headers)
            await script(headers, writer)
        except (ConnectionError, ValueError, asyncio.IncompleteReadError):
            pass
        finally:
            writer.close()
            with contextlib.suppress(Exception):
                await writer.wait_closed()

    server = await asyncio.start_server(handle, "127.0.0.1", 0)
    raw.port = server.sockets[0].getsockname()[1]
    try:
        yield raw
    finally:
        server.close()
        await server.wait_closed()


def _answer(status: str, headers: dict[str, str], body: bytes) -> bytes:
    head = f"HTTP/1.1 {status}\r\n" + "".join(f"{k}: {v}\r\n" for k, v in headers.items())
    return head.encode() + f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n".encode() + body


def _gzip_bomb(megabytes: int) -> bytes:
    """``megabytes`` MB of spaces (valid JSON whitespace), gzip-compressed."""
    squeeze = zlib.compressobj(9, zlib.DEFLATED, 31)
    return b"".join(squeeze.compress(b" " * 1_000_000) for _ in range(megabytes)) + squeeze.flush()


async def _gzip(headers: dict[str, str], writer: asyncio.StreamWriter) -> None:
    writer.write(_answer("200 OK", {"Content-Type": "application/json", "Content-Encoding": "gzip"}, _BOMB))
    await writer.drain()


_BOMB = _gzip_bomb(64)


async def _request(http: httpx.AsyncClient, method: str, url: str) -> object:
    if method == "GET":
        return await get_json(http, url)
    return await post(http, url, data={"grant_type": "authorization_code", "code": "the-code"})


@pytest.mark.parametrize("method", ["GET", "POST"])
async def test_a_compressed_authorization_answer_is_refused_not_inflated(method: str) -> None:
    """Metadata, registration and token requests ask for their answer uncompressed; a gzip
    one all the same (64 KB that httpx would inflate to 64 MB a network read at a time,
    before the 256 KiB cap is checked) is refused unread, naming the URL and the encoding."""
    async with raw_server(_gzip) as server, httpx.AsyncClient(follow_redirects=False) as http:
        url = server.url("/.well-known/oauth-authorization-server" if method == "GET" else "/token")
        with pytest.raises(AuthorizationError) as caught:
            await asyncio.wait_for(_request(http, method, url), 10)
    assert server.seen[0]["accept-encoding"] == "identity"
    message = str(caught.value)
    assert url in message and "compressed (gzip)" in message and "the-code" not in message
