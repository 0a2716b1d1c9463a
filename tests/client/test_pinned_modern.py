"""A client allowed 2026-07-28 only, against servers that do not speak it: the error says
what the server answered and what to do, as the version mismatch it is."""

from __future__ import annotations

import asyncio
import sys
from contextlib import AbstractAsyncContextManager

import pytest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import HTMLResponse, Response
from starlette.routing import Route

from client.hostile import SERVER
from mcp_elicit.client import Client
from mcp_elicit.errors import UnsupportedProtocolVersion
from mcp_elicit.transports.http_client import connect_http
from mcp_elicit.transports.stdio_client import connect_stdio

from support.procs import uvicorn_server

pytestmark = pytest.mark.anyio


async def _accepted(request: Request) -> Response:
    """As a server that takes every POST for a notification: 202, no body."""
    return Response(status_code=202)


async def _page(request: Request) -> Response:
    """As a web site, not an MCP endpoint: a page for anything."""
    return HTMLResponse("<!doctype html><html><body><h1>Welcome</h1></body></html>")


async def _connect(connecting: AbstractAsyncContextManager[Client]) -> None:
    """Connect, and close again at once."""
    async with asyncio.timeout(20), connecting:
        pass


APP = Starlette(
    routes=[
        Route("/accepted", _accepted, methods=["GET", "POST", "DELETE"]),
        Route("/page", _page, methods=["GET", "POST", "DELETE"]),
    ]
)


@pytest.mark.parametrize(
    ("path", "said"),
    [
        ("/accepted", "HTTP 202 and"),
        ("/page", "HTTP 200 and no modern JSON-RPC error (Content-Type text/html"),
    ],
)
async def test_a_server_answering_discover_without_json_rpc_is_a_version_mismatch(
    path: str, said: str
) -> None:
    """With versions=['2026-07-28'], a server answering server/discover with 202 (a
    2025-11-25-only server can) or an HTML page raised a generic ProtocolViolation. It is
    UnsupportedProtocolVersion, as when discover names no version the client speaks, and it
    says what the server answered and how to talk to a 2025-11-25 server."""
    async with uvicorn_server(APP) as running:
        url = f"http://127.0.0.1:{running.port}{path}"
        with pytest.raises(UnsupportedProtocolVersion) as caught:
            await _connect(connect_http(url, versions=["2026-07-28"], timeout=10))
    text = str(caught.value)
    assert "does not speak 2026-07-28" in text
    assert f"server/discover was answered with {said}" in text
    assert "versions=['2026-07-28', '2025-11-25']" in text
    assert caught.value.code == -32022


async def test_a_2025_11_25_server_over_stdio_is_a_version_mismatch() -> None:
    """Over stdio, a 2025-11-25 server refuses server/discover (-32601): the same error."""
    command = [sys.executable, str(SERVER), "legacy-ask"]
    with pytest.raises(UnsupportedProtocolVersion) as caught:
        await _connect(connect_stdio(command, versions=["2026-07-28"], timeout=10))
    text = str(caught.value)
    assert "does not speak 2026-07-28" in text
    assert "server/discover was answered with error -32601" in text
    assert "versions=['2026-07-28', '2025-11-25']" in text
