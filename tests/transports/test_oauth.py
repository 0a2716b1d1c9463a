"""Third-party sign-in over real HTTP: a handler asks for a connection to a provider in one
line; the person goes from the server's page to a real OAuth authorization server (authlib,
on 127.0.0.1) and back; the handler calls the provider's protected API with the tokens.

The browser is an httpx client stepping through every redirect. The MCP connection is
recorded byte for byte and searched for every code and token the provider handed out;
so is the store."""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import logging
import re
import sys
from collections.abc import AsyncIterator, Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import orjson
import pytest

from mcp_elicit import Context, KeyRing, Principal, Server
from mcp_elicit.errors import ConfigError, OAuthError
from mcp_elicit.server.oauth import Connection, OAuthProvider, Tokens
from mcp_elicit.stores import MemoryStore
from mcp_elicit.transports.http_server import StreamableHTTP
from mcp_elicit.transports.oauth_client import HttpTokenExchange

from support.oauth_provider import CLIENT_ID, CLIENT_SECRET, OAuthTestProvider
from support.procs import InProcess, uvicorn_server
from support.proxy import stripping
from support.wire import WireChecker

pytestmark = pytest.mark.anyio
META = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {"elicitation": {"form": {}, "url": {}}},
}
CALLBACK = "/mcp-elicit/oauth/callback"


class CookieAuth:
    """A stand-in for the server's own sign-in: the browser says who it is in a cookie."""

    async def subject(self, headers: Mapping[str, str], cookies: Mapping[str, str]) -> str | None:
        return cookies.get("who")


class Tokens4Mcp:
    async def verify(self, token: str) -> Principal | None:
        return Principal(token.removeprefix("tok-")) if token.startswith("tok-") else None


def build(store: MemoryStore, provider: str, *, auth: bool = False) -> Server:
    app = Server(
        "oauth-test",
        state_keys=KeyRing([bytes(range(72, 104))]),
        store=store,
        flow_wait=0.3,
        auth=Tokens4Mcp() if auth else None,
        page_auth=CookieAuth() if auth else None,
    )
    app.oauth_provider(
        "example",
        authorize_url=f"{provider}/authorize",
        token_url=f"{provider}/token",
        client_id=CLIENT_ID,
        client_secret=CLIENT_SECRET,
        scopes=["profile", "repo"],
        leeway=0,
    )

    @app.tool()
    async def whoami(ctx: Context) -> str:
        answer = await ctx.connect("example", message="Connect your Example account")
        if answer.connection is None:
            return f"not connected ({answer.action})"
        async with answer.connection.client(timeout=10) as http:
            response = await http.get(f"{provider}/api/me")
        if response.status_code != 200:
            return f"the API answered {response.status_code}"
        me = response.json()
        return f"hello {me['user']} ({me['scope']})"

    return app


class Wire(httpx.AsyncBaseTransport):
    """Records every byte exchanged with the MCP endpoint."""

    def __init__(self) -> None:
        self.inner = httpx.AsyncHTTPTransport()
        self.bytes = bytearray()

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        self.bytes += request.url.raw_path + b"".join(
            f"{k}: {v}".encode() for k, v in request.headers.items()
        )
        self.bytes += request.content
        response = await self.inner.handle_async_request(request)
        body = await response.aread()
        self.bytes += body + b"".join(f"{k}: {v}".encode() for k, v in response.headers.items())
        return httpx.Response(response.status_code, headers=response.headers, content=body)

    async def aclose(self) -> None:
        await self.inner.aclose()


class Mcp:
    def __init__(
        self, http: httpx.AsyncClient, url: str, wire: WireChecker, token: str | None = None
    ) -> None:
        self.http, self.url, self.wire, self.token, self.ids = http, url, wire, token, 0

    async def call(self, **extra: Any) -> dict[str, Any]:
        self.ids += 1
        body = {
            "jsonrpc": "2.0",
            "id": self.ids,
            "method": "tools/call",
            "params": {"name": "whoami", "_meta": META, **extra},
        }
        self.wire.request(body)
        headers = {
            "accept": "application/json, text/event-stream",
            "mcp-protocol-version": "2026-07-28",
            "mcp-method": "tools/call",
            "mcp-name": "whoami",
        }
        if self.token:
            headers["authorization"] = f"Bearer {self.token}"
        response = await self.http.post(self.url, json=body, headers=headers)
        message: dict[str, Any] = response.json()
        self.wire.response("tools/call", message)
        result: dict[str, Any] = message["result"]
        return result


@dataclass
class Rig:
    app: Server
    running: InProcess
    provider: OAuthTestProvider
    store: MemoryStore

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.running.port}"


@contextlib.asynccontextmanager
async def rig(*, auth: bool = False, public_url: bool = False) -> AsyncIterator[Rig]:
    """The provider and the MCP server, each on its own 127.0.0.1 port; both stopped after."""
    provider = OAuthTestProvider()
    store = MemoryStore()
    try:
        async with uvicorn_server(provider.app) as idp:
            provider.base = f"http://127.0.0.1:{idp.port}"
            app = build(store, provider.base, auth=auth)
            async with uvicorn_server(StreamableHTTP(app)) as running:
                base = f"http://127.0.0.1:{running.port}"
                if public_url:
                    app.url_mode.public_url = base
                provider.register(base + CALLBACK)
                yield Rig(app, running, provider, store)
    finally:
        await store.close()


# ---- the browser ---------------------------------------------------------------------------


async def open_link(browser: httpx.AsyncClient, url: str) -> httpx.Response:
    """Follow the link from the client: claimed, then the connect page."""
    first = await browser.get(url)
    assert first.status_code == 303, first.text
    page = await browser.get(first.url.join(first.headers["location"]))
    assert page.status_code == 200, page.text
    assert "Continue to example" in page.text
    assert "<title>oauth-test asks to connect to example</title>" in page.text  # who asks, in the tab
    assert page.headers["cache-control"] == "no-store"
    return page


