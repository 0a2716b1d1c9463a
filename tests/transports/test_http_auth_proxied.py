"""The client's sign-in (transports/http_auth.py) behind a proxy the environment names
(``HTTPS_PROXY``, ``HTTP_PROXY``, ``ALL_PROXY``, ``NO_PROXY``): the flow's own requests go
where httpx's client sends the MCP requests, through the proxy (``transports.http_proxy``),
and what it cannot check there (where a name resolves) is the proxy's; what it can (the
URLs) it still does, and the proxy's address is never taken for the server's.

A real forward proxy (``support.forward_proxy``) on 127.0.0.1 knows the test's names, as a
company's proxy knows the internet's; the machine itself knows none of them (the test's DNS
answers nothing, or the system's, which has never heard of them). The server is the named
https site of ``support.named_site``.
"""

from __future__ import annotations

import asyncio
import base64
import concurrent.futures
import contextlib
import socket
import traceback
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest

from mcp_elicit.cli.check import run_check
from mcp_elicit.cli.sign_in import SignIn
from mcp_elicit.cli.targets import Target
from mcp_elicit.errors import AuthorizationError, CliError
from mcp_elicit.transports.http_auth import OAuth
from mcp_elicit.transports.http_client import connect_http
from mcp_elicit.transports.http_documents import post
from mcp_elicit.transports.http_pinned import PinnedBackend, PinnedTransport
from mcp_elicit.transports.http_proxy import through_environment

from support.forward_proxy import ForwardProxy, clear_proxy_environment, forward_proxy, mute_proxy
from support.mcp_authorization import FollowRedirect, McpAuthorization, whoami_server
from support.named_site import (
    Browser,
    Dns,
    Site,
    allow_all,
    call,
    in_process,
    named_site,
    reaching,
    trust_names,
)
from support.procs import uvicorn_server

pytestmark = pytest.mark.anyio


@pytest.fixture(autouse=True)
def no_proxy_yet(monkeypatch: pytest.MonkeyPatch) -> None:
    clear_proxy_environment(monkeypatch)


#: What the proxy knows: the test's internet.
INTERNET = {"mcp.example.com": "127.0.0.1", "auth.example.net": "127.0.0.1", "localhost": "127.0.0.1"}


