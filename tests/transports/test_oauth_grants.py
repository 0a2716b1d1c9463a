"""Third-party sign-in: the scopes a provider grants. A grant narrower than asked is not a
connection, a connection made before a scope was added is asked again; the same rules
without sockets, and a grant listing its scopes with commas."""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Mapping
from typing import Any

import httpx
import pytest

from mcp_elicit import Server
from mcp_elicit.errors import OAuthError
from mcp_elicit.server.oauth import Connection, OAuthProvider
from mcp_elicit.stores import MemoryStore

from support.oauth_rig import (
    CALLBACK,
    Mcp,
    connected,
    consent,
    continue_to_provider,
    first_flow_id,
    open_link,
    rig,
    sign_in,
    store_dump,
    url_of,
)
from support.wire import WireChecker

pytestmark = pytest.mark.anyio


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