async def continue_to_provider(browser: httpx.AsyncClient, page: httpx.Response) -> httpx.URL:
    """Click "Continue": the server answers with a redirect to the provider."""
    href = re.search(r'href="([^"]+/start)"', page.text)
    assert href is not None
    start = await browser.get(page.url.join(href.group(1)))
    assert start.status_code == 303, start.text
    return httpx.URL(start.headers["location"])


async def consent(browser: httpx.AsyncClient, authorize: httpx.URL) -> httpx.URL:
    """The provider (the user consents or denies) sends the browser back: the callback URL."""
    answer = await browser.get(authorize)
    assert answer.status_code == 302, answer.text
    return httpx.URL(answer.headers["location"])


async def sign_in(browser: httpx.AsyncClient, url: str) -> httpx.Response:
    page = await open_link(browser, url)
    callback = await consent(browser, await continue_to_provider(browser, page))
    return await browser.get(callback)


def url_of(result: dict[str, Any]) -> tuple[str, str]:
    assert result["resultType"] == "input_required", result
    ((key, request),) = result["inputRequests"].items()
    assert request["params"]["mode"] == "url"
    return key, str(request["params"]["url"])


def store_dump(store: MemoryStore) -> bytes:
    return b"".join(key.encode() + b"\0" + value for (_, key), (value, _) in store._data.items())


# ---- full flows --------------------------------------------------------------------------------


async def test_connect_end_to_end(wire: WireChecker, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG, logger="mcp_elicit")
    recorder = Wire()
    async with (
        rig() as r,
        httpx.AsyncClient(transport=recorder, timeout=10) as http,
        httpx.AsyncClient(timeout=10) as browser,
    ):
        mcp = Mcp(http, r.running.url, wire)
        first = await mcp.call()
        key, url = url_of(first)
        assert url.startswith(f"{r.base}/mcp-elicit/flows/"), (
            "the client sees the server's page, not the provider"
        )
        # the client accepts: the person has not signed in yet, so a state-only round
        waiting = await mcp.call(
            inputResponses={key: {"action": "accept"}}, requestState=first["requestState"]
        )
        assert waiting["resultType"] == "input_required"
        assert "inputRequests" not in waiting
        retry = asyncio.ensure_future(mcp.call(requestState=waiting["requestState"]))
        await asyncio.sleep(0.05)

        page = await open_link(browser, url)
        authorize = await continue_to_provider(browser, page)
        assert authorize.host == "127.0.0.1" and authorize.path == "/authorize"
        params = dict(authorize.params)
        assert params["response_type"] == "code"
        assert params["client_id"] == CLIENT_ID
        assert params["redirect_uri"] == r.base + CALLBACK
        assert params["scope"] == "profile repo"
        assert params["code_challenge_method"] == "S256"
        assert re.fullmatch(r"[A-Za-z0-9_-]{43}", params["code_challenge"])
        assert len(params["state"]) >= 32
        callback = await consent(browser, authorize)
        assert callback.path == CALLBACK and callback.params["state"] == params["state"]
        done = await browser.get(callback)
        assert done.status_code == 200
        assert "Connected. You can close this tab." in done.text

        final = await retry
        for _ in range(100):  # on a slow machine the sign-in can outlast flow_wait: retry as clients do
            if final.get("resultType") != "input_required":
                break
            assert "inputRequests" not in final, final
            final = await mcp.call(requestState=final["requestState"])
        assert final["content"][0]["text"] == "hello octocat (profile repo)"
        assert r.provider.exchanges == 1
        # later calls use the stored connection without asking
        again = await mcp.call()
        assert again["content"][0]["text"] == "hello octocat (profile repo)"
        assert r.provider.exchanges == 1 and r.provider.api_calls == 2

        secrets = [s.encode() for s in r.provider.issued]
        assert len(secrets) == 3  # a code, an access token, a refresh token
        for secret in secrets:
            assert secret not in recorder.bytes, "a code or token crossed the MCP connection"
            assert secret not in store_dump(r.store), "a code or token is stored in clear"
            assert secret.decode() not in caplog.text, "a code or token was logged"
        assert params["state"] not in caplog.text
        assert len(recorder.bytes) > 1000


async def test_on_2025_the_request_waits_and_the_session_hears_completion(wire_2025: WireChecker) -> None:
    from support.memory import SessionClient

    async with rig(public_url=True) as r, httpx.AsyncClient(timeout=10) as browser:
        client = SessionClient(r.app, capabilities={"elicitation": {"url": {}}}, checker=wire_2025)
        await client.open()
        asked: list[dict[str, Any]] = []

        def answer(_key: str, request: dict[str, Any]) -> dict[str, Any]:
            asked.append(request["params"])
            return {"action": "accept"}

        client.answer = answer
        call = asyncio.ensure_future(client.result("tools/call", {"name": "whoami"}))
        for _ in range(100):
            if asked:
                break
            await asyncio.sleep(0.02)
        (params,) = asked
        assert params["mode"] == "url" and params["elicitationId"] in params["url"]
        done = await sign_in(browser, params["url"])
        assert "Connected" in done.text
        result = await asyncio.wait_for(call, 5)
        assert result["content"][0]["text"] == "hello octocat (profile repo)"
        notice = orjson.loads(await client.session.next_pushed(1.0))
        wire_2025.notification(notice)
        assert notice == {
            "jsonrpc": "2.0",
            "method": "notifications/elicitation/complete",
            "params": {"elicitationId": params["elicitationId"]},
        }


# ---- what the provider checks --------------------------------------------------------------


class WrongVerifier:
    """Sends a verifier that does not match the challenge (the provider must notice)."""

    def __init__(self, inner: HttpTokenExchange) -> None:
        self.inner = inner

    async def exchange(
        self, provider: OAuthProvider, code: str, verifier: str, redirect_uri: str
    ) -> Mapping[str, Any]:
        return await self.inner.exchange(provider, code, verifier[::-1], redirect_uri)

    async def refresh(self, provider: OAuthProvider, refresh_token: str) -> Mapping[str, Any]:
        return await self.inner.refresh(provider, refresh_token)

    def client(self, connection: Connection, **options: Any) -> Any:
        return self.inner.client(connection, **options)


