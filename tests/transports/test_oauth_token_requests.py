"""Third-party sign-in: the token requests, against a mock transport and over real HTTP: what
their failures mean, how a token answer's lifetime and size are read, and that tokens arriving
after the flow ended are not kept."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest

from mcp_elicit import Server
from mcp_elicit.errors import OAuthError
from mcp_elicit.server.oauth import Connection, OAuthProvider, Tokens
from mcp_elicit.transports.oauth_client import HttpTokenExchange

from support.oauth_rig import Mcp, first_flow_id, rig, sign_in, url_of
from support.wire import WireChecker

pytestmark = pytest.mark.anyio


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
