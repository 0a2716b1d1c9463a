"""Third-party sign-in over real HTTP, the rig its tests share: a server whose handler asks for a
connection to a provider, a real OAuth authorization server (authlib, on 127.0.0.1), an MCP
connection recorded byte for byte, and an httpx client standing in for the browser."""

from __future__ import annotations

import contextlib
import re
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any

import httpx

from mcp_elicit import Context, KeyRing, Server
from mcp_elicit.stores import MemoryStore
from mcp_elicit.transports.http_server import StreamableHTTP

from support.oauth_provider import CLIENT_ID, CLIENT_SECRET, OAuthTestProvider
from support.principals import CookieAuth, Tokens
from support.procs import InProcess, uvicorn_server
from support.url_mode import Mcp as UrlModeMcp
from support.wire import WireChecker

CALLBACK = "/mcp-elicit/oauth/callback"


def build(store: MemoryStore, provider: str, *, auth: bool = False) -> Server:
    app = Server(
        "oauth-test",
        state_keys=KeyRing([bytes(range(72, 104))]),
        store=store,
        flow_wait=0.3,
        auth=Tokens() if auth else None,
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


class Mcp(UrlModeMcp):
    """The rig's ``whoami`` tool called over plain HTTP; ``call`` gives the result."""

    def __init__(
        self, http: httpx.AsyncClient, url: str, wire: WireChecker, token: str | None = None
    ) -> None:
        super().__init__(http, url, wire, token, tool="whoami")

    async def call(self, **extra: Any) -> dict[str, Any]:
        result: dict[str, Any] = (await super().call(**extra))["result"]
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


def first_flow_id(url: str) -> str:
    match = re.search(r"/flows/([^/?]+)", url)
    assert match is not None
    return match.group(1)


async def connected(r: Rig, wire: WireChecker, http: httpx.AsyncClient, browser: httpx.AsyncClient) -> Mcp:
    mcp = Mcp(http, r.running.url, wire)
    first = await mcp.call()
    key, url = url_of(first)
    assert "Connected" in (await sign_in(browser, url)).text
    final = await mcp.call(inputResponses={key: {"action": "accept"}}, requestState=first["requestState"])
    assert final["content"][0]["text"] == "hello octocat (profile repo)"
    return mcp
