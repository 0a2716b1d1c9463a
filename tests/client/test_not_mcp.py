"""An address that answers HTTP but is no MCP endpoint (a web server's error page): connecting
fails with a ``TransportError`` naming the request and the address, whatever the revisions
allowed. The 2026-07-28 probe's said only "The server failed with HTTP 501: <html>...",
naming neither, while the 2025-11-25 ``initialize`` said both."""

from __future__ import annotations

import asyncio

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
