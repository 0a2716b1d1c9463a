"""Tokens a sign-in throws away are revoked at the provider (RFC 7009) when it names a
revocation endpoint: those of a sign-in back after its flow ended, of a grant narrower
than asked or narrowed by a refresh, and of a connection the tool forgets; never while a
connection is kept for the same person (the sign-in not kept of two at once), since a
provider may end the whole grant with any one of its tokens. A
revocation that fails (the provider answers 500, or never) changes nothing for the person
or the tool, and shows no token in the log. A real authorization server (authlib, on
127.0.0.1) and the server's real pages, driven over HTTP.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import AsyncIterator, Mapping
from typing import Any

import httpx
import pytest

from mcp_elicit import KeyRing, Server
from mcp_elicit.errors import ConfigError, StoreUnavailable
from mcp_elicit.server.flows import Flow
from mcp_elicit.server.oauth import Connection, OAuthProvider
from mcp_elicit.stores import MemoryStore
from mcp_elicit.transports import page_save
from mcp_elicit.transports.http_server import StreamableHTTP
from mcp_elicit.transports.oauth_client import HttpTokenExchange

from support.gated_store import Gate, GatedStore
from support.oauth_provider import CLIENT_ID, CLIENT_SECRET, OAuthTestProvider, Revocation
from support.pages import browser, open_page, to_the_provider_and_back
from support.procs import uvicorn_server

pytestmark = pytest.mark.anyio
KEY = bytes(range(40, 72))
CALLBACK = "/mcp-elicit/oauth/callback"
#: Bounds each sign-in, so that a hang fails the test instead of stalling it.
TIMEOUT = 30.0


class CookieAuth:
    async def subject(self, headers: Mapping[str, str], cookies: Mapping[str, str]) -> str | None:
        return {"alice": "alice"}.get(cookies.get("who", ""))


@contextlib.asynccontextmanager
async def running(
    *,
    revocation: bool = True,
    granted: str = "profile repo",
    gate: Gate | None = None,
    memory: MemoryStore | None = None,
) -> AsyncIterator[tuple[OAuthTestProvider, Server, str]]:
    """The provider (letting the client be granted ``granted``) and a server asking it for
    "profile repo" (its store ``memory``, a new one by default), with its revocation
    endpoint when ``revocation``; both on 127.0.0.1."""
    provider, memory = OAuthTestProvider(), memory or MemoryStore()
    try:
        async with uvicorn_server(provider.app) as idp:
            try:
                provider.base = f"http://127.0.0.1:{idp.port}"
                store = GatedStore(memory, gate) if gate is not None else memory
                app = Server("revoke", state_keys=KeyRing([KEY]), store=store, page_auth=CookieAuth())
                app.oauth_provider(
                    "example",
                    authorize_url=f"{provider.base}/authorize",
                    token_url=f"{provider.base}/token",
                    client_id=CLIENT_ID,
                    client_secret=CLIENT_SECRET,
                    scopes=["profile", "repo"],
                    revocation_url=f"{provider.base}/revoke" if revocation else None,
                )
                async with uvicorn_server(StreamableHTTP(app)) as server:
                    base = f"http://127.0.0.1:{server.port}"
                    provider.register(base + CALLBACK, scope=granted)
                    yield provider, app, base
            finally:
                provider.release.set()  # a revocation held (revoke_hangs) ends before the provider stops
    finally:
        await memory.close()


async def sign_in(
    app: Server, base: str, started: tuple[Flow, str] | None = None
) -> tuple[str, httpx.Response]:
    """Alice opens a sign-in link (``started``: a flow and its token; else a new one) and
    signs in: the flow's id and the callback's page."""
    flow, token = started or await app.url_mode.flows.start("oauth", "example", "alice")
    async with browser("alice") as alice, asyncio.timeout(TIMEOUT):
        page = await open_page(alice, f"{base}/mcp-elicit/flows/{flow.id}?t={token}")
        return flow.id, await alice.get(await to_the_provider_and_back(alice, page))


def revoked_both(provider: OAuthTestProvider, access_token: str) -> list[Revocation]:
    """The revocations a thrown-away grant's tokens get: its refresh token, then its access
    token, each with its hint and the client's credentials."""
    refresh = provider.tokens[access_token].refresh_token
    assert refresh is not None
    return [
        Revocation(refresh, "refresh_token", CLIENT_ID),
        Revocation(access_token, "access_token", CLIENT_ID),
    ]


