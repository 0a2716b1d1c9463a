"""The loopback authorizer (transports/oauth_loopback.py) against the real test
authorization server (authlib, tests/support/oauth_provider.py) on 127.0.0.1.

The browser is an httpx client in a thread, as ``open_url`` runs: it opens the
authorization URL, the provider approves at once and redirects, and the browser follows the
redirect to the loopback callback. Then the whole flow: ``OAuth`` with this authorizer
signs in to a protected mcp-elicit server.
"""

from __future__ import annotations

import asyncio
import errno
import socket
import threading
import urllib.parse
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field

import httpx
import pytest

from mcp_elicit.core import authorization as oauth
from mcp_elicit.errors import AuthorizationError
from mcp_elicit.transports.http_auth import OAuth
from mcp_elicit.transports.http_client import connect_http
from mcp_elicit.transports.oauth_loopback import LoopbackAuthorizer

from support.mcp_authorization import serving, whoami_server
from support.oauth_provider import CLIENT_ID, OAuthTestProvider
from support.procs import uvicorn_server

pytestmark = pytest.mark.anyio


@dataclass
class Browser:
    """``open_url``: opens a URL, follows the provider's redirect to wherever it goes
    (``visit`` can do more first), and keeps what it saw."""

    visit: Callable[[httpx.Client, str], None] | None = None
    opened: list[str] = field(default_factory=list)
    pages: list[httpx.Response] = field(default_factory=list)

    def __call__(self, url: str) -> bool:
        self.opened.append(url)
        with httpx.Client(follow_redirects=False, timeout=10) as http:
            answer = http.get(url)
            assert answer.is_redirect, answer.text
            back = answer.headers["location"]
            if self.visit is not None:
                self.visit(http, back)
            self.pages.append(http.get(back))
        return True


@dataclass
class Consent:
    answer: bool = True
    asked: list[tuple[str, str]] = field(default_factory=list)

    async def __call__(self, url: str, issuer: str) -> bool:
        self.asked.append((url, issuer))
        return self.answer


@pytest.fixture
async def provider() -> AsyncIterator[OAuthTestProvider]:
    provider = OAuthTestProvider()
    async with uvicorn_server(provider.app) as running:
        provider.base = f"http://127.0.0.1:{running.port}"
        yield provider


def metadata(provider: OAuthTestProvider) -> oauth.AuthorizationServer:
    return oauth.AuthorizationServer(
        issuer=provider.base,
        authorization_endpoint=f"{provider.base}/authorize",
        token_endpoint=f"{provider.base}/token",
    )


def request(provider: OAuthTestProvider, redirect_uri: str) -> tuple[str, str]:
    """An authorization URL for the provider's registered client, and its state."""
    state = "state-" + "x" * 20
    url = oauth.authorization_url(
        metadata(provider),
        client_id=CLIENT_ID,
        redirect_uri=redirect_uri,
        state=state,
        pkce=oauth.Pkce.new(),
        scope="profile",
        resource=f"{provider.base}/mcp",
    )
    return url, state