async def test_a_wrong_pkce_verifier_fails_the_exchange(wire: WireChecker) -> None:
    async with rig() as r, httpx.AsyncClient(timeout=10) as http, httpx.AsyncClient(timeout=10) as browser:
        r.app.url_mode.token_exchange = WrongVerifier(HttpTokenExchange())
        mcp = Mcp(http, r.running.url, wire)
        first = await mcp.call()
        key, url = url_of(first)
        done = await sign_in(browser, url)
        assert "did not work" in done.text
        flow = await r.app.url_mode.flows.get(first_flow_id(url))
        assert flow is not None and flow.status == "failed" and flow.detail == "invalid_grant"
        final = await mcp.call(inputResponses={key: {"action": "accept"}}, requestState=first["requestState"])
        assert final["content"][0]["text"] == "not connected (cancel)"
        assert r.provider.exchanges == 0
        assert await r.app.url_mode.oauth.stored("example", None) is None


async def test_access_denied_at_the_provider_is_a_decline(wire: WireChecker) -> None:
    async with rig() as r, httpx.AsyncClient(timeout=10) as http, httpx.AsyncClient(timeout=10) as browser:
        r.provider.consent = False
        mcp = Mcp(http, r.running.url, wire)
        first = await mcp.call()
        key, url = url_of(first)
        page = await open_link(browser, url)
        callback = await consent(browser, await continue_to_provider(browser, page))
        assert callback.params["error"] == "access_denied" and "code" not in callback.params
        done = await browser.get(callback)
        assert "You declined" in done.text
        final = await mcp.call(inputResponses={key: {"action": "accept"}}, requestState=first["requestState"])
        assert final["content"][0]["text"] == "not connected (decline)"


async def test_a_provider_error_is_logged_as_a_warning_with_its_description_escaped(
    wire: WireChecker, caplog: pytest.LogCaptureFixture
) -> None:
    """The provider sends the person back with an error other than access_denied (the
    server's scope or client is not allowed, the provider failed): the person sees that it
    did not work, never the provider's text; the operator, at the default log level, sees
    the code and the description, its control characters escaped."""
    caplog.set_level(logging.WARNING, logger="mcp_elicit")
    async with rig() as r, httpx.AsyncClient(timeout=10) as http, httpx.AsyncClient(timeout=10) as browser:
        first = await Mcp(http, r.running.url, wire).call()
        _, url = url_of(first)
        authorize = await continue_to_provider(browser, await open_link(browser, url))
        description = "scope 'admin' is not allowed\n<script>x</script>\x1b[2J"
        query = {
            "state": authorize.params["state"],
            "error": "invalid_scope",
            "error_description": description,
        }
        done = await browser.get(r.base + CALLBACK, params=query)
        assert "did not work" in done.text and "admin" not in done.text and "<script>x" not in done.text
        flow = await r.app.url_mode.flows.get(first_flow_id(url))
        assert flow is not None and (flow.status, flow.detail) == ("failed", "invalid_scope")
    (record,) = [rec for rec in caplog.records if "invalid_scope" in rec.getMessage()]
    assert record.levelno == logging.WARNING
    assert "scope 'admin' is not allowed" in record.getMessage()
    assert "\n" not in record.getMessage() and "\x1b" not in record.getMessage()


def first_flow_id(url: str) -> str:
    match = re.search(r"/flows/([^/?]+)", url)
    assert match is not None
    return match.group(1)


# ---- same user, same browser, once ------------------------------------------------------


async def test_a_state_works_once(wire: WireChecker) -> None:
    async with rig() as r, httpx.AsyncClient(timeout=10) as http, httpx.AsyncClient(timeout=10) as browser:
        first = await Mcp(http, r.running.url, wire).call()
        _, url = url_of(first)
        page = await open_link(browser, url)
        callback = await consent(browser, await continue_to_provider(browser, page))
        assert "Connected" in (await browser.get(callback)).text
        replay = await browser.get(callback)
        assert replay.status_code == 403
        assert "already used" in replay.text
        forged = await browser.get(callback.copy_set_param("state", "x" * 32))
        assert forged.status_code == 403
        assert (await browser.get(r.base + CALLBACK)).status_code == 403  # no state at all
        assert r.provider.exchanges == 1
        # the link itself was single-use too: another browser is refused; the one that
        # claimed it is led back to its (finished) page
        async with httpx.AsyncClient(timeout=10) as stranger:
            assert (await stranger.get(url)).status_code in (403, 410)
        again = await browser.get(url)
        assert again.status_code == 303
        assert "Connected" in (await browser.get(again.url.join(again.headers["location"]))).text


async def test_a_callback_in_another_browser_is_refused(wire: WireChecker) -> None:
    async with (
        rig() as r,
        httpx.AsyncClient(timeout=10) as http,
        httpx.AsyncClient(timeout=10) as browser,
        httpx.AsyncClient(timeout=10) as stranger,
    ):
        mcp = Mcp(http, r.running.url, wire)
        first = await mcp.call()
        key, url = url_of(first)
        page = await open_link(browser, url)
        start_url = page.url.join(re.search(r'href="([^"]+/start)"', page.text).group(1))  # type: ignore[union-attr]
        assert (await stranger.get(start_url)).status_code == 403, "start needs the flow's browser"
        callback = await consent(browser, await continue_to_provider(browser, page))
        refused = await stranger.get(callback)
        assert refused.status_code == 403
        assert "same browser" in refused.text
        flow = await r.app.url_mode.flows.get(first_flow_id(url))
        assert flow is not None and flow.status == "pending"
        assert r.provider.exchanges == 0
        # the refused attempt used nothing up: the right browser finishes
        assert "Connected" in (await browser.get(callback)).text
        final = await mcp.call(inputResponses={key: {"action": "accept"}}, requestState=first["requestState"])
        assert final["content"][0]["text"] == "hello octocat (profile repo)"


