"""Which way the sign-in takes for a URL (``transports.http_proxy_client``) is the way httpx's
own client sends it whenever that way is a proxy, and directly (the flow's checked
connection) whenever it is not: compared, URL by URL, with ``httpx.AsyncClient``'s choice."""

from __future__ import annotations

from collections.abc import Callable

import httpx
import pytest

from mcp_elicit.transports.http_proxy_client import ClientRoutes

pytestmark = pytest.mark.anyio

VARIABLES = ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "NO_PROXY")
PROXY = "http://127.0.0.1:3128"

URLS = [
    "https://mcp.example.com/mcp",
    "https://auth.example.com/token",
    "https://example.com/",
    "http://example.com:8443/",
    "https://example.com:8443/",
    "https://internal.corp/",
    "https://10.0.0.7/",
]


def proxied() -> httpx.AsyncHTTPTransport:
    return httpx.AsyncHTTPTransport(proxy=PROXY)


#: Clients of every shape: the proxy given, mounted by pattern, with mounts of None or of a
#: transport that is no proxy, as the client's own transport.
CLIENTS: dict[str, Callable[[], httpx.AsyncClient]] = {
    "proxy=": lambda: httpx.AsyncClient(proxy=PROXY),
    "all:// mounted, one host direct": lambda: httpx.AsyncClient(
        mounts={"all://": proxied(), "all://auth.example.com": None}
    ),
    "a wildcard and a port": lambda: httpx.AsyncClient(
        mounts={"https://*.example.com": proxied(), "all://example.com:8443": proxied()}
    ),
    "a plain transport mounted": lambda: httpx.AsyncClient(
        mounts={"all://": proxied(), "https://*.example.com": httpx.AsyncHTTPTransport(retries=1)}
    ),
    "an application mounted": lambda: httpx.AsyncClient(
        mounts={"https://": httpx.ASGITransport(app=lambda *_: None), "http://": proxied()}
    ),
    "transport= a proxy": lambda: httpx.AsyncClient(transport=proxied()),
    "transport= a proxy, one host mounted plain, one None": lambda: httpx.AsyncClient(
        transport=proxied(),
        mounts={"all://auth.example.com": httpx.AsyncHTTPTransport(), "all://example.com": None},
    ),
    "transport= plain, a proxy mounted": lambda: httpx.AsyncClient(
        transport=httpx.AsyncHTTPTransport(), mounts={"all://mcp.example.com": proxied()}
    ),
}


@pytest.fixture(autouse=True)
def no_proxy(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in VARIABLES:
        monkeypatch.delenv(name, raising=False)
        monkeypatch.delenv(name.lower(), raising=False)


def is_proxy(transport: httpx.AsyncBaseTransport) -> bool:
    return (
        isinstance(transport, httpx.AsyncHTTPTransport) and type(transport._pool).__name__ == "AsyncHTTPProxy"
    )


@pytest.mark.parametrize("shape", list(CLIENTS))
async def test_the_sign_in_takes_a_proxy_exactly_where_httpx_does(shape: str) -> None:
    client = CLIENTS[shape]()
    routes = ClientRoutes.of(client)
    for url in URLS:
        chosen = client._transport_for_url(httpx.URL(url))
        route = routes.route(url)
        if is_proxy(chosen):
            assert route is chosen, (shape, url)  # the client's own proxy, the same transport
        else:
            assert route is None, (shape, url)  # directly: the flow connects, checked
    await client.aclose()
