"""The environment's proxies (transports/http_proxy_env.py) are the ones httpx's own client
takes: for each environment and URL below, the proxy ``ProxyRoutes`` names is the one an
``httpx.AsyncClient`` (``trust_env``) sent the request through, as the real forward proxies
(``support.forward_proxy``) saw; none where it went directly. Names are under ``.invalid``,
which no resolver answers, and addresses refuse: a request that goes directly gets nowhere.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator

import httpx
import pytest

from mcp_elicit.transports.http_proxy_env import ProxyRoutes

from support.forward_proxy import ForwardProxy, forward_proxy

pytestmark = pytest.mark.anyio

URLS = [
    "http://example.invalid/",
    "https://example.invalid/",
    "https://EXAMPLE.invalid/",
    "https://www.example.invalid/",
    "https://www.example.invalid:8443/",
    "http://wwwexample.invalid/",
    "http://127.0.0.1:9/",
    "https://127.0.0.2:9/",
    "http://[::1]:9/",
    "http://localhost:9/",
]

#: Each environment, its proxies written as "{http}", "{https}" or "{all}" ("{http-bare}":
#: the first without its scheme).
ENVIRONMENTS = [
    {"HTTP_PROXY": "{http}", "HTTPS_PROXY": "{https}"},
    {"ALL_PROXY": "{all}", "HTTPS_PROXY": "{https}"},
    {"https_proxy": "{https}", "HTTPS_PROXY": "{all}"},  # the lower case one wins
    {"HTTP_PROXY": "{http-bare}"},  # no scheme: http://
    {"ALL_PROXY": "{all}", "NO_PROXY": "example.invalid"},
    {"ALL_PROXY": "{all}", "NO_PROXY": ".example.invalid, 127.0.0.1"},
    {"ALL_PROXY": "{all}", "NO_PROXY": "*"},
    {"ALL_PROXY": "{all}", "NO_PROXY": "https://www.example.invalid,::1,127.0.0.0/8"},
    {"ALL_PROXY": "{all}", "NO_PROXY": "www.example.invalid:8443 , localhost"},
    {"HTTPS_PROXY": "{https}", "NO_PROXY": "EXAMPLE.INVALID"},
    {"NO_PROXY": "example.invalid"},
]
VARIABLES = ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "NO_PROXY")


@pytest.fixture
async def proxies() -> AsyncIterator[dict[str, ForwardProxy]]:
    async with contextlib.AsyncExitStack() as stack:
        yield {name: await stack.enter_async_context(forward_proxy({})) for name in ("http", "https", "all")}


def _set(
    environment: dict[str, str], proxies: dict[str, ForwardProxy], monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in VARIABLES:
        monkeypatch.delenv(name, raising=False)
        monkeypatch.delenv(name.lower(), raising=False)
    monkeypatch.delenv("REQUEST_METHOD", raising=False)
    values = {f"{{{which}}}": proxy.url for which, proxy in proxies.items()}
    values["{http-bare}"] = proxies["http"].url.removeprefix("http://")
    for name, value in environment.items():
        for placeholder, url in values.items():
            value = value.replace(placeholder, url)
        monkeypatch.setenv(name, value)


async def _httpx_sent(url: str, proxies: dict[str, ForwardProxy]) -> str | None:
    """Which proxy httpx's own client sent a request for ``url`` through, if any."""
    for proxy in proxies.values():
        proxy.seen.clear()
    async with httpx.AsyncClient(timeout=5) as client:
        with contextlib.suppress(httpx.HTTPError):
            await client.get(url)
    (used,) = [name for name, proxy in proxies.items() if proxy.seen] or [None]
    return used


@pytest.mark.parametrize("environment", ENVIRONMENTS, ids=[str(e) for e in ENVIRONMENTS])
async def test_each_url_goes_through_the_proxy_httpx_sends_it_through(
    environment: dict[str, str], proxies: dict[str, ForwardProxy], monkeypatch: pytest.MonkeyPatch
) -> None:
    _set(environment, proxies, monkeypatch)
    routes = ProxyRoutes.from_environment()
    by_url = {proxy.url: name for name, proxy in proxies.items()}
    ours = {}
    theirs = {}
    for url in URLS:
        route = routes.route(url)
        ours[url] = None if route is None else by_url[route.proxy]
        theirs[url] = await _httpx_sent(url, proxies)
    assert ours == theirs
    assert bool(routes) == any(used is not None for used in theirs.values())


def test_the_variable_named_is_the_one_set(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in VARIABLES:
        monkeypatch.delenv(name, raising=False)
        monkeypatch.delenv(name.lower(), raising=False)
    monkeypatch.setenv("https_proxy", "http://127.0.0.1:3128")
    monkeypatch.setenv("ALL_PROXY", "http://alice:secret@127.0.0.1:3129")
    routes = ProxyRoutes.from_environment()
    assert routes.route("https://example.invalid/") == routes.route("https://other.invalid:8443/")
    https = routes.route("https://example.invalid/")
    assert https is not None and (https.proxy, https.variable) == ("http://127.0.0.1:3128", "https_proxy")
    other = routes.route("http://example.invalid/")
    assert other is not None and (other.proxy, other.variable) == (
        "http://alice:secret@127.0.0.1:3129",
        "ALL_PROXY",
    )
    assert routes


def test_no_environment_names_no_proxy(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in VARIABLES:
        monkeypatch.delenv(name, raising=False)
        monkeypatch.delenv(name.lower(), raising=False)
    routes = ProxyRoutes.from_environment()
    assert not routes and routes.route("https://example.invalid/") is None