@pytest.fixture
def certificate(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[str, str]:
    return trust_names(tmp_path, monkeypatch)


@pytest.fixture
async def site(certificate: tuple[str, str]) -> AsyncIterator[Site]:
    async with named_site(certificate) as site:
        yield site


@pytest.fixture
async def proxy() -> AsyncIterator[ForwardProxy]:
    async with forward_proxy(INTERNET) as proxy:
        yield proxy


@contextlib.asynccontextmanager
async def plain_site(host: str) -> AsyncIterator[tuple[McpAuthorization, int]]:
    """The authorization site over plain http on 127.0.0.1, its URLs naming ``host``; and its port."""
    auth = McpAuthorization(whoami_server(), allowed_hosts=("*",))
    async with uvicorn_server(auth.app) as running:
        auth.base = f"http://{host}:{running.port}"
        yield auth, running.port


def person() -> Browser:
    """The person's browser, which finds the authorization server its own way."""
    return Browser(Dns(auth_example_net=["127.0.0.1"], mcp_example_com=["127.0.0.1"]))


def tunnels(proxy: ForwardProxy, site: Site) -> set[str]:
    """The hosts the proxy opened a tunnel to."""
    return {target.removesuffix(f":{site.port}") for method, target in proxy.seen if method == "CONNECT"}


@pytest.mark.parametrize("variable", ["HTTPS_PROXY", "https_proxy", "ALL_PROXY"])
async def test_the_sign_in_goes_through_the_environments_proxy_and_directly_without_one(
    site: Site, proxy: ForwardProxy, monkeypatch: pytest.MonkeyPatch, variable: str
) -> None:
    url = site.url("mcp.example.com")
    # no proxy named: every name looked up here, checked, and connected to directly
    site.auth.base = f"https://mcp.example.com:{site.port}"
    dns = Dns(mcp_example_com=["127.0.0.1"])
    assert await call(url, OAuth(person(), resolver=dns), in_process(site)) == "hello"
    assert dns.asked and proxy.seen == []

    # a proxy named: the only way out, as a company's is (this machine resolves no name of
    # the internet); the MCP requests and the sign-in's all go through it
    site.auth.base = f"https://auth.example.net:{site.port}"
    monkeypatch.setenv(variable, proxy.url)
    dns = Dns()
    browser = person()
    assert await call(url, OAuth(browser, resolver=dns)) == "hello"
    assert browser.asked == [site.auth.base]
    assert dns.asked == []  # the proxy looked the names up, not the flow
    assert tunnels(proxy, site) == {"mcp.example.com", "auth.example.net"}
    assert (f"auth.example.net:{site.port}", "/token") in site.arrived
    assert (f"mcp.example.com:{site.port}", "/.well-known/oauth-protected-resource/mcp") in site.arrived

    # a transport given is used as it is, proxy or not
    proxy.seen.clear()
    dns = Dns(mcp_example_com=["127.0.0.1"], auth_example_net=["127.0.0.1"])
    assert await call(url, OAuth(person(), transport=reaching(dns)), in_process(site)) == "hello"
    assert proxy.seen == [] and "auth.example.net" in dns.asked


async def test_the_proxys_address_is_not_taken_for_the_servers(
    site: Site, proxy: ForwardProxy, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The MCP requests go through the proxy, so their answers come from 127.0.0.1 (the
    # proxy's end of the connection): that says nothing of where the server is, and must not
    # make a server on the internet one on this machine, whose sign-in may go anywhere.
    site.auth.base = f"https://auth.example.net:{site.port}"
    monkeypatch.setenv("HTTPS_PROXY", proxy.url)
    monkeypatch.setenv("NO_PROXY", "auth.example.net")  # connected to directly, so checked
    dns = Dns(auth_example_net=["127.0.0.1"])
    with pytest.raises(AuthorizationError) as refused:
        await call(site.url("mcp.example.com"), OAuth(person(), resolver=dns))
    assert "'auth.example.net' resolves to 127.0.0.1, on this machine" in str(refused.value)
    assert "auth.example.net" not in site.hosts()
    assert tunnels(proxy, site) == {"mcp.example.com"}


async def test_a_server_no_proxy_names_is_judged_by_the_address_it_answered_from(
    site: Site, proxy: ForwardProxy, monkeypatch: pytest.MonkeyPatch
) -> None:
    # a proxy named, but not for the server: its answer came from its own address (here
    # 127.0.0.1, a company's server on this network), which still makes it one at home,
    # whose authorization server there is reached (one elsewhere would have it refused)
    site.auth.base = f"https://auth.example.net:{site.port}"
    monkeypatch.setenv("HTTPS_PROXY", proxy.url)
    monkeypatch.setenv("NO_PROXY", "mcp.example.com,auth.example.net")
    dns = Dns(mcp_example_com=["127.0.0.1"], auth_example_net=["127.0.0.1"])
    assert await call(site.url("mcp.example.com"), OAuth(person(), resolver=dns), reaching(dns)) == "hello"
    assert (f"auth.example.net:{site.port}", "/token") in site.arrived
    assert proxy.seen == []


@pytest.mark.parametrize("plain_http", ["loopback", "private"])
async def test_a_proxy_on_this_machine_does_not_open_plain_http_to_a_server_elsewhere(
    proxy: ForwardProxy, monkeypatch: pytest.MonkeyPatch, plain_http: str
) -> None:
    # plain http to a server on the internet, through a proxy on 127.0.0.1: no token for it
    # (the rule reads the URL, never the address an answer came from)
    async with plain_site("mcp.example.com") as (auth, port):
        monkeypatch.setenv("HTTP_PROXY", proxy.url)
        person = FollowRedirect()
        with pytest.raises(AuthorizationError, match="is plain http to") as refused:
            async with connect_http(
                auth.url, auth=OAuth(person, plain_http=plain_http), timeout=10
            ) as client:
                await client.call_tool("whoami", {})
    assert "its tokens would cross the network unencrypted" in str(refused.value)
    assert person.asked == [] and auth.registrations == 0
    assert ("POST", f"http://mcp.example.com:{port}/mcp") in proxy.seen  # it went through the proxy


@pytest.mark.parametrize(
    ("no_proxy", "proxied"),
    [
        ("mcp.example.com", {"auth.example.net"}),
        ("example.com", {"auth.example.net"}),  # the domain and every name under it
        (".example.com", {"auth.example.net"}),  # the names under it
        (".mcp.example.com", {"auth.example.net", "mcp.example.com"}),  # ... and not itself
        ("localhost, MCP.Example.COM", {"auth.example.net"}),
        ("https://mcp.example.com", {"auth.example.net"}),  # for that scheme
        ("http://mcp.example.com", {"auth.example.net", "mcp.example.com"}),
        ("ample.com,www.mcp.example.com", {"auth.example.net", "mcp.example.com"}),
        ("127.0.0.1", {"auth.example.net", "mcp.example.com"}),  # an address is the URL's host
    ],
)
async def test_no_proxy_leaves_out_what_httpx_leaves_out(
    site: Site, proxy: ForwardProxy, monkeypatch: pytest.MonkeyPatch, no_proxy: str, proxied: set[str]
) -> None:
    site.auth.base = f"https://auth.example.net:{site.port}"
    monkeypatch.setenv("HTTPS_PROXY", proxy.url)
    monkeypatch.setenv("NO_PROXY", no_proxy)
    dns = Dns(mcp_example_com=["127.0.0.1"])  # the server's own host, taken wherever it is
    assert await call(site.url("mcp.example.com"), OAuth(person(), resolver=dns), in_process(site)) == "hello"
    assert tunnels(proxy, site) == proxied
    assert ("mcp.example.com" in dns.asked) == ("mcp.example.com" not in proxied)
    assert "auth.example.net" not in dns.asked


async def test_http_proxy_carries_a_plain_http_sign_in_in_absolute_form(
    proxy: ForwardProxy, monkeypatch: pytest.MonkeyPatch
) -> None:
    # a server on this machine by name, over plain http: through HTTP_PROXY as httpx sends
    # its MCP requests, the whole URL on the request line; not to the resolver given
    async with plain_site("localhost") as (auth, port):
        monkeypatch.setenv("HTTP_PROXY", proxy.url)
        dns = Dns()
        async with connect_http(auth.url, auth=OAuth(FollowRedirect(), resolver=dns), timeout=10) as client:
            result = await client.call_tool("whoami", {})
    assert result["content"][0]["text"] == "hello"
    assert dns.asked == []
    assert ("GET", f"http://localhost:{port}/.well-known/oauth-protected-resource/mcp") in proxy.seen
    assert ("POST", f"http://localhost:{port}/token") in proxy.seen


# ---- when the proxy stands in the way ------------------------------------------------------


def _shown(proxy: ForwardProxy) -> str:
    return f"the proxy {proxy.url}"


async def test_a_proxy_that_refuses_the_tunnel_is_named(
    site: Site, proxy: ForwardProxy, monkeypatch: pytest.MonkeyPatch
) -> None:
    site.auth.base = f"https://auth.example.net:{site.port}"
    proxy.refuse, proxy.refused = 403, ("auth.example.net",)
    monkeypatch.setenv("HTTPS_PROXY", proxy.url)
    with pytest.raises(AuthorizationError) as refused:
        await call(site.url("mcp.example.com"), OAuth(person()), in_process(site))
    message = str(refused.value)
    assert (
        f"{_shown(proxy)} (HTTPS_PROXY) refused to open a tunnel to auth.example.net:{site.port}" in message
    )
    assert "HTTP 403" in message and "NO_PROXY" in message
    assert "auth.example.net" not in site.hosts()


@pytest.mark.parametrize(
    ("credentials", "said"),
    [
        ("", "asks for a user name and password: give them in HTTPS_PROXY, as user:password@"),
        ("alice:wrong-secret@", "did not take the user name and password in HTTPS_PROXY"),
        ("alice:s%40me@", None),  # taken: the sign-in goes through
    ],
)
async def test_a_proxy_that_wants_credentials(
    site: Site, proxy: ForwardProxy, monkeypatch: pytest.MonkeyPatch, credentials: str, said: str | None
) -> None:
    site.auth.base = f"https://auth.example.net:{site.port}"
    proxy.credentials = ("alice", "s@me")
    monkeypatch.setenv("HTTPS_PROXY", proxy.url.replace("://", f"://{credentials}"))
    url = site.url("mcp.example.com")
    if said is None:
        assert await call(url, OAuth(person()), in_process(site)) == "hello"
        assert tunnels(proxy, site) == {"mcp.example.com", "auth.example.net"}
        return
    with pytest.raises(AuthorizationError) as refused:
        await call(url, OAuth(person()), in_process(site))
    message = str(refused.value)
    assert f"{_shown(proxy)} (HTTPS_PROXY) refused to open a tunnel to mcp.example.com:{site.port}" in message
    assert "HTTP 407" in message and said in message
    assert "alice" not in message and "secret" not in message


async def test_a_proxy_that_wants_credentials_for_plain_http_is_named(
    proxy: ForwardProxy, monkeypatch: pytest.MonkeyPatch
) -> None:
    # absolute form: the 407 is the proxy's answer to the request itself, not to a CONNECT;
    # the MCP requests go directly (NO_PROXY names nothing they use: a transport of their own)
    async with plain_site("localhost") as (auth, port):
        proxy.credentials = ("alice", "s@me")
        monkeypatch.setenv("HTTP_PROXY", proxy.url)
        direct = reaching(Dns(localhost=["127.0.0.1"]))
        with pytest.raises(AuthorizationError) as refused:
            await call(auth.url, OAuth(FollowRedirect(), resolver=Dns()), direct)
    message = str(refused.value)
    assert f"{_shown(proxy)} (HTTP_PROXY) refused to forward the request to localhost:{port}" in message
    assert "HTTP 407" in message and "asks for a user name and password: give them in HTTP_PROXY" in message


async def test_a_token_request_the_proxy_refuses_names_it(
    proxy: ForwardProxy, monkeypatch: pytest.MonkeyPatch
) -> None:
    # a POST of the flow (registration, token) says what the proxy did, as a GET does
    proxy.refuse = 403
    monkeypatch.setenv("HTTPS_PROXY", proxy.url)
    flow = through_environment(PinnedTransport(PinnedBackend(allow_all, Dns())))
    async with httpx.AsyncClient(transport=flow) as http:
        with pytest.raises(AuthorizationError) as refused:
            await post(http, "https://auth.example.net/token", data={"grant_type": "client_credentials"})
    message = str(refused.value)
    assert message.startswith("could not reach https://auth.example.net/token (ProxyError: ")
    assert (
        f"{_shown(proxy)} (HTTPS_PROXY) refused to open a tunnel to auth.example.net:443 (HTTP 403" in message
    )
    assert proxy.seen == [("CONNECT", "auth.example.net:443")]


@contextlib.contextmanager
def closed_port() -> Iterator[int]:
    """A port on 127.0.0.1 bound but not listening: a connection to it is refused."""
    with socket.socket() as bound:
        bound.bind(("127.0.0.1", 0))
        yield bound.getsockname()[1]


@pytest.mark.parametrize("rest", ["", "/", "/route/a?key=hunter2", "?key=hunter2#part"])
async def test_a_proxy_that_cannot_be_reached_is_named(
    site: Site, monkeypatch: pytest.MonkeyPatch, rest: str
) -> None:
    # named by its scheme, host and port: its credentials, path and query left out
    site.auth.base = f"https://auth.example.net:{site.port}"
    with closed_port() as port:
        monkeypatch.setenv("ALL_PROXY", f"http://alice:secret@127.0.0.1:{port}{rest}")
        with pytest.raises(AuthorizationError) as refused:
            await call(site.url("mcp.example.com"), OAuth(person()), in_process(site))
    message = str(refused.value)
    assert f"cannot connect to the proxy http://127.0.0.1:{port} (ALL_PROXY)" in message
    assert "alice" not in message and "secret" not in message
    assert "route" not in message and "hunter2" not in message and "part" not in message
    assert site.arrived == []


async def test_the_command_line_signs_in_through_the_proxy(
    site: Site, proxy: ForwardProxy, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    # mcp-elicit check behind a company's proxy, nothing injected (the system's resolver,
    # which knows none of these names): the connection and the sign-in go through the proxy
    site.auth.base = f"https://auth.example.net:{site.port}"
    monkeypatch.setenv("HTTPS_PROXY", proxy.url)
    loop = asyncio.get_running_loop()
    browsing: list[concurrent.futures.Future[None]] = []
    dns = Dns(auth_example_net=["127.0.0.1"])

    async def browse(url: str) -> None:  # the person's browser: approved, and back to the callback
        async with httpx.AsyncClient(transport=reaching(dns), follow_redirects=True) as http:
            assert (await http.get(url)).status_code == 200

    def open_url(url: str) -> bool:
        browsing.append(asyncio.run_coroutine_threadsafe(browse(url), loop))
        return True

    async def consent(url: str, issuer: str) -> bool:
        return True

    sign_in = SignIn(tmp_path / "tokens.json", consent=consent, open_url=open_url)
    report = await run_check(Target(url=site.url("mcp.example.com")), sign_in=sign_in)
    assert report.exit_code == 0, report.to_json()
    assert report.authorization == {"issuer": site.auth.base, "signed_in_now": True, "token_type": "Bearer"}
    assert [tool.name for tool in report.tools] == ["whoami"]
    assert tunnels(proxy, site) == {"mcp.example.com", "auth.example.net"}
    assert (f"auth.example.net:{site.port}", "/token") in site.arrived
    await asyncio.wrap_future(browsing[0])  # the browser saw the callback's page


async def test_the_command_line_names_the_proxy_that_refused_the_sign_in(
    site: Site, proxy: ForwardProxy, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    # mcp-elicit check, nothing injected: the system's resolver, the environment's proxy
    site.auth.base = f"https://auth.example.net:{site.port}"
    proxy.refuse, proxy.refused = 403, ("auth.example.net",)
    monkeypatch.setenv("HTTPS_PROXY", proxy.url)
    asked: list[str] = []

    async def consent(url: str, issuer: str) -> bool:
        asked.append(issuer)
        return True

    sign_in = SignIn(tmp_path / "tokens.json", consent=consent, open_url=lambda url: False)
    with pytest.raises(CliError) as failed:
        await run_check(Target(url=site.url("mcp.example.com")), sign_in=sign_in)
    assert failed.value.exit_code == 3
    message = str(failed.value)
    assert f"{_shown(proxy)} (HTTPS_PROXY) refused to open a tunnel to auth.example.net" in message
    assert "Traceback" not in message and asked == []


async def test_the_proxys_password_is_in_no_trace_of_its_failure(
    site: Site, proxy: ForwardProxy, monkeypatch: pytest.MonkeyPatch
) -> None:
    # an error reporter that records each frame's variables (as Sentry's does) formats
    # them with repr: the proxy's route among them shows no password
    proxy.credentials = ("alice", "s@me")
    monkeypatch.setenv("HTTPS_PROXY", proxy.url.replace("://", "://alice:wrong-secret@"))
    flow = through_environment(PinnedTransport(PinnedBackend(allow_all, Dns())))
    async with httpx.AsyncClient(transport=flow) as http:
        with pytest.raises(httpx.ProxyError) as refused:
            await http.get(site.url("mcp.example.com"))
    trace = "".join(traceback.TracebackException.from_exception(refused.value, capture_locals=True).format())
    assert "route = ProxyRoute(" in trace  # the frame of RoutedTransport.handle_async_request
    assert "wrong-secret" not in trace
    assert base64.b64encode(b"alice:wrong-secret").decode() not in trace


async def test_a_407_from_the_server_through_a_tunnel_is_the_servers(
    certificate: tuple[str, str], proxy: ForwardProxy, monkeypatch: pytest.MonkeyPatch
) -> None:
    # through a tunnel the proxy's only answer is to the CONNECT; what comes back inside it
    # is the server's, 407 included, and is not reworded as the proxy's refusal
    async def app(scope: dict[str, Any], receive: Any, send: Any) -> None:
        await send({"type": "http.response.start", "status": 407, "headers": [(b"content-length", b"0")]})
        await send({"type": "http.response.body", "body": b""})

    monkeypatch.setenv("HTTPS_PROXY", proxy.url)
    async with uvicorn_server(app, tls=certificate) as running:
        flow = through_environment(PinnedTransport(PinnedBackend(allow_all, Dns())))
        async with httpx.AsyncClient(transport=flow) as http:
            response = await http.get(f"https://mcp.example.com:{running.port}/mcp")
    assert response.status_code == 407
    assert proxy.seen == [("CONNECT", f"mcp.example.com:{running.port}")]


@pytest.mark.parametrize(
    ("hangs_up", "said"),
    [
        (False, "did not answer the request for a tunnel to mcp.example.com:443 within 0.5 s"),
        (True, "closed the connection without answering the request for a tunnel to mcp.example.com:443"),
    ],
)
async def test_a_proxy_that_does_not_answer_the_tunnel_request_is_named(
    monkeypatch: pytest.MonkeyPatch, hangs_up: bool, said: str
) -> None:
    # the tunnel is part of connecting: its answer is waited for within the connect
    # timeout even with no read timeout (the command line's MCP client has none), and a
    # proxy that gives none is the one named, not the server
    async with mute_proxy(hangs_up=hangs_up) as port:
        monkeypatch.setenv("HTTPS_PROXY", f"http://alice:secret@127.0.0.1:{port}")
        timeout = httpx.Timeout(connect=0.5, read=None, write=5.0, pool=5.0)
        transport = through_environment(httpx.AsyncHTTPTransport())
        async with httpx.AsyncClient(transport=transport, timeout=timeout) as http:
            with anyio.fail_after(60), pytest.raises(httpx.ProxyError) as failed:  # 60: no wait forever
                await http.get("https://mcp.example.com/mcp")
    assert str(failed.value) == f"the proxy http://127.0.0.1:{port} (HTTPS_PROXY) {said}"
    assert failed.value.__cause__ is None and failed.value.__context__ is None


async def test_the_command_line_names_a_proxy_that_hung_up_on_the_tunnel_request(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    async with mute_proxy(hangs_up=True) as port:
        monkeypatch.setenv("HTTPS_PROXY", f"http://127.0.0.1:{port}")
        with pytest.raises(CliError) as failed:
            await run_check(Target(url="https://mcp.example.com/mcp"), timeout=5)
    assert failed.value.exit_code == 3
    message = str(failed.value)
    assert (
        f"the proxy http://127.0.0.1:{port} (HTTPS_PROXY) closed the connection without answering" in message
    )
    assert "does not answer like an HTTP server" not in message
