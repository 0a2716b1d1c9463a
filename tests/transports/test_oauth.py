"""Third-party sign-in over real HTTP, end to end: a handler asks for a connection to a provider
in one line; the person goes from the server's page to a real OAuth authorization server
(authlib, on 127.0.0.1) and back; the handler calls the provider's protected API with the
tokens. Also what the provider checks, and that a state works once, for one browser and one
principal.

The browser is an httpx client stepping through every redirect. The MCP connection is
recorded byte for byte and searched for every code and token the provider handed out;
so is the store."""

from __future__ import annotations

import asyncio
import logging
import re
from collections.abc import Mapping
from typing import Any

import httpx
import pytest

from mcp_elicit.server.oauth import Connection, OAuthProvider
from mcp_elicit.transports.oauth_client import HttpTokenExchange

from support.oauth_provider import CLIENT_ID
from support.oauth_rig import (
    CALLBACK,
    Mcp,
    consent,
    continue_to_provider,
    first_flow_id,
    open_link,
    rig,
    sign_in,
    store_dump,
    url_of,
)
from support.recording import RecordingTransport
from support.wire import WireChecker

pytestmark = pytest.mark.anyio


async def test_connect_end_to_end(wire: WireChecker, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG, logger="mcp_elicit")
    recorder = RecordingTransport()
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
        # on the request's own stream, before its answer (checked by the client)
        (notice,) = client.notifications
        assert await client.session.next_pushed(0) is None
        assert notice == {
            "jsonrpc": "2.0",
            "method": "notifications/elicitation/complete",
            "params": {"elicitationId": params["elicitationId"]},
        }


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
    the code and the description, its control characters escaped, and any URL in it
    redacted before it is cut at 300 characters (the cut falls inside a password here)."""
    caplog.set_level(logging.WARNING, logger="mcp_elicit")
    async with rig() as r, httpx.AsyncClient(timeout=10) as http, httpx.AsyncClient(timeout=10) as browser:
        first = await Mcp(http, r.running.url, wire).call()
        _, url = url_of(first)
        authorize = await continue_to_provider(browser, await open_link(browser, url))
        description = "scope 'admin' is not allowed\n<script>x</script>\x1b[2J"
        description += (
            "y" * (300 - len(description) - len(" see https://me:") - 5) + " see https://me:SECRETPW@idp/"
        )
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
    assert "SECRE" not in record.getMessage()


async def test_a_state_works_once(wire: WireChecker) -> None:
    async with rig() as r, httpx.AsyncClient(timeout=10) as http, httpx.AsyncClient(timeout=10) as browser:
        first = await Mcp(http, r.running.url, wire).call()
        _, url = url_of(first)
        page = await open_link(browser, url)
        callback = await consent(browser, await continue_to_provider(browser, page))
        assert "Connected" in (await browser.get(callback)).text
        # the same browser reloading it (its answer lost) is shown how it ended, exchanging
        # nothing; any other browser is refused
        replay = await browser.get(callback)
        assert replay.status_code == 200 and "Connected" in replay.text
        async with httpx.AsyncClient(timeout=10) as stranger:
            replay = await stranger.get(callback)
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