def refused(port: int) -> bool:
    """True when nothing listens on 127.0.0.1:port."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.settimeout(2)
        return sock.connect_ex(("127.0.0.1", port)) == errno.ECONNREFUSED


async def test_a_sign_in_comes_back_through_the_loopback(provider: OAuthTestProvider) -> None:
    consent, browser = Consent(), Browser()
    async with LoopbackAuthorizer(consent=consent, open_url=browser, announce=lambda _: None) as authorizer:
        redirect_uri = authorizer.redirect_uri
        port = authorizer.port
        assert redirect_uri == f"http://127.0.0.1:{port}/callback"
        provider.register(redirect_uri)
        url, state = request(provider, redirect_uri)
        callback = await authorizer.authorize(url, issuer=provider.base)
        assert consent.asked == [(url, provider.base)]
        assert browser.opened == [url]
        assert callback.startswith(redirect_uri + "?")
        code = oauth.read_callback(callback, state=state, server=metadata(provider))
        assert code in provider.codes
        page = browser.pages[0]
        assert page.status_code == 200 and page.headers["content-type"].startswith("text/html")
        assert "Signed in" in page.text and "You can close this tab" in page.text
        assert page.headers["cache-control"] == "no-store"
        assert authorizer.completed == [provider.base]
        assert refused(port), "the callback server still listens after the flow"
        # a second authorization takes the way back on the same address
        url, state = request(provider, redirect_uri)
        callback = await authorizer.authorize(url, issuer=provider.base)
        assert oauth.read_callback(callback, state=state, server=metadata(provider)) in provider.codes
        assert authorizer.redirect_uri == redirect_uri
    assert refused(port)


async def test_a_browser_command_that_runs_until_the_browser_closes_holds_up_nothing(
    provider: OAuthTestProvider,
) -> None:
    """``webbrowser`` waits for a ``$BROWSER`` command it does not know to exit, which may
    be when the person quits the browser: the sign-in ends when the browser comes back to
    the callback, not when the browser command ends."""
    released = threading.Event()
    browser = Browser()

    def browser_that_runs_until_closed(url: str) -> bool:
        browser(url)
        released.wait(30)
        return True

    try:
        async with LoopbackAuthorizer(
            consent=Consent(), open_url=browser_that_runs_until_closed, announce=lambda _: None
        ) as authorizer:
            provider.register(authorizer.redirect_uri)
            url, state = request(provider, authorizer.redirect_uri)
            callback = await asyncio.wait_for(authorizer.authorize(url, issuer=provider.base), 10)
            assert oauth.read_callback(callback, state=state, server=metadata(provider)) in provider.codes
    finally:
        released.set()


async def test_the_error_the_browser_brings_back_is_returned_not_shown(provider: OAuthTestProvider) -> None:
    provider.consent = False
    browser = Browser()
    async with LoopbackAuthorizer(consent=Consent(), open_url=browser, announce=lambda _: None) as authorizer:
        provider.register(authorizer.redirect_uri)
        url, state = request(provider, authorizer.redirect_uri)
        callback = await authorizer.authorize(url, issuer=provider.base)
    query = urllib.parse.parse_qs(urllib.parse.urlsplit(callback).query)
    assert query["error"] == ["access_denied"]
    # not checked yet (state, iss): nothing of it is displayed, the terminal says why once checked
    assert "Sign-in not completed" in browser.pages[0].text
    assert "access_denied" not in browser.pages[0].text
    with pytest.raises(AuthorizationError, match="refused the authorization"):
        oauth.read_callback(callback, state=state, server=metadata(provider))


async def test_declined_means_no_browser_and_nothing_listening() -> None:
    browser = Browser()
    authorizer = LoopbackAuthorizer(consent=Consent(answer=False), open_url=browser, announce=lambda _: None)
    port = authorizer.port
    with pytest.raises(AuthorizationError, match="sign-in declined"):
        await authorizer.authorize(
            "https://auth.example.com/authorize?x=1", issuer="https://auth.example.com"
        )
    assert browser.opened == []
    assert refused(port)
    await authorizer.aclose()


async def test_no_answer_within_the_timeout_is_a_clear_error() -> None:
    told: list[str] = []
    authorizer = LoopbackAuthorizer(
        consent=Consent(), open_url=lambda url: True, timeout=0.3, announce=told.append
    )
    port = authorizer.port
    with pytest.raises(AuthorizationError, match=r"no sign-in within 0\.3 s") as caught:
        await authorizer.authorize("https://auth.example.com/authorize", issuer="https://auth.example.com")
    assert authorizer.redirect_uri in str(caught.value)
    assert any("waiting for the sign-in in your browser" in line for line in told)
    assert refused(port)
    await authorizer.aclose()


async def test_without_a_browser_the_person_is_told_to_open_the_address(provider: OAuthTestProvider) -> None:
    told: list[str] = []
    shown = asyncio.Event()

    def announce(text: str) -> None:
        told.append(text)
        if "open this address yourself" in text:
            shown.set()

    authorizer = LoopbackAuthorizer(consent=Consent(), open_url=lambda url: False, announce=announce)
    provider.register(authorizer.redirect_uri)
    url, _ = request(provider, authorizer.redirect_uri)

    async def person() -> None:  # reads the address in the terminal and opens it
        await shown.wait()
        await asyncio.to_thread(Browser(), url)

    async with authorizer:
        helper = asyncio.ensure_future(person())
        callback = await authorizer.authorize(url, issuer=provider.base)
        await helper
    assert "code=" in callback
    assert any(url in line for line in told)


async def test_only_get_callback_is_answered(provider: OAuthTestProvider) -> None:
    seen: dict[str, int] = {}

    def visit(http: httpx.Client, back: str) -> None:
        parts = urllib.parse.urlsplit(back)
        origin = f"{parts.scheme}://{parts.netloc}"
        seen["other path"] = http.get(f"{origin}/elsewhere?{parts.query}").status_code
        seen["root"] = http.get(f"{origin}/").status_code
        seen["post"] = http.post(back).status_code
        seen["other host"] = http.get(back, headers={"Host": f"evil.example:{parts.port}"}).status_code

    browser = Browser(visit=visit)
    async with LoopbackAuthorizer(consent=Consent(), open_url=browser, announce=lambda _: None) as authorizer:
        provider.register(authorizer.redirect_uri)
        url, _ = request(provider, authorizer.redirect_uri)
        callback = await authorizer.authorize(url, issuer=provider.base)
    assert seen == {"other path": 404, "root": 404, "post": 405, "other host": 421}
    assert browser.pages[0].status_code == 200
    assert "code=" in callback


async def test_a_callback_without_the_requests_state_does_not_end_the_sign_in(
    provider: OAuthTestProvider,
) -> None:
    # Anything on this machine (another process, a web page the person has open) can send the
    # browser, or itself, to the callback first: that must not take the place of the real answer.
    forged: list[httpx.Response] = []

    def visit(http: httpx.Client, back: str) -> None:
        callback = back.split("?", 1)[0]
        for query in ("code=evil&state=wrong", "error=access_denied&state=wrong", "code=evil", ""):
            forged.append(http.get(f"{callback}?{query}" if query else callback))

    browser = Browser(visit=visit)
    async with LoopbackAuthorizer(consent=Consent(), open_url=browser, announce=lambda _: None) as authorizer:
        provider.register(authorizer.redirect_uri)
        url, state = request(provider, authorizer.redirect_uri)
        callback = await authorizer.authorize(url, issuer=provider.base)
    assert [page.status_code for page in forged] == [400, 400, 400, 400]
    assert all("Signed in" not in page.text for page in forged)
    assert oauth.read_callback(callback, state=state, server=metadata(provider)) in provider.codes
    assert "Signed in" in browser.pages[0].text


def waiting() -> tuple[asyncio.Event, Callable[[str], None]]:
    """An event set when the authorizer says it waits for the browser (it listens then)."""
    event = asyncio.Event()

    def announce(text: str) -> None:
        if "waiting for the sign-in" in text:
            event.set()

    return event, announce


async def test_a_cancelled_sign_in_stops_listening() -> None:
    listening, announce = waiting()
    authorizer = LoopbackAuthorizer(consent=Consent(), open_url=lambda url: True, announce=announce)
    port = authorizer.port
    task = asyncio.ensure_future(
        authorizer.authorize("https://auth.example.com/authorize", issuer="https://auth.example.com")
    )
    await listening.wait()
    assert not refused(port)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert refused(port)
    await authorizer.aclose()


async def test_a_callback_server_cut_short_still_lets_go_of_its_port() -> None:
    """The path where uvicorn did not stop in time and was cancelled (its shutdown never
    ran): the listener is closed through the event loop, then the socket; nothing listens."""
    from mcp_elicit.transports.oauth_loopback import _Callback, _serve

    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    running = await _serve(sock, _Callback(f"http://127.0.0.1:{port}/callback", port, "https://a.example"))
    running.task.cancel()  # as if it had run past the stop's grace
    await asyncio.wait([running.task])
    assert running.task.cancelled()
    assert any(listener.is_serving() for listener in running.server.servers)  # its shutdown never ran
    await running.stop()  # and this does not raise the server task's cancellation
    assert refused(port)
    assert all(not listener.is_serving() for listener in running.server.servers)
    assert sock.fileno() == -1


async def test_aclose_ends_a_sign_in_under_way_and_releases_the_port() -> None:
    listening, announce = waiting()
    authorizer = LoopbackAuthorizer(consent=Consent(), open_url=lambda url: True, announce=announce)
    port = authorizer.port
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as other, pytest.raises(OSError, match="in use"):
        other.bind(("127.0.0.1", port))  # held from the moment redirect_uri is known
    task = asyncio.ensure_future(
        authorizer.authorize("https://auth.example.com/authorize", issuer="https://auth.example.com")
    )
    await listening.wait()
    assert not refused(port)
    await authorizer.aclose()
    with pytest.raises(AuthorizationError, match="stopped"):
        await task
    assert refused(port)
    with pytest.raises(AuthorizationError, match="closed"):
        await authorizer.authorize("https://auth.example.com/authorize", issuer="https://auth.example.com")


async def test_an_unused_authorizer_binds_nothing_and_closes_what_it_bound() -> None:
    authorizer = LoopbackAuthorizer(consent=Consent(), open_url=lambda url: True)
    await authorizer.aclose()  # never bound: nothing to do
    authorizer = LoopbackAuthorizer(consent=Consent(), open_url=lambda url: True)
    port = authorizer.port
    await authorizer.aclose()
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as again:
        again.bind(("127.0.0.1", port))  # free again


async def test_a_taken_port_is_a_clear_error() -> None:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        authorizer = LoopbackAuthorizer(consent=Consent(), open_url=lambda url: True, port=port)
        with pytest.raises(AuthorizationError, match=f"cannot listen .* 127.0.0.1:{port}"):
            _ = authorizer.redirect_uri
        await authorizer.aclose()


async def test_a_preferred_port_is_taken_when_free_and_skipped_when_not() -> None:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        busy = taken.getsockname()[1]
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
            probe.bind(("127.0.0.1", 0))
            free = probe.getsockname()[1]
        authorizer = LoopbackAuthorizer(consent=Consent(), open_url=lambda url: True, prefer=[busy, free])
        assert authorizer.redirect_uri == f"http://127.0.0.1:{free}/callback"
        await authorizer.aclose()
        authorizer = LoopbackAuthorizer(consent=Consent(), open_url=lambda url: True, prefer=[busy])
        assert authorizer.port not in (0, busy)  # any free port then
        await authorizer.aclose()
        fixed = LoopbackAuthorizer(consent=Consent(), open_url=lambda url: True, port=free, prefer=[busy])
        assert fixed.port == free  # an explicit port wins
        await fixed.aclose()


def test_options_are_checked() -> None:
    with pytest.raises(ValueError, match="timeout"):
        LoopbackAuthorizer(consent=Consent(), open_url=lambda url: True, timeout=0)
    with pytest.raises(ValueError, match="port"):
        LoopbackAuthorizer(consent=Consent(), open_url=lambda url: True, port=70000)


# ---- the whole flow -----------------------------------------------------------------------


async def test_oauth_signs_in_through_the_loopback() -> None:
    async with serving(whoami_server()) as site:
        consent, browser = Consent(), Browser()
        authorizer = LoopbackAuthorizer(consent=consent, open_url=browser, announce=lambda _: None)
        async with authorizer:
            auth = OAuth(authorizer)
            async with connect_http(site.url, auth=auth, timeout=10) as client:
                result = await client.call_tool("whoami", {})
            assert result["content"][0]["text"] == "hello"
            # registered with the loopback address, then signed in once
            (registered,) = (c for c in site.provider.clients.values() if c.client_id.startswith("client-"))
            assert registered.redirect_uris == [authorizer.redirect_uri]
            assert [issuer for _, issuer in consent.asked] == [site.base]
            assert site.provider.exchanges == 1
            assert refused(authorizer.port)