async def test_another_principal_is_refused_and_tokens_belong_to_who_signed_in(wire: WireChecker) -> None:
    async with (
        rig(auth=True) as r,
        httpx.AsyncClient(timeout=10) as http,
        httpx.AsyncClient(timeout=10, cookies={"who": "alice"}) as alice,
        httpx.AsyncClient(timeout=10, cookies={"who": "mallory"}) as mallory,
    ):
        mcp = Mcp(http, r.running.url, wire, token="tok-alice")
        first = await mcp.call()
        key, url = url_of(first)
        refused = await mallory.get(url)
        assert refused.status_code == 403 and "another user" in refused.text
        page = await open_link(alice, url)
        callback = await consent(alice, await continue_to_provider(alice, page))
        # mallory, even holding alice's flow cookies, is not alice
        for cookie in alice.cookies.jar:
            if cookie.name != "who":
                mallory.cookies.jar.set_cookie(cookie)
        stolen = await mallory.get(callback)
        assert stolen.status_code == 403 and "another user" in stolen.text
        flow = await r.app.url_mode.flows.get(first_flow_id(url))
        assert flow is not None and flow.status == "pending"
        assert "Connected" in (await alice.get(callback)).text
        final = await mcp.call(inputResponses={key: {"action": "accept"}}, requestState=first["requestState"])
        assert final["content"][0]["text"] == "hello octocat (profile repo)"
        # the tokens are alice's: bob is asked to connect his own account
        bob = await Mcp(http, r.running.url, wire, token="tok-bob").call()
        assert bob["resultType"] == "input_required"
        assert (await mcp.call())["content"][0]["text"] == "hello octocat (profile repo)"


# ---- refresh ------------------------------------------------------------------------------


async def connected(r: Rig, wire: WireChecker, http: httpx.AsyncClient, browser: httpx.AsyncClient) -> Mcp:
    mcp = Mcp(http, r.running.url, wire)
    first = await mcp.call()
    key, url = url_of(first)
    assert "Connected" in (await sign_in(browser, url)).text
    final = await mcp.call(inputResponses={key: {"action": "accept"}}, requestState=first["requestState"])
    assert final["content"][0]["text"] == "hello octocat (profile repo)"
    return mcp


async def test_an_expired_token_is_refreshed(wire: WireChecker) -> None:
    async with rig() as r, httpx.AsyncClient(timeout=10) as http, httpx.AsyncClient(timeout=10) as browser:
        r.provider.lifetime = 1
        mcp = await connected(r, wire, http, browser)
        before = await r.app.url_mode.oauth.stored("example", None)
        await asyncio.sleep(1.1)  # the provider no longer accepts the access token
        result = await mcp.call()
        assert result["content"][0]["text"] == "hello octocat (profile repo)"
        assert r.provider.refreshes >= 1  # (2 on a machine slow enough to refresh within connected())
        after = await r.app.url_mode.oauth.stored("example", None)
        assert before is not None and after is not None
        assert after.access_token != before.access_token
        assert after.refresh_token != before.refresh_token  # the provider rotates them
        assert after.refresh_token is not None
        assert after.refresh_token.encode() not in store_dump(r.store)


async def test_a_refused_refresh_asks_again(wire: WireChecker) -> None:
    async with rig() as r, httpx.AsyncClient(timeout=10) as http, httpx.AsyncClient(timeout=10) as browser:
        r.provider.lifetime = 1
        mcp = await connected(r, wire, http, browser)
        r.provider.refuse_refresh = True
        await asyncio.sleep(1.1)
        again = await mcp.call()
        _, url = url_of(again)  # the tokens were dropped: the user is asked to connect again
        assert await r.app.url_mode.oauth.stored("example", None) is None
        r.provider.refuse_refresh = False
        r.provider.lifetime = 3600
        assert "Connected" in (await sign_in(browser, url)).text
        assert (await mcp.call())["content"][0]["text"] == "hello octocat (profile repo)"


async def test_tokens_the_api_refuses_before_their_time_are_refreshed_or_asked_again(
    wire: WireChecker,
) -> None:
    """The provider stops taking an access token before the expiry it announced (revoked,
    rotated, its lifetime cut short): the API's 401 makes the connection refresh once and
    send the request again. When the refresh is refused too, the tokens are dropped, so the
    next ``ctx.connect`` asks again instead of handing out the dead token for good."""
    async with rig() as r, httpx.AsyncClient(timeout=10) as http, httpx.AsyncClient(timeout=10) as browser:
        mcp = await connected(r, wire, http, browser)
        before = await r.app.url_mode.oauth.stored("example", None)
        r.provider.expire_all()  # the server still believes the token good for an hour
        assert (await mcp.call())["content"][0]["text"] == "hello octocat (profile repo)"
        assert r.provider.refreshes == 1
        after = await r.app.url_mode.oauth.stored("example", None)
        assert before is not None and after is not None and after.access_token != before.access_token
        r.provider.expire_all()
        r.provider.refuse_refresh = True
        assert (await mcp.call())["content"][0]["text"] == "the API answered 401"
        assert await r.app.url_mode.oauth.stored("example", None) is None
        _, url = url_of(await mcp.call())  # asked again
        r.provider.refuse_refresh = False
        assert "Connected" in (await sign_in(browser, url)).text
        assert (await mcp.call())["content"][0]["text"] == "hello octocat (profile repo)"


async def test_forgetting_asks_again(wire: WireChecker) -> None:
    async with rig() as r, httpx.AsyncClient(timeout=10) as http, httpx.AsyncClient(timeout=10) as browser:
        mcp = await connected(r, wire, http, browser)
        handle = Connection(r.app.url_mode.oauth, "example", None)
        assert await handle.forget()
        assert (await mcp.call())["resultType"] == "input_required"
        with pytest.raises(OAuthError) as caught:
            await handle.token()
        assert caught.value.error == "not_connected"


