"""An address that answers HTTP but is no MCP endpoint (a web server's error page): connecting
fails with a ``TransportError`` naming the request and the address, whatever the revisions
allowed. The 2026-07-28 probe's said only "The server failed with HTTP 501: <html>...",
naming neither, while the 2025-11-25 ``initialize`` said both."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable

import pytest

from mcp_elicit.errors import MCPElicitError, TransportError
from mcp_elicit.transports.http_client import connect_http

from support.raw_http import Seen, raw_server, response

pytestmark = pytest.mark.anyio

PAGE = b"<!DOCTYPE HTML><html><body><h1>Error response</h1><p>Error code: 501</p></body></html>"


async def error_page(seen: Seen, writer: asyncio.StreamWriter) -> None:
    writer.write(response("501 Not Implemented", {"Content-Type": "text/html"}, PAGE))
    await writer.drain()


@pytest.mark.parametrize(
    ("versions", "method"),
    [
        (["2026-07-28"], "server/discover"),
        (["2026-07-28", "2025-11-25"], "server/discover"),
        (["2025-11-25"], "initialize"),
    ],
)
async def test_an_error_page_is_reported_naming_the_request_and_the_address(
    versions: list[str], method: str
) -> None:
    async with raw_server(error_page) as raw:
        with pytest.raises(TransportError) as caught:
            async with asyncio.timeout(30), connect_http(raw.url, versions=versions):
                pass
    said = str(caught.value)
    assert method in said
    assert raw.url in said
    assert "HTTP 501" in said


async def not_here(seen: Seen, writer: asyncio.StreamWriter) -> None:
    writer.write(
        response("404 Not Found", {"Content-Type": "text/plain"}, b"Not Found: the MCP endpoint is /mcp")
    )
    await writer.drain()


@pytest.mark.parametrize("versions", [["2026-07-28"], ["2025-11-25"]])
async def test_a_wrong_path_is_reported_with_what_the_server_said(versions: list[str]) -> None:
    """A 404 at a wrong path: the server's words (where its endpoint is) reach the person at
    both revisions. At 2026-07-28 they were dropped, and the error advised allowing
    2025-11-25 instead of fixing the path."""
    async with raw_server(not_here) as raw:
        with pytest.raises(MCPElicitError) as caught:
            async with asyncio.timeout(30), connect_http(raw.url, versions=versions):
                pass
    said = str(caught.value)
    assert "HTTP 404" in said
    assert "the MCP endpoint is /mcp" in said


ESCAPES = b"\x1b[2J\x1b]8;;http://evil.example\x07Not Found\x1b]8;;\x07\r\n" + b"x" * 5000


def answering(status: str) -> Callable[[Seen, asyncio.StreamWriter], Awaitable[None]]:
    async def script(seen: Seen, writer: asyncio.StreamWriter) -> None:
        writer.write(response(status, {"Content-Type": "text/plain"}, ESCAPES))
        await writer.drain()

    return script


@pytest.mark.parametrize("status", ["404 Not Found", "500 Internal Server Error"])
@pytest.mark.parametrize("versions", [["2026-07-28"], ["2025-11-25"]])
async def test_a_body_with_terminal_escapes_is_quoted_inert_and_short(
    versions: list[str], status: str
) -> None:
    """The body's words reach the error, but as text: a terminal printing the error does not
    clear the screen or show a link, and a long body is cut short."""
    async with raw_server(answering(status)) as raw:
        with pytest.raises(MCPElicitError) as caught:
            async with asyncio.timeout(30), connect_http(raw.url, versions=versions):
                pass
    said = str(caught.value)
    assert "Not Found" in said, said
    assert not any(ch in said for ch in "\x1b\x07\r"), repr(said)
    assert "\\x1b[2J" in said, said
    assert len(said) < 1000, len(said)


async def echoing(seen: Seen, writer: asyncio.StreamWriter) -> None:
    """A 404 page that says what was asked for, as many web servers' do: the query too."""
    said = f"Cannot POST {seen.path} (http://127.0.0.1{seen.path})".encode()
    writer.write(response("404 Not Found", {"Content-Type": "text/plain"}, said))
    await writer.drain()


@pytest.mark.parametrize("versions", [["2026-07-28"], ["2025-11-25"]])
async def test_a_page_echoing_the_address_does_not_show_its_key(versions: list[str]) -> None:
    """A key in the address's query is never said: the address is shown without it, and so
    is the page's echo of it (the path stays, to see what the server was asked)."""
    async with raw_server(echoing) as raw:
        with pytest.raises(MCPElicitError) as caught:
            async with asyncio.timeout(30), connect_http(f"{raw.url}?key=s3cret-k3y", versions=versions):
                pass
    said = str(caught.value)
    assert "Cannot POST /mcp" in said, said
    assert "s3cret" not in said, said
