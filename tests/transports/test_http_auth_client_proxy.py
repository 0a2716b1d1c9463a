"""The client's sign-in (transports/http_auth.py) goes where the MCP client's own HTTP client
sends the MCP requests (``transports.http_proxy_client``): through the proxy that client is
given (``proxy=``, ``mounts=``), and through the environment's only when that client trusts
the environment (``trust_env``). Where it goes directly, every name is still looked up once
and checked; through a proxy, the proxy resolves, and its address is never taken for the
server's.

A real forward proxy (``support.forward_proxy``) on 127.0.0.1 knows the test's names, as a
company's proxy knows the internet's; the machine itself knows none of them (the flow's
resolver is the test's DNS). The server is the named https site of ``support.named_site``.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from pathlib import Path

import httpx
import pytest

from mcp_elicit.errors import AuthorizationError
from mcp_elicit.transports.http_auth import OAuth
from mcp_elicit.transports.http_client import connect_http

from support.forward_proxy import ForwardProxy, clear_proxy_environment, forward_proxy
from support.named_site import Browser, Dns, Site, in_process, named_site, trust_names

pytestmark = pytest.mark.anyio


@pytest.fixture(autouse=True)
def no_proxy_yet(monkeypatch: pytest.MonkeyPatch) -> None:
    clear_proxy_environment(monkeypatch)


#: What the proxy knows: the test's internet.
INTERNET = {"mcp.example.com": "127.0.0.1", "auth.example.net": "127.0.0.1"}


@pytest.fixture
async def site(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> AsyncIterator[Site]:
    async with named_site(trust_names(tmp_path, monkeypatch)) as site:
        yield site


@pytest.fixture
async def proxy() -> AsyncIterator[ForwardProxy]:
    async with forward_proxy(INTERNET) as proxy:
        yield proxy


def person() -> Browser:
    """The person's browser, which finds the authorization server its own way."""
    return Browser(Dns(auth_example_net=["127.0.0.1"], mcp_example_com=["127.0.0.1"]))


def tunnels(proxy: ForwardProxy, site: Site) -> set[str]:
    """The hosts the proxy opened a tunnel to."""
    return {target.removesuffix(f":{site.port}") for method, target in proxy.seen if method == "CONNECT"}


async def whoami(url: str, http: httpx.AsyncClient) -> str:
    """The text ``whoami`` answers at ``url`` over ``http`` (its auth signs in)."""
    try:
        async with http, connect_http(url, http_client=http, versions=["2026-07-28"], timeout=10) as client:
            result = await client.call_tool("whoami", {})
    finally:
        assert isinstance(http.auth, OAuth)
        await http.auth.aclose()  # the flow's own HTTP client
    return str(result["content"][0]["text"])


#: The ways a caller gives its HTTP client a proxy for every URL.
PROXIED: dict[str, Callable[[str, OAuth], httpx.AsyncClient]] = {
    "proxy=": lambda proxy, auth: httpx.AsyncClient(proxy=proxy, auth=auth),
    "mounts=": lambda proxy, auth: httpx.AsyncClient(
        mounts={"all://": httpx.AsyncHTTPTransport(proxy=proxy)}, auth=auth
    ),
    "proxy= without trust_env": lambda proxy, auth: httpx.AsyncClient(  # SSL_CERT_FILE read now
        proxy=proxy, auth=auth, trust_env=False, verify=httpx.create_ssl_context()
    ),
    "transport=": lambda proxy, auth: httpx.AsyncClient(
        transport=httpx.AsyncHTTPTransport(proxy=proxy), auth=auth
    ),
}


@pytest.mark.parametrize("given", list(PROXIED))
async def test_the_sign_in_goes_through_the_proxy_the_client_is_given(
    site: Site, proxy: ForwardProxy, given: str
) -> None:
    # the environment names no proxy; the caller's client has one, the only way out (this
    # machine resolves no name of the internet): the sign-in's requests take it too
    site.auth.base = f"https://auth.example.net:{site.port}"
    dns = Dns()
    browser = person()
    http = PROXIED[given](proxy.url, OAuth(browser, resolver=dns))
    assert await whoami(site.url("mcp.example.com"), http) == "hello"
    assert browser.asked == [site.auth.base]
    assert dns.asked == []  # the proxy looked the names up, not the flow
    assert tunnels(proxy, site) == {"mcp.example.com", "auth.example.net"}
    assert (f"auth.example.net:{site.port}", "/token") in site.arrived
    assert (f"auth.example.net:{site.port}", "/.well-known/oauth-authorization-server") in site.arrived