# ---- the connection handle, without sockets -----------------------------------------------


class FakeExchange:
    def __init__(self, answers: list[Mapping[str, Any] | OAuthError]) -> None:
        self.answers = answers
        self.refreshed: list[str] = []

    async def exchange(
        self, provider: OAuthProvider, code: str, verifier: str, redirect_uri: str
    ) -> Mapping[str, Any]:
        raise AssertionError("not used here")

    async def refresh(self, provider: OAuthProvider, refresh_token: str) -> Mapping[str, Any]:
        self.refreshed.append(refresh_token)
        await asyncio.sleep(0.01)
        answer = self.answers.pop(0)
        if isinstance(answer, OAuthError):
            raise answer
        return answer

    def client(self, connection: Connection, **options: Any) -> Any:
        raise AssertionError("not used here")


def offline(answers: list[Mapping[str, Any] | OAuthError], now: Callable[[], float]) -> Server:
    app = Server("offline", store=MemoryStore(), clock=now)
    app.oauth_provider(
        "example",
        authorize_url="https://id.example.com/authorize",
        token_url="https://id.example.com/token",
        client_id="c",
    )
    app.url_mode.token_exchange = FakeExchange(answers)
    return app


async def test_the_handle_refreshes_once_and_keeps_the_refresh_token() -> None:
    clock = [1000.0]
    app = offline([{"access_token": "new-access", "expires_in": 60}], lambda: clock[0])
    oauth = app.url_mode.oauth
    await oauth.save("example", "ann", Tokens("old-access", refresh_token="refresh-1", expires_at=1031.0))
    handle = Connection(oauth, "example", "ann")
    assert await handle.token() == "old-access"
    assert repr(handle) == str(handle) == "<Connection to 'example' (tokens hidden)>"
    clock[0] = 1001.0  # within the default 30 s leeway of the expiry: refreshed before use
    assert list(await asyncio.gather(handle.token(), handle.token(), handle.token())) == ["new-access"] * 3
    exchange = app.url_mode.token_exchange
    assert isinstance(exchange, FakeExchange) and exchange.refreshed == ["refresh-1"]
    stored = await oauth.stored("example", "ann")
    assert stored is not None and stored.refresh_token == "refresh-1" and stored.expires_at == 1061.0
    assert "new-access" not in repr(stored) and "refresh-1" not in repr(stored)
    assert await handle.headers() == {"Authorization": "Bearer new-access"}
    assert await oauth.stored("example", "bob") is None, "tokens are bound to their principal"
    await app.url_mode.store.close()


async def test_a_refused_refresh_drops_the_tokens_an_unreachable_provider_keeps_them() -> None:
    clock = [1000.0]
    unreachable = OAuthError("unreachable", refused=False)
    app = offline([unreachable, OAuthError("invalid_grant")], lambda: clock[0])
    oauth = app.url_mode.oauth
    await oauth.save("example", None, Tokens("a", refresh_token="r", expires_at=900.0))
    handle = Connection(oauth, "example", None)
    with pytest.raises(OAuthError) as caught:
        await handle.token()
    assert caught.value is unreachable
    assert await oauth.stored("example", None) is not None
    with pytest.raises(OAuthError) as dropped:
        await handle.token()
    assert dropped.value.error == "not_connected"
    assert await oauth.stored("example", None) is None
    # expired without a refresh token: dropped, nothing asked of the provider
    await oauth.save("example", None, Tokens("a", expires_at=900.0))
    assert await oauth.usable("example", None) is None
    await app.url_mode.store.close()


# ---- the token requests, against a mock transport ---------------------------------------


