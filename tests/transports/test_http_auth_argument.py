"""``HttpTransport(auth=...)`` takes what its httpx client takes: an ``httpx.Auth``, a
function that signs each request (``auth(request) -> request``) or a ``(user,
password)`` pair. The check of constructor arguments refused the last two ("auth takes
an httpx.Auth ..."), which worked until then. A real mcp-elicit server under uvicorn on
127.0.0.1 that takes one bearer token."""

from __future__ import annotations

import httpx
import pytest

from mcp_elicit.server.auth import StaticTokens
from mcp_elicit.transports.http_client import HttpTransport, connect_http
from mcp_elicit.transports.http_server import StreamableHTTP

from support.mcp_authorization import bound_server
from support.procs import uvicorn_server

pytestmark = pytest.mark.anyio


def signed(request: httpx.Request) -> httpx.Request:
    request.headers["Authorization"] = "Bearer the-token"
    return request


async def test_a_function_that_signs_each_request_is_an_auth() -> None:
    mcp = StreamableHTTP(bound_server(), auth=StaticTokens({"the-token": "ann"}))
    async with uvicorn_server(mcp) as running:
        url = f"http://127.0.0.1:{running.port}/mcp"
        async with connect_http(url, auth=signed, versions=["2026-07-28"], timeout=10) as client:  # type: ignore[arg-type]
            result = await client.call_tool("whoami", {})
    assert result["content"][0]["text"] == "ann None"


@pytest.mark.parametrize("auth", [("ann", "secret"), (b"ann", b"secret"), signed, httpx.BasicAuth("a", "b")])
def test_what_httpx_takes_as_auth_is_taken(auth: object) -> None:
    assert HttpTransport("http://127.0.0.1:1/mcp", auth=auth).auth is auth  # type: ignore[arg-type]


@pytest.mark.parametrize("auth", ["Bearer x", ("ann",), ("ann", "secret", "more"), ("ann", 3), 3])
def test_anything_else_is_refused_saying_what_auth_takes(auth: object) -> None:
    with pytest.raises(TypeError, match=r"^auth takes an httpx\.Auth"):
        HttpTransport("http://127.0.0.1:1/mcp", auth=auth)  # type: ignore[arg-type]