async def test_a_host_the_clients_proxy_is_not_for_is_checked_and_the_proxy_is_not_the_server(
    site: Site, proxy: ForwardProxy
) -> None:
    # the caller's proxy is for the MCP server only: the MCP answers come from 127.0.0.1 (the
    # proxy's end), which must not make a server on the internet one on this machine; the
    # authorization server, reached directly, is looked up and refused where it resolves
    site.auth.base = f"https://auth.example.net:{site.port}"
    dns = Dns(auth_example_net=["127.0.0.1"])
    through = httpx.AsyncHTTPTransport(proxy=proxy.url)
    http = httpx.AsyncClient(mounts={"all://mcp.example.com": through}, auth=OAuth(person(), resolver=dns))
    with pytest.raises(AuthorizationError) as refused:
        await whoami(site.url("mcp.example.com"), http)
    assert "'auth.example.net' resolves to 127.0.0.1, on this machine" in str(refused.value)
    assert dns.asked == ["auth.example.net"]
    assert "auth.example.net" not in site.hosts()
    assert tunnels(proxy, site) == {"mcp.example.com"}


#: Mounts that are no proxy: each would connect the sign-in with no check of the flow's.
NOT_PROXIES: dict[str, Callable[[Site], httpx.AsyncBaseTransport]] = {
    "a transport without a proxy": lambda site: httpx.AsyncHTTPTransport(retries=1),
    "an application in process": in_process,
}


@pytest.mark.parametrize("mounted", list(NOT_PROXIES))
async def test_a_mount_that_is_no_proxy_leaves_the_sign_in_checked(site: Site, mounted: str) -> None:
    # the caller's client mounts a transport of its own for the authorization server's host,
    # no proxy: the flow connects there itself, the name looked up and refused where it
    # resolves, never over the mount, which would reach this machine unchecked
    site.auth.base = f"https://auth.example.net:{site.port}"
    dns = Dns(mcp_example_com=["127.0.0.1"], auth_example_net=["127.0.0.1"])
    http = httpx.AsyncClient(
        transport=in_process(site),
        mounts={"all://auth.example.net": NOT_PROXIES[mounted](site)},
        auth=OAuth(person(), resolver=dns),
    )
    with pytest.raises(AuthorizationError) as refused:
        await whoami(site.url("mcp.example.com"), http)
    assert "'auth.example.net' resolves to 127.0.0.1, on this machine" in str(refused.value)
    assert "auth.example.net" in dns.asked
    assert "auth.example.net" not in site.hosts()


async def test_a_client_whose_own_transport_is_a_proxy_does_not_make_the_server_look_at_home(
    site: Site, proxy: ForwardProxy
) -> None:
    # the client's own transport is a proxy on 127.0.0.1 (the MCP server's answers come from
    # there); only the authorization server's host is mounted directly: it is looked up,
    # and refused where it resolves, the server being on the internet whatever the proxy's
    # address says
    site.auth.base = f"https://auth.example.net:{site.port}"
    dns = Dns(auth_example_net=["127.0.0.1"])
    http = httpx.AsyncClient(
        transport=httpx.AsyncHTTPTransport(proxy=proxy.url),
        mounts={"all://auth.example.net": httpx.AsyncHTTPTransport()},
        auth=OAuth(person(), resolver=dns),
    )
    with pytest.raises(AuthorizationError) as refused:
        await whoami(site.url("mcp.example.com"), http)
    assert "'auth.example.net' resolves to 127.0.0.1, on this machine" in str(refused.value)
    assert "auth.example.net" not in site.hosts()
    assert tunnels(proxy, site) == {"mcp.example.com"}


class Wrapping(httpx.AsyncBaseTransport):
    """A transport of the caller's own around another (logging, retrying): where it
    connects is not known from outside."""

    def __init__(self, inner: httpx.AsyncBaseTransport) -> None:
        self.inner = inner

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        return await self.inner.handle_async_request(request)

    async def aclose(self) -> None:
        await self.inner.aclose()


