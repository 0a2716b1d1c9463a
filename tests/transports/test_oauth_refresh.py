"""Third-party sign-in: refreshing tokens. Over real HTTP, an expired or refused token is
refreshed or the person is asked again; without sockets, the connection handle refreshes once
and keeps or drops the tokens as the provider answers."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping
from typing import Any

import httpx
import pytest

from mcp_elicit import Server
from mcp_elicit.errors import OAuthError
from mcp_elicit.server.oauth import Connection, OAuthProvider, Tokens
from mcp_elicit.stores import MemoryStore

from support.oauth_rig import connected, rig, sign_in, store_dump, url_of
from support.wire import WireChecker

pytestmark = pytest.mark.anyio


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