@pytest.mark.parametrize("revocation", [True, False], ids=["endpoint", "no-endpoint"])
async def test_a_grant_narrower_than_asked_is_revoked_when_the_provider_has_an_endpoint(
    revocation: bool,
) -> None:
    async with running(revocation=revocation, granted="profile") as (provider, app, base):
        flow_id, page = await sign_in(app, base)
        flow = await app.url_mode.flows.get(flow_id)
        assert flow is not None and (flow.status, flow.detail) == ("failed", "insufficient_scope"), page.text
        [access_token] = provider.tokens  # the provider did issue tokens for the narrower grant
        assert await app.url_mode.oauth.stored("example", "alice") is None
        if revocation:
            assert provider.revocations == revoked_both(provider, access_token)
            assert provider.revoked(access_token)
        else:
            assert provider.revocations == []
            assert not provider.revoked(access_token)


def two_tabs_gate() -> Gate:
    """Holds the first tokens written until the other callback writes tokens, or its marker
    (``test_oauth_race``)."""
    return Gate(holds=frozenset({"tokens"}), counts=frozenset({"tokens", "used"}))


async def test_the_sign_in_not_kept_of_two_at_once_is_not_revoked_while_the_other_is_kept(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """A provider may end the whole grant with any one of its tokens (RFC 7009, Google),
    and the two sign-ins are the same person's: revoking the one not kept could end the
    one kept."""
    gate = two_tabs_gate()
    async with running(gate=gate) as (provider, app, base):
        flow, token = await app.url_mode.flows.start("oauth", "example", "alice")
        caplog.set_level(logging.INFO, "mcp_elicit")
        async with browser("alice") as alice, asyncio.timeout(TIMEOUT):
            first = await open_page(alice, f"{base}/mcp-elicit/flows/{flow.id}?t={token}")
            second = await alice.get(f"{base}/mcp-elicit/flows/{flow.id}")
            callbacks = [await to_the_provider_and_back(alice, tab) for tab in (first, second)]
            gate.armed = True
            answers = await asyncio.gather(*(alice.get(callback) for callback in callbacks))
        assert sorted(answer.status_code for answer in answers) == [200, 409], [a.text for a in answers]
        assert any("Connected." in answer.text for answer in answers)
        kept = await app.url_mode.oauth.stored("example", "alice")
        assert kept is not None and len(provider.tokens) == 2
        ended = await app.url_mode.flows.get(flow.id)
        assert ended is not None and ended.status == "complete"
        assert provider.revocations == []
        assert "thrown away (another sign-in was kept) are not revoked" in caplog.text


async def test_the_sign_in_not_kept_is_not_revoked_while_the_other_is_still_being_kept(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The other sign-in's save outlasts the wait for it (``SAVE_WAIT``): its tokens are not
    stored yet, so nothing shows a connection kept, but revoking these could still end it."""
    monkeypatch.setattr(page_save, "SAVE_WAIT", 0.2)
    gate = Gate(holds=frozenset({"tokens"}), counts=frozenset({"tokens"}))  # released below
    async with running(gate=gate) as (provider, app, base):
        flow, token = await app.url_mode.flows.start("oauth", "example", "alice")
        async with browser("alice") as alice, asyncio.timeout(TIMEOUT):
            first = await open_page(alice, f"{base}/mcp-elicit/flows/{flow.id}?t={token}")
            second = await alice.get(f"{base}/mcp-elicit/flows/{flow.id}")
            callbacks = [await to_the_provider_and_back(alice, tab) for tab in (first, second)]
            gate.armed = True
            pages = {asyncio.create_task(alice.get(callback)) for callback in callbacks}
            [late], held = await asyncio.wait(pages, return_when=asyncio.FIRST_COMPLETED)
            gate.other_wrote.set()  # the kept sign-in's save goes on
            [kept_page] = [await page for page in held]
        assert late.result().status_code == 409, late.result().text
        assert "Connected." in kept_page.text, kept_page.text
        assert await app.url_mode.oauth.stored("example", "alice") is not None
        assert provider.revocations == []


async def test_a_connection_forgotten_is_revoked() -> None:
    async with running() as (provider, app, base):
        _, page = await sign_in(app, base)
        assert "Connected." in page.text, page.text
        kept = await app.url_mode.oauth.stored("example", "alice")
        assert kept is not None and provider.revocations == []
        assert await Connection(app.url_mode.oauth, "example", "alice").forget()
        assert provider.revocations == revoked_both(provider, kept.access_token)
        assert provider.revoked(kept.access_token)
        assert await app.url_mode.oauth.stored("example", "alice") is None


async def test_an_access_token_ended_with_its_refresh_token_is_no_failure(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """Revoking the refresh token ends its grant's access token too (RFC 7009 section 2.1);
    a provider that then answers the access token's revocation 400 ``invalid_token`` (as
    Google's does for a token already revoked) says it is not valid any more: no warning
    that it "stays valid"."""
    async with running() as (provider, app, base):
        provider.revoked_is_invalid = True
        _, page = await sign_in(app, base)
        assert "Connected." in page.text, page.text
        kept = await app.url_mode.oauth.stored("example", "alice")
        assert kept is not None
        caplog.set_level(logging.INFO, "mcp_elicit")
        assert await Connection(app.url_mode.oauth, "example", "alice").forget()
        assert provider.revocations == revoked_both(provider, kept.access_token)
        assert provider.revoked(kept.access_token)
        said = [r.getMessage() for r in caplog.records if r.name == "mcp_elicit.oauth"]
        assert not [
            r for r in caplog.records if r.name == "mcp_elicit.oauth" and r.levelno >= logging.WARNING
        ]
        assert (
            "the access_token of example thrown away (the connection was forgotten) was no longer valid there"
            in said
        )
        assert "revoked 1 token(s) of example" in said[-1], said


class HeldRefresh(HttpTokenExchange):
    """Token requests over HTTP; a refresh waits for ``go``, a revocation for ``refreshed``
    (so that neither order of the two at the provider decides the outcome)."""

    def __init__(self) -> None:
        super().__init__(timeout=10)
        self.started, self.go, self.refreshed = asyncio.Event(), asyncio.Event(), asyncio.Event()

    async def refresh(self, provider: OAuthProvider, refresh_token: str) -> Mapping[str, Any]:
        self.started.set()
        await self.go.wait()
        return await super().refresh(provider, refresh_token)

    async def revoke(self, provider: OAuthProvider, token: str, hint: str) -> None:
        await self.refreshed.wait()
        await super().revoke(provider, token, hint)


async def test_a_connection_forgotten_while_it_is_refreshed_stays_forgotten_and_is_revoked() -> None:
    """The refresh in flight rotates the tokens: forgetting must end what it brings, not
    the tokens it replaces, nor be undone by its save."""
    async with running() as (provider, app, base):
        _, page = await sign_in(app, base)
        assert "Connected." in page.text, page.text
        held = app.url_mode.token_exchange = HeldRefresh()
        oauth = app.url_mode.oauth
        oauth.clock = lambda: time.time() + 2 * provider.lifetime  # the access token expired
        async with asyncio.timeout(TIMEOUT):
            refreshing = asyncio.create_task(oauth.usable("example", "alice"))
            await held.started.wait()
            forgetting = asyncio.create_task(Connection(oauth, "example", "alice").forget())
            await asyncio.sleep(0)  # the tool forgets while the refresh is in flight
            held.go.set()
            fresh = await refreshing
            held.refreshed.set()
            assert await forgetting
        assert fresh is not None
        assert await oauth.stored("example", "alice") is None, "the refresh's save undid forget()"
        assert provider.revoked(fresh.access_token), "the tokens the refresh brought stay valid"


class EndingTheFlow(HttpTokenExchange):
    """Token requests over HTTP; ``flow`` is cancelled while the code is exchanged (the
    tool's request gave up meanwhile)."""

    def __init__(self, app: Server, flow: Flow) -> None:
        super().__init__(timeout=10)
        self.app, self.flow = app, flow

    async def exchange(
        self, provider: OAuthProvider, code: str, verifier: str, redirect_uri: str
    ) -> Mapping[str, Any]:
        answer = await super().exchange(provider, code, verifier, redirect_uri)
        latest = await self.app.url_mode.flows.get(self.flow.id)
        assert latest is not None and await self.app.url_mode.flows.finish(latest, "cancelled")
        return answer


@pytest.mark.parametrize("failure", [None, 500, "hang"], ids=["revoked", "answers-500", "hangs"])
async def test_a_sign_in_back_after_its_flow_ended_is_revoked_and_a_failure_changes_nothing(
    failure: int | str | None, caplog: pytest.LogCaptureFixture
) -> None:
    async with running() as (provider, app, base):
        provider.revoke_status = failure if isinstance(failure, int) else None
        provider.revoke_hangs = failure == "hang"
        app.url_mode.oauth.revoke_wait = 1.0  # bounds a revocation that hangs
        caplog.set_level(logging.INFO, "mcp_elicit")
        started = await app.url_mode.flows.start("oauth", "example", "alice")
        app.url_mode.token_exchange = EndingTheFlow(app, started[0])
        _, page = await sign_in(app, base, started)
        assert page.status_code == 409 and "Connected." not in page.text, page.text
        [thrown] = provider.tokens
        assert await app.url_mode.oauth.stored("example", "alice") is None
        if failure is None:
            assert provider.revocations == revoked_both(provider, thrown)
            assert provider.revoked(thrown)
        else:
            # a refused refresh token does not keep the access token from being tried; a hang
            # uses up the wait, and the access token is not tried
            tried = revoked_both(provider, thrown)[: 2 if failure == 500 else 1]
            assert provider.revocations == tried
            assert not provider.revoked(thrown)
            warned = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
            assert any("could not revoke the refresh_token of example" in said for said in warned), warned
            # the access token is named too: refused, or never tried once the wait ran out
            [access] = [said for said in warned if "the access_token of example" in said]
            assert ("not tried" in access) == (failure == "hang"), access
        assert not any(secret in caplog.text for secret in provider.issued)


async def test_tokens_a_refresh_narrowed_are_revoked() -> None:
    async with running() as (provider, app, base):
        _, page = await sign_in(app, base)
        assert "Connected." in page.text, page.text
        first = await app.url_mode.oauth.stored("example", "alice")
        assert first is not None
        provider.writes_scope = "profile"  # the refresh grants less than asked
        oauth = app.url_mode.oauth
        oauth.clock = lambda: time.time() + 2 * provider.lifetime  # the access token expired
        assert await oauth.usable("example", "alice") is None
        [refreshed] = [token for token in provider.tokens if token != first.access_token]
        assert provider.revocations == revoked_both(provider, refreshed)
        assert provider.revoked(refreshed)


class HeldRevocation(HttpTokenExchange):
    """Token requests over HTTP; a revocation says it ``started``, then waits for ``go``."""

    def __init__(self) -> None:
        super().__init__(timeout=10)
        self.started, self.go = asyncio.Event(), asyncio.Event()

    async def revoke(self, provider: OAuthProvider, token: str, hint: str) -> None:
        self.started.set()
        await self.go.wait()
        await super().revoke(provider, token, hint)


async def test_revoking_what_a_refresh_narrowed_holds_up_no_other_request_for_the_connection() -> None:
    """The revocation may take ``revoke_wait``: it runs once the connection's refresh lock
    is let go, so the tool forgetting the connection meanwhile is not held up by it."""
    async with running() as (provider, app, base):
        _, page = await sign_in(app, base)
        assert "Connected." in page.text, page.text
        oauth = app.url_mode.oauth
        first = await oauth.stored("example", "alice")
        assert first is not None
        provider.writes_scope = "profile"  # the refresh grants less than asked
        held = app.url_mode.token_exchange = HeldRevocation()
        oauth.revoke_wait = 2 * TIMEOUT  # never what ends the held revocation here
        oauth.clock = lambda: time.time() + 2 * provider.lifetime  # the access token expired
        async with asyncio.timeout(TIMEOUT):
            refreshing = asyncio.create_task(oauth.usable("example", "alice"))
            await held.started.wait()  # the narrowed tokens' revocation is under way, held
            assert not await Connection(oauth, "example", "alice").forget(), "nothing is kept to forget"
            assert not refreshing.done()
            held.go.set()
            assert await refreshing is None
        [refreshed] = [token for token in provider.tokens if token != first.access_token]
        assert provider.revocations == revoked_both(provider, refreshed)


def test_a_revocation_url_is_checked_as_the_other_urls() -> None:
    with pytest.raises(ConfigError, match="revocation_url 'http://provider\\.example/revoke'"):
        OAuthProvider(
            "example",
            authorize_url="https://provider.example/authorize",
            token_url="https://provider.example/token",
            client_id="c",
            revocation_url="http://provider.example/revoke",
        )


class TokensUnreadable(MemoryStore):
    """A store whose reads of stored tokens fail (it went down) once ``broken`` is set."""

    broken = False

    async def get(self, namespace: str, key: str) -> bytes | None:
        if self.broken and namespace == "tokens":
            raise StoreUnavailable
        return await super().get(namespace, key)


async def test_a_store_that_cannot_say_whether_a_connection_is_kept_fails_nothing_and_revokes_nothing(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """Revocation never fails what threw the tokens away; unsure whether a connection is
    kept (which revoking could end), it revokes nothing."""
    store = TokensUnreadable()
    async with running(memory=store) as (provider, app, base):
        caplog.set_level(logging.INFO, "mcp_elicit")
        started = await app.url_mode.flows.start("oauth", "example", "alice")
        app.url_mode.token_exchange = EndingTheFlow(app, started[0])
        store.broken = True
        _, page = await sign_in(app, base, started)
        assert page.status_code == 409 and "Connected." not in page.text, page.text
        assert len(provider.tokens) == 1 and provider.revocations == []
        assert "not revoked: the store could not say whether a connection to it is kept" in caplog.text