async def test_a_transport_of_ones_own_mounted_for_the_server_does_not_make_it_look_at_home(
    site: Site, proxy: ForwardProxy
) -> None:
    # the caller's own transport for the MCP server wraps a proxy on 127.0.0.1: its answers'
    # address is the proxy's, never taken for the server's; the authorization server,
    # reached directly, is looked up and refused where it resolves
    site.auth.base = f"https://auth.example.net:{site.port}"
    dns = Dns(mcp_example_com=["127.0.0.1"], auth_example_net=["127.0.0.1"])  # the flow goes directly
    through = Wrapping(httpx.AsyncHTTPTransport(proxy=proxy.url))
    http = httpx.AsyncClient(mounts={"all://mcp.example.com": through}, auth=OAuth(person(), resolver=dns))
    with pytest.raises(AuthorizationError) as refused:
        await whoami(site.url("mcp.example.com"), http)
    assert "'auth.example.net' resolves to 127.0.0.1, on this machine" in str(refused.value)
    assert "auth.example.net" not in site.hosts()


@pytest.mark.parametrize("variable", ["HTTPS_PROXY", "ALL_PROXY"])
async def test_a_client_that_does_not_trust_the_environment_keeps_the_sign_in_off_its_proxy(
    site: Site, proxy: ForwardProxy, monkeypatch: pytest.MonkeyPatch, variable: str
) -> None:
    # trust_env=False: no proxy of the environment's for the MCP requests, none for the
    # sign-in either; its names are looked up here and checked (the authorization server is
    # the server's own host, taken wherever it is)
    site.auth.base = f"https://mcp.example.com:{site.port}"
    monkeypatch.setenv(variable, proxy.url)
    dns = Dns(mcp_example_com=["127.0.0.1"])
    http = httpx.AsyncClient(transport=in_process(site), trust_env=False, auth=OAuth(person(), resolver=dns))
    assert await whoami(site.url("mcp.example.com"), http) == "hello"
    assert proxy.seen == []
    assert "mcp.example.com" in dns.asked
    assert (f"mcp.example.com:{site.port}", "/token") in site.arrived


async def test_a_client_trusting_the_environment_takes_the_sign_in_through_its_proxy(
    site: Site, proxy: ForwardProxy, monkeypatch: pytest.MonkeyPatch
) -> None:
    # the same client, trusting the environment (httpx's default): its proxy is taken
    site.auth.base = f"https://mcp.example.com:{site.port}"
    monkeypatch.setenv("HTTPS_PROXY", proxy.url)
    dns = Dns(mcp_example_com=["127.0.0.1"])
    http = httpx.AsyncClient(transport=in_process(site), auth=OAuth(person(), resolver=dns))
    assert await whoami(site.url("mcp.example.com"), http) == "hello"
    assert tunnels(proxy, site) == {"mcp.example.com"}
    assert dns.asked == []


async def test_the_clients_proxy_refusing_the_sign_in_is_named(site: Site, proxy: ForwardProxy) -> None:
    site.auth.base = f"https://auth.example.net:{site.port}"
    proxy.refuse, proxy.refused = 403, ("auth.example.net",)
    http = httpx.AsyncClient(proxy=proxy.url, auth=OAuth(person(), resolver=Dns()))
    with pytest.raises(AuthorizationError) as refused:
        await whoami(site.url("mcp.example.com"), http)
    assert (
        "the HTTP client's proxy (its proxy= or mounts=, or the environment's it took) refused "
        f"auth.example.net:{site.port} (403 Forbidden)" in str(refused.value)
    )
    assert "auth.example.net" not in site.hosts()


async def test_with_auth_alone_the_environments_proxy_is_named_with_its_variable(
    site: Site, proxy: ForwardProxy, monkeypatch: pytest.MonkeyPatch
) -> None:
    # connect_http(auth=) makes the client itself, with httpx's defaults: the sign-in takes
    # the environment's proxy on its own, and says which variable named the one refusing
    site.auth.base = f"https://auth.example.net:{site.port}"
    proxy.refuse, proxy.refused = 403, ("auth.example.net",)
    monkeypatch.setenv("HTTPS_PROXY", proxy.url)
    auth = OAuth(person(), resolver=Dns())
    try:
        with pytest.raises(AuthorizationError) as refused:
            async with connect_http(site.url("mcp.example.com"), auth=auth, timeout=10) as client:
                await client.call_tool("whoami", {})
    finally:
        await auth.aclose()
    message = str(refused.value)
    assert (
        f"the proxy {proxy.url} (HTTPS_PROXY) refused to open a tunnel to auth.example.net:{site.port}"
        in message
    )
    assert tunnels(proxy, site) == {"mcp.example.com", "auth.example.net"}