async def test_token_requests_and_what_their_failures_mean() -> None:
    seen: list[httpx.Request] = []
    answers = iter(
        [
            httpx.Response(200, json={"access_token": "at", "token_type": "bearer", "expires_in": 60}),
            httpx.Response(400, json={"error": "invalid_grant", "error_description": "nope"}),
            httpx.Response(503, text="busy"),
            httpx.Response(400, json={"error": "bad\ncode"}),
        ]
    )

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        return next(answers)

    exchange = HttpTokenExchange(transport=httpx.MockTransport(handler))
    provider = OAuthProvider(
        "example", "https://id.example.com/a", "https://id.example.com/t", "cid", "s3cr3t"
    )
    answer = await exchange.exchange(provider, "the-code", "v" * 43, "http://127.0.0.1:1/cb")
    assert answer["access_token"] == "at"
    request = seen[0]
    assert request.method == "POST" and str(request.url) == "https://id.example.com/t"
    assert request.headers["authorization"] == "Basic Y2lkOnMzY3IzdA=="  # cid:s3cr3t
    form = dict(httpx.QueryParams(request.content.decode()))
    assert form == {
        "grant_type": "authorization_code",
        "code": "the-code",
        "redirect_uri": "http://127.0.0.1:1/cb",
        "code_verifier": "v" * 43,
    }
    with pytest.raises(OAuthError) as refused:
        await exchange.refresh(provider, "the-refresh-token")
    assert (refused.value.error, refused.value.refused) == ("invalid_grant", True)
    assert dict(httpx.QueryParams(seen[1].content.decode())) == {
        "grant_type": "refresh_token",
        "refresh_token": "the-refresh-token",
    }
    for _ in range(2):  # a 5xx, and an error code that is not one: neither is a refusal
        with pytest.raises(OAuthError) as busy:
            await exchange.refresh(provider, "the-refresh-token")
        assert (busy.value.error, busy.value.refused) == ("invalid_response", False)
        assert "the-refresh-token" not in str(busy.value)
    public = OAuthProvider("public", "https://id.example.com/a", "https://id.example.com/t", "cid")

    def refuse_connection(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        raise httpx.ConnectError("connection refused", request=request)

    down = HttpTokenExchange(transport=httpx.MockTransport(refuse_connection))
    with pytest.raises(OAuthError) as unreachable:
        await down.exchange(public, "c", "v" * 43, "http://127.0.0.1:1/cb")
    assert (unreachable.value.error, unreachable.value.refused) == ("unreachable", False)
    # a public client (no secret) names itself in the body instead of authenticating
    assert "authorization" not in seen[-1].headers
    assert dict(httpx.QueryParams(seen[-1].content.decode()))["client_id"] == "cid"
    assert unreachable.value.__cause__ is None and unreachable.value.__suppress_context__


@pytest.mark.parametrize(
    ("expires_in", "expires_at"),
    [
        (60, 1060.0),
        ("60", 1060.0),
        ("\xb2", None),  # "²" passes str.isdigit, but int() cannot read it
        ("9" * 5000, None),  # nor more digits than int() reads at all
        ("-5", None),
        (True, None),
        (None, None),
    ],
)
def test_a_token_answers_lifetime_is_read_when_usable(expires_in: object, expires_at: float | None) -> None:
    """``expires_in`` as a number or as digits sets when the tokens expire; anything else
    leaves it open (refreshed when the provider refuses them) rather than failing the grant."""
    tokens = Tokens.from_response({"access_token": "at", "expires_in": expires_in}, now=1000.0)
    assert (tokens.access_token, tokens.expires_at) == ("at", expires_at)


# ---- configuration -------------------------------------------------------------------------


def test_provider_configuration_is_checked() -> None:
    app = Server("config")
    good: dict[str, Any] = {
        "authorize_url": "https://id.example.com/a",
        "token_url": "https://id.example.com/t",
        "client_id": "c",
    }
    app.oauth_provider("example", **good)
    with pytest.raises(ConfigError, match="already registered"):
        app.oauth_provider("example", **good)
    with pytest.raises(ConfigError, match="https"):
        app.oauth_provider("plain", **{**good, "token_url": "http://id.example.com/t"})
    with pytest.raises(ConfigError, match="state"):
        app.oauth_provider("extra", **good, extra_params={"state": "fixed"})
    with pytest.raises(ConfigError, match="name"):
        app.oauth_provider("two words", **good)
    # the callback reads the code from its query, with the flow cookie a cross-site POST
    # (form_post) would not carry: a provider told to answer another way never comes back
    for mode in ("form_post", "fragment", "query.jwt"):
        with pytest.raises(ConfigError, match="response_mode") as refused:
            app.oauth_provider(f"mode-{mode.replace('.', '-')}", **good, extra_params={"response_mode": mode})
        assert "query" in str(refused.value)
    app.oauth_provider(
        "mode-query", **good, extra_params={"response_mode": "query", "access_type": "offline"}
    )
    loopback = app.oauth_provider("local", **{**good, "token_url": "http://127.0.0.1:9/t"})
    assert "client_secret" not in repr(app.oauth_provider("secret", **good, client_secret="s3cr3t"))
    assert loopback.scopes == ()


def test_without_authlib_the_error_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "authlib.oauth2.rfc7636", None)
    with pytest.raises(ConfigError, match=r"mcp-elicit\[oauth\]"):
        Server("no-authlib").oauth_provider(
            "example", authorize_url="https://a.example/a", token_url="https://a.example/t", client_id="c"
        )


async def test_an_unknown_provider_fails_the_tool_before_asking(wire: WireChecker) -> None:
    from support.memory import MemoryClient

    app = Server("unknown", store=MemoryStore())

    @app.tool()
    async def use(ctx: Context) -> str:
        await ctx.connect("nowhere")
        return "unreachable"

    client = MemoryClient(app, capabilities={"elicitation": {"url": {}}}, checker=wire)
    result = await client.result("tools/call", {"name": "use"})
    assert result["isError"] is True
    assert "no OAuth provider named 'nowhere'" in result["content"][0]["text"]
    await app.url_mode.store.close()


async def test_stdio_installs_the_token_exchange(tmp_path: Path) -> None:
    from mcp_elicit.transports.stdio_server import StdioServer

    app = Server("stdio", store=MemoryStore())
    (tmp_path / "in").write_bytes(b"")
    with (tmp_path / "in").open("rb") as stdin, (tmp_path / "out").open("wb") as stdout:
        await StdioServer(app, grace=0.1).run(stdin, stdout)
    assert isinstance(app.url_mode.token_exchange, HttpTokenExchange)
    await app.url_mode.store.close()


async def test_behind_a_proxy_that_strips_a_path_the_sign_in_keeps_it(wire: WireChecker) -> None:
    """``--public-url .../mcp-app`` behind a proxy that strips it: the connect page's link,
    the redirect URI and the callback's cookie all carry the path, so the sign-in ends."""
    provider = OAuthTestProvider()
    store = MemoryStore()
    try:
        async with uvicorn_server(provider.app) as idp:
            provider.base = f"http://127.0.0.1:{idp.port}"
            app = build(store, provider.base)
            async with uvicorn_server(stripping("/mcp-app", StreamableHTTP(app))) as running:
                base = f"http://127.0.0.1:{running.port}/mcp-app"
                app.url_mode.public_url = base
                provider.register(base + CALLBACK)
                async with httpx.AsyncClient(timeout=10) as http, httpx.AsyncClient(timeout=10) as browser:
                    mcp = Mcp(http, f"{base}/mcp", wire)
                    first = await mcp.call()
                    key, url = url_of(first)
                    assert url.startswith(f"{base}/mcp-elicit/flows/")
                    page = await open_link(browser, url)
                    assert 'href="/mcp-app/mcp-elicit/flows/' in page.text
                    authorize = await continue_to_provider(browser, page)
                    assert dict(authorize.params)["redirect_uri"] == base + CALLBACK
                    done = await browser.get(await consent(browser, authorize))
                    assert done.status_code == 200 and "Connected" in done.text, done.text
                    final = await mcp.call(
                        inputResponses={key: {"action": "accept"}}, requestState=first["requestState"]
                    )
                    assert final["content"][0]["text"] == "hello octocat (profile repo)"
    finally:
        await store.close()


