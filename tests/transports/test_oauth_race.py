"""One sign-in link opened twice (two tabs, or Back and open again), each visit starting its
own authorization (two ``state`` values) at a real OAuth server (authlib, on 127.0.0.1), both
coming back at the same instant: exactly one callback's tokens are kept and its page says
"Connected"; the other is answered as a form that came once the flow ended (409, "Already
done", nothing of it kept). On one server, and on two instances sharing a Redis store (each
tab's callback reaching a different one).

The race is made the same on every run (``support.gated_store``): the store holds the first
tokens written until the other callback, its token request done, writes too.
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Mapping
from contextlib import AsyncExitStack
from typing import Any

import httpx
import pytest

from mcp_elicit import KeyRing, Server
from mcp_elicit.server.oauth import OAuthProvider
from mcp_elicit.stores import MemoryStore, RedisStore, Store
from mcp_elicit.transports.http_server import StreamableHTTP
from mcp_elicit.transports.oauth_client import HttpTokenExchange

from support.gated_store import Gate, GatedStore
from support.oauth_provider import CLIENT_ID, CLIENT_SECRET, OAuthTestProvider
from support.pages import browser, open_page, to_the_provider_and_back
from support.procs import uvicorn_server

pytestmark = pytest.mark.anyio
KEY = bytes(range(40, 72))
CALLBACK = "/mcp-elicit/oauth/callback"
#: Bounds the whole race, so a hang fails the test instead of stalling it.
RACE_TIMEOUT = 30.0


class CookieAuth:
    async def subject(self, headers: Mapping[str, str], cookies: Mapping[str, str]) -> str | None:
        return {"alice": "alice"}.get(cookies.get("who", ""))


class Recording(HttpTokenExchange):
    """Token requests over HTTP, remembering the access token each code was exchanged for."""

    def __init__(self) -> None:
        super().__init__()
        self.access: dict[str, str] = {}

    async def exchange(
        self, provider: OAuthProvider, code: str, verifier: str, redirect_uri: str
    ) -> Mapping[str, Any]:
        answer = await super().exchange(provider, code, verifier, redirect_uri)
        self.access[code] = str(answer["access_token"])
        return answer


def make_server(store: Store, provider: str, exchange: Recording) -> Server:
    app = Server("race", state_keys=KeyRing([KEY]), store=store, page_auth=CookieAuth(), flow_ttl=60.0)
    app.oauth_provider(
        "example",
        authorize_url=f"{provider}/authorize",
        token_url=f"{provider}/token",
        client_id=CLIENT_ID,
        client_secret=CLIENT_SECRET,
        scopes=["profile", "repo"],
    )
    app.url_mode.token_exchange = exchange
    return app


async def connect_in_two_tabs(
    gate: Gate, apps: list[Server], bases: list[str], provider: OAuthTestProvider, exchange: Recording
) -> None:
    """The link opened in one tab, the page again in a second (on ``bases[-1]``), each
    signing in; both callbacks come back at once, and exactly one is kept."""
    flow, token = await apps[0].url_mode.flows.start("oauth", "example", "alice")
    async with browser("alice") as alice:
        first_tab = await open_page(alice, f"{bases[0]}/mcp-elicit/flows/{flow.id}?t={token}")
        second_tab = await alice.get(f"{bases[-1]}/mcp-elicit/flows/{flow.id}")
        assert second_tab.status_code == 200, second_tab.text
        callbacks = [await to_the_provider_and_back(alice, tab) for tab in (first_tab, second_tab)]
        assert callbacks[0].params["state"] != callbacks[1].params["state"]
        gate.armed = True
        async with asyncio.timeout(RACE_TIMEOUT):
            answers = await asyncio.gather(*(alice.get(callback) for callback in callbacks))
        # each answer lost and reloaded, on the other instance: how the flow ended, nothing
        # exchanged again; another browser is refused alike for both
        ports = [httpx.URL(base).port for base in bases]
        moved = [c.copy_with(port=ports[(ports.index(c.port) + 1) % len(ports)]) for c in callbacks]
        reloads = [await alice.get(callback) for callback in moved]
        async with browser("alice") as stranger:
            forged = moved[0].copy_set_param("state", "x" * 32)
            refused = [await stranger.get(callback) for callback in [*moved, forged]]
    assert [(r.status_code, "Connected." in r.text) for r in reloads] == [(200, True)] * 2
    assert [r.status_code for r in refused] == [403] * 3 and "already used" in refused[0].text
    assert refused[0].text == refused[1].text == refused[2].text  # a used state tells nothing
    assert provider.exchanges == 2  # both sign-ins got their tokens from the provider
    kept = [i for i, answer in enumerate(answers) if answer.status_code == 200]
    assert len(kept) == 1, [(a.status_code, a.text) for a in answers]
    winner, loser = answers[kept[0]], answers[1 - kept[0]]
    assert "Connected." in winner.text, winner.text
    assert loser.status_code == 409, loser.text
    assert "Already done" in loser.text and "already been connected" in loser.text, loser.text
    assert "not used" in loser.text and "Connected." not in loser.text
    wanted = exchange.access[callbacks[kept[0]].params["code"]]
    for app in apps:
        tokens = await app.url_mode.oauth.stored("example", "alice")
        assert tokens is not None and tokens.access_token == wanted
    ended = await apps[-1].url_mode.flows.get(flow.id)
    assert ended is not None and ended.status == "complete"


def gate() -> Gate:
    """Holds the first tokens written until the other callback writes tokens, or its marker."""
    return Gate(holds=frozenset({"tokens"}), counts=frozenset({"tokens", "used"}))


async def test_two_callbacks_of_one_sign_in_at_once_keep_one_and_tell_the_other_409() -> None:
    provider, exchange, memory, held = OAuthTestProvider(), Recording(), MemoryStore(), gate()
    try:
        async with uvicorn_server(provider.app) as idp:
            provider.base = f"http://127.0.0.1:{idp.port}"
            app = make_server(GatedStore(memory, held), provider.base, exchange)
            async with uvicorn_server(StreamableHTTP(app)) as running:
                base = f"http://127.0.0.1:{running.port}"
                provider.register(base + CALLBACK)
                await connect_in_two_tabs(held, [app], [base], provider, exchange)
    finally:
        await memory.close()


async def test_two_callbacks_at_once_on_two_instances_sharing_redis_keep_one(redis_url: str) -> None:
    provider, exchange, held, prefix = (
        OAuthTestProvider(),
        Recording(),
        gate(),
        f"test-{uuid.uuid4().hex[:12]}",
    )
    stores = [RedisStore(redis_url, prefix=prefix) for _ in range(2)]
    try:
        async with AsyncExitStack() as stack:
            idp = await stack.enter_async_context(uvicorn_server(provider.app))
            provider.base = f"http://127.0.0.1:{idp.port}"
            apps = [make_server(GatedStore(store, held), provider.base, exchange) for store in stores]
            bases = []
            for app in apps:
                running = await stack.enter_async_context(uvicorn_server(StreamableHTTP(app)))
                bases.append(f"http://127.0.0.1:{running.port}")
            provider.register(bases[0] + CALLBACK)  # a loopback redirect URI matches on any port
            await connect_in_two_tabs(held, apps, bases, provider, exchange)
    finally:
        for store in stores:
            await store.close()


class Held(Recording):
    """Token requests that wait for ``go`` before going to the provider."""

    def __init__(self) -> None:
        super().__init__()
        self.asked, self.go = asyncio.Event(), asyncio.Event()

    async def exchange(
        self, provider: OAuthProvider, code: str, verifier: str, redirect_uri: str
    ) -> Mapping[str, Any]:
        self.asked.set()
        await self.go.wait()
        return await super().exchange(provider, code, verifier, redirect_uri)


async def test_a_callback_reloaded_while_its_tokens_are_requested_says_to_wait() -> None:
    """The browser reloads the callback while the first one's token request is still under
    way: it is told the sign-in is being completed, not that it cannot be used; once done,
    a reload says "Connected"."""
    provider, exchange, memory = OAuthTestProvider(), Held(), MemoryStore()
    try:
        async with uvicorn_server(provider.app) as idp, asyncio.timeout(RACE_TIMEOUT):
            provider.base = f"http://127.0.0.1:{idp.port}"
            app = make_server(memory, provider.base, exchange)
            async with uvicorn_server(StreamableHTTP(app)) as running, browser("alice") as alice:
                base = f"http://127.0.0.1:{running.port}"
                provider.register(base + CALLBACK)
                flow, token = await app.url_mode.flows.start("oauth", "example", "alice")
                page = await open_page(alice, f"{base}/mcp-elicit/flows/{flow.id}?t={token}")
                callback = await to_the_provider_and_back(alice, page)
                first = asyncio.ensure_future(alice.get(callback))
                await exchange.asked.wait()
                meanwhile = await alice.get(callback)
                exchange.go.set()
                assert "Connected." in (await first).text
                after = await alice.get(callback)
    finally:
        await memory.close()
    assert "cannot be used" not in meanwhile.text and "try again" not in meanwhile.text, meanwhile.text
    assert "Reload this page in a moment" in meanwhile.text, meanwhile.text
    assert (after.status_code, "Connected." in after.text) == (200, True)
    assert provider.exchanges == 1
