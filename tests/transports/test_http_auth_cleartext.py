"""Signing in to an MCP server over plain http (transports/http_auth.py): bearer tokens go
over TLS (RFC 6750 section 5.3; MCP basic/authorization, Communication Security), so the
client signs in only to https servers and to this machine, unless told that a private
network is trusted (``OAuth(plain_http="private")``). A real protected server and
authorization server on 127.0.0.1 (``support.mcp_authorization``); the MCP server's
address as the client sees it (10.1.2.3, 198.51.100.7, mcp.example.com) is carried to
127.0.0.1 by ``Carried``, a real socket under it, the Host header kept.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest

from mcp_elicit.errors import AuthorizationError
from mcp_elicit.transports.http_auth import MemoryTokenStore, OAuth
from mcp_elicit.transports.http_client import connect_http

from support.mcp_authorization import FollowRedirect, McpAuthorization, whoami_server
from support.procs import uvicorn_server

pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


class Carried(httpx.AsyncBaseTransport):
    """Sends a request for ``host`` to 127.0.0.1 (same port, same Host header), over a real
    connection; ``authorization`` lists the Authorization header of each such request."""

    def __init__(self, host: str) -> None:
        self.host = host
        self.inner = httpx.AsyncHTTPTransport()
        self.authorization: list[str | None] = []

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        if request.url.host == self.host:
            self.authorization.append(request.headers.get("authorization"))
            request = httpx.Request(
                request.method,
                request.url.copy_with(host="127.0.0.1"),
                headers=request.headers,  # its Host stays
                stream=request.stream,
                extensions=request.extensions,
            )
        return await self.inner.handle_async_request(request)

    async def aclose(self) -> None:
        await self.inner.aclose()


@pytest.fixture
async def site() -> AsyncIterator[McpAuthorization]:
    site = McpAuthorization(whoami_server(), allowed_hosts=("*",))
    silent = site.app

    async def app(scope: dict[str, Any], receive: Any, send: Any) -> None:
        async def unnamed(message: dict[str, Any]) -> None:  # a 401 that names no metadata URL
            if message["type"] == "http.response.start" and site.silent:  # type: ignore[attr-defined]
                headers = [(k, v) for k, v in message["headers"] if k.lower() != b"www-authenticate"]
                message = {**message, "headers": headers}
            await send(message)

        await silent(scope, receive, unnamed)

    site.silent = False  # type: ignore[attr-defined]
    async with uvicorn_server(app) as running:
        site.base = f"http://127.0.0.1:{running.port}"
        yield site


async def call(url: str, auth: OAuth, carried: Carried) -> str:
    async with httpx.AsyncClient(transport=carried, auth=auth, timeout=10) as http:
        async with connect_http(url, http_client=http, versions=["2026-07-28"], timeout=10) as client:
            result = await client.call_tool("whoami", {})
    return str(result["content"][0]["text"])


def elsewhere(site: McpAuthorization, host: str) -> str:
    return site.url.replace("127.0.0.1", host)


@pytest.mark.parametrize("silent", [False, True])
@pytest.mark.parametrize("host", ["10.1.2.3", "198.51.100.7", "mcp.example.com"])
async def test_a_plain_http_server_on_another_machine_gets_no_sign_in(
    site: McpAuthorization, host: str, silent: bool
) -> None:
    # silent: its 401 names no metadata URL, which is then looked for at the well-known
    # URLs of the server's own origin
    site.silent = silent  # type: ignore[attr-defined]
    carried = Carried(host)
    person = FollowRedirect()
    with pytest.raises(AuthorizationError, match=r"plain http .* https://") as raised:
        await call(elsewhere(site, host), OAuth(person, transport=carried), carried)  # type: ignore[arg-type]
    assert 'plain_http="private"' in str(raised.value)
    assert person.asked == []
    assert site.registrations == 0
    assert carried.authorization and set(carried.authorization) == {None}


async def test_tokens_stored_for_a_plain_http_server_are_not_sent(site: McpAuthorization) -> None:
    # signed in while it was allowed; the next OAuth, not allowed, must not send them
    carried = Carried("10.1.2.3")
    url = elsewhere(site, "10.1.2.3")
    store = MemoryTokenStore()
    first = OAuth(FollowRedirect(), transport=carried, store=store, plain_http="private")  # type: ignore[arg-type]
    assert await call(url, first, carried) == "hello"
    carried.authorization.clear()
    with pytest.raises(AuthorizationError, match="plain http"):
        await call(url, OAuth(FollowRedirect(), transport=carried, store=store), carried)  # type: ignore[arg-type]
    assert carried.authorization and set(carried.authorization) == {None}


async def test_a_private_network_server_is_signed_in_to_when_allowed(site: McpAuthorization) -> None:
    carried = Carried("10.1.2.3")
    person = FollowRedirect()
    auth = OAuth(person, transport=carried, plain_http="private")  # type: ignore[arg-type]
    assert await call(elsewhere(site, "10.1.2.3"), auth, carried) == "hello"
    assert person.asked == [site.base]
    assert any(a and a.startswith("Bearer ") for a in carried.authorization)


@pytest.mark.parametrize("host", ["198.51.100.7", "mcp.example.com"])
async def test_allowing_private_networks_does_not_allow_other_hosts(
    site: McpAuthorization, host: str
) -> None:
    carried = Carried(host)
    person = FollowRedirect()
    with pytest.raises(AuthorizationError, match="not a private-network address"):
        await call(elsewhere(site, host), OAuth(person, transport=carried, plain_http="private"), carried)  # type: ignore[arg-type]
    assert person.asked == []
    assert set(carried.authorization) == {None}


async def test_loopback_is_signed_in_to_over_plain_http(site: McpAuthorization) -> None:
    carried = Carried("localhost")
    assert (
        await call(elsewhere(site, "localhost"), OAuth(FollowRedirect(), transport=carried), carried)
        == "hello"
    )  # type: ignore[arg-type]


def test_plain_http_is_loopback_or_private() -> None:
    with pytest.raises(ValueError, match="plain_http"):
        OAuth(FollowRedirect(), plain_http="any")  # type: ignore[arg-type]