async def test_a_token_answer_is_read_no_further_than_its_cap() -> None:
    # a provider (or whoever answers at its address) that floods: reading stops at the cap
    pulled: list[int] = []

    async def flood() -> AsyncIterator[bytes]:
        for _ in range(1024):  # 64 MiB, if anyone read it all
            pulled.append(64 * 1024)
            yield b"{" + b" " * (64 * 1024 - 1)

    def handler(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, content=flood(), headers={"content-type": "application/json"})

    exchange = HttpTokenExchange(transport=httpx.MockTransport(handler))
    provider = OAuthProvider("example", "https://id.example.com/a", "https://id.example.com/t", "cid", "s")
    with pytest.raises(OAuthError) as flooded:
        await exchange.exchange(provider, "the-code", "v" * 43, "http://127.0.0.1:1/cb")
    assert (flooded.value.error, flooded.value.refused) == ("invalid_response", False)
    assert "64 KiB" in str(flooded.value)
    assert sum(pulled) <= 2 * 64 * 1024


class EndsTheFlowMeanwhile:
    """The real token exchange, during which the request gives its page up (the flow is
    cancelled, as a 2025-11-25 request past its budget does)."""

    def __init__(self, inner: HttpTokenExchange, app: Server) -> None:
        self.inner, self.app = inner, app
        self.flow_id = ""

    async def exchange(self, provider: OAuthProvider, code: str, verifier: str, redirect_uri: str) -> Any:
        answer = await self.inner.exchange(provider, code, verifier, redirect_uri)
        await self.app.url_mode._end(self.flow_id, "cancelled")
        return answer

    async def refresh(self, provider: OAuthProvider, refresh_token: str) -> Any:
        return await self.inner.refresh(provider, refresh_token)

    def client(self, connection: Connection, **options: Any) -> Any:
        return self.inner.client(connection, **options)


async def test_tokens_that_arrive_after_the_flow_ended_are_not_kept(wire: WireChecker) -> None:
    """The token request takes a while; the flow ends meanwhile (the request gave up): the
    tokens it brings back are not kept, and the page says so as to a late form (409)."""
    async with rig() as r, httpx.AsyncClient(timeout=10) as http, httpx.AsyncClient(timeout=10) as browser:
        slow = EndsTheFlowMeanwhile(HttpTokenExchange(), r.app)
        r.app.url_mode.token_exchange = slow
        first = await Mcp(http, r.running.url, wire).call()
        _, url = url_of(first)
        slow.flow_id = first_flow_id(url)
        done = await sign_in(browser, url)
        assert r.provider.exchanges == 1
        assert "Connected" not in done.text
        assert done.status_code == 409 and "already been cancelled" in done.text and "not used" in done.text
        assert await r.app.url_mode.oauth.stored("example", None) is None


async def test_tokens_saved_as_the_flow_ends_otherwise_are_not_kept(
    wire: WireChecker, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The flow is still open after the token request, and ends (the request gave up)
    while its tokens are being saved: they are not kept, and the page says so as to a late
    form (409)."""
    async with rig() as r, httpx.AsyncClient(timeout=10) as http, httpx.AsyncClient(timeout=10) as browser:
        oauth = r.app.url_mode.oauth
        save = oauth.save
        first = await Mcp(http, r.running.url, wire).call()
        _, url = url_of(first)
        flow_id = first_flow_id(url)

        async def save_as_the_request_gives_up(provider: str, principal: str | None, tokens: Any) -> None:
            await save(provider, principal, tokens)
            await r.app.url_mode._end(flow_id, "cancelled")

        monkeypatch.setattr(oauth, "save", save_as_the_request_gives_up)
        done = await sign_in(browser, url)
        assert "Connected" not in done.text
        assert done.status_code == 409 and "already been cancelled" in done.text and "not used" in done.text
        assert await oauth.stored("example", None) is None


# ---- the scopes granted --------------------------------------------------------------------


async def test_a_grant_narrower_than_asked_is_not_a_connection(
    wire: WireChecker, caplog: pytest.LogCaptureFixture
) -> None:
    """The provider grants fewer scopes than the server's configuration asks (RFC 6749
    section 3.3 lets it, saying so in ``scope``): the page does not say 'Connected', the
    tokens are not kept, and the tool (and the log) hears which scopes are missing, what
    was asked, what the provider granted, and how to turn the check off."""
    caplog.set_level(logging.INFO, logger="mcp_elicit")
    async with rig() as r, httpx.AsyncClient(timeout=10) as http, httpx.AsyncClient(timeout=10) as browser:
        r.provider.register(r.base + CALLBACK, scope="profile")  # the provider allows no "repo"
        mcp = Mcp(http, r.running.url, wire)
        first = await mcp.call()
        key, url = url_of(first)
        done = await sign_in(browser, url)
        assert r.provider.exchanges == 1
        assert {token.scope for token in r.provider.tokens.values()} == {"profile"}
        assert "Connected" not in done.text and "did not work" in done.text
        flow = await r.app.url_mode.flows.get(first_flow_id(url))
        assert flow is not None and (flow.status, flow.detail) == ("failed", "insufficient_scope")
        assert await r.app.url_mode.vault.get("tokens", "example", None) is None
        for secret in r.provider.issued:
            assert secret.encode() not in store_dump(r.store)
        final = await mcp.call(inputResponses={key: {"action": "accept"}}, requestState=first["requestState"])
        assert final["isError"] is True, final
        text = final["content"][0]["text"]
        assert "example granted fewer scopes than asked" in text and "missing: repo" in text
        told = "asked: profile repo; granted: 'profile'"
        assert told in text and "check_granted_scopes=False" in text
        (logged,) = [r.getMessage() for r in caplog.records if told in r.getMessage()]
        assert told in logged and "check_granted_scopes=False" in logged
        assert r.provider.api_calls == 0
        # asked again, and granted in full this time: connected
        r.provider.register(r.base + CALLBACK)
        again = await mcp.call()
        key, url = url_of(again)
        assert "Connected" in (await sign_in(browser, url)).text
        final = await mcp.call(inputResponses={key: {"action": "accept"}}, requestState=again["requestState"])
        assert final["content"][0]["text"] == "hello octocat (profile repo)"


async def test_a_connection_made_before_a_scope_was_added_is_asked_again(wire: WireChecker) -> None:
    """Tokens stored while the configuration asked for fewer scopes than it does now are not
    used: the person is asked to connect again, for every scope now asked."""
    async with rig() as r, httpx.AsyncClient(timeout=10) as http, httpx.AsyncClient(timeout=10) as browser:
        mcp = await connected(r, wire, http, browser)
        assert r.provider.api_calls == 1
        r.provider.register(r.base + CALLBACK, scope="profile repo email")
        providers = r.app.url_mode.providers
        providers["example"] = dataclasses.replace(providers["example"], scopes=("profile", "repo", "email"))
        again = await mcp.call()
        key, url = url_of(again)  # not the stored connection: asked again
        assert r.provider.api_calls == 1
        authorize = await continue_to_provider(browser, await open_link(browser, url))
        assert authorize.params["scope"] == "profile repo email"
        assert "Connected" in (await browser.get(await consent(browser, authorize))).text
        final = await mcp.call(inputResponses={key: {"action": "accept"}}, requestState=again["requestState"])
        assert final["content"][0]["text"] == "hello octocat (profile repo email)"


class Answers:
    """A token exchange that answers from a list (no HTTP)."""

    def __init__(self, *answers: Mapping[str, Any]) -> None:
        self.answers = list(answers)

    async def exchange(
        self, provider: OAuthProvider, code: str, verifier: str, redirect_uri: str
    ) -> Mapping[str, Any]:
        return self.answers.pop(0)

    async def refresh(self, provider: OAuthProvider, refresh_token: str) -> Mapping[str, Any]:
        return self.answers.pop(0)

    def client(self, connection: Connection, **options: Any) -> Any:
        raise AssertionError("not used here")


async def test_granted_scopes_without_sockets() -> None:
    """An answer without ``scope`` grants what was asked (RFC 6749 section 3.3), and is
    recorded so; a refresh answer without ``scope`` keeps the one before; a refresh that
    narrows it below what is asked drops the tokens."""
    from mcp_elicit.server.flows import Flow
    from mcp_elicit.server.oauth import PendingAuthorization

    clock = [1000.0]
    app = Server("offline", store=MemoryStore(), clock=lambda: clock[0])
    app.oauth_provider(
        "example",
        authorize_url="https://id.example.com/authorize",
        token_url="https://id.example.com/token",
        client_id="c",
        scopes=["profile", "repo"],
    )
    app.url_mode.token_exchange = Answers(
        {"access_token": "a1", "refresh_token": "r1", "expires_in": 60},
        {"access_token": "a2", "expires_in": 60},
        {"access_token": "a3", "expires_in": 60, "scope": "profile"},
        {"access_token": "a4", "scope": "repo  profile"},
    )
    oauth = app.url_mode.oauth
    flow = Flow("f1", "oauth", "example", "ann", expires=1600.0)
    tokens = await oauth.redeem(flow, PendingAuthorization("f1", "v" * 43, "http://127.0.0.1:1/cb"), "code")
    assert tokens.scope == "profile repo"
    await oauth.save("example", "ann", tokens)
    clock[0] = 1100.0  # expired: refreshed, the answer says nothing of scope
    refreshed = await oauth.usable("example", "ann")
    assert refreshed is not None and (refreshed.access_token, refreshed.scope) == ("a2", "profile repo")
    clock[0] = 1200.0  # refreshed again, narrower than asked: dropped, asked again
    assert await oauth.usable("example", "ann") is None
    assert await oauth.stored("example", "ann") is None
    # more than asked, in any order and spacing, is enough
    tokens = await oauth.redeem(flow, PendingAuthorization("f1", "v" * 43, "http://127.0.0.1:1/cb"), "code")
    await oauth.save("example", "ann", tokens)
    assert await oauth.usable("example", "ann") is not None
    await app.url_mode.store.close()


async def test_a_grant_listing_its_scopes_with_commas_is_a_connection() -> None:
    """GitHub's token answer lists the scopes granted with commas ("repo,read:org"): all
    that was asked is granted, so the tokens are kept, not refused as insufficient_scope."""
    from mcp_elicit.server.flows import Flow
    from mcp_elicit.server.oauth import PendingAuthorization

    app = Server("offline", store=MemoryStore(), clock=lambda: 1000.0)
    app.oauth_provider(
        "github",
        authorize_url="https://github.example.com/login/oauth/authorize",
        token_url="https://github.example.com/login/oauth/access_token",
        client_id="c",
        scopes=["repo", "read:org"],
    )
    app.url_mode.token_exchange = Answers(
        {"access_token": "a1", "token_type": "bearer", "scope": "repo,read:org"},
        {"access_token": "a2", "token_type": "bearer", "scope": "repo,gist"},
    )
    oauth = app.url_mode.oauth
    flow = Flow("f1", "oauth", "github", "ann", expires=1600.0)
    pending = PendingAuthorization("f1", "v" * 43, "http://127.0.0.1:1/cb")
    tokens = await oauth.redeem(flow, pending, "code")
    await oauth.save("github", "ann", tokens)
    kept = await oauth.usable("github", "ann")
    assert kept is not None and kept.access_token == "a1"
    with pytest.raises(OAuthError, match=r"missing: read:org;"):  # still told what lacks
        await oauth.redeem(flow, pending, "code")
    await app.url_mode.store.close()
