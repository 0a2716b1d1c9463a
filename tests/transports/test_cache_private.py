"""Caching hints over real HTTP, for contents made from what belongs to one caller: a
resource read that used the caller's stored secret or stored connection, or their
principal, completes in one round with no answers, yet its contents are theirs alone, so a
server whose cache scope is public must not hint that a shared cache may serve them to
others."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from mcp_elicit import Context, KeyRing, Server
from mcp_elicit.server.oauth import Tokens
from mcp_elicit.stores import MemoryStore
from mcp_elicit.transports.http_server import StreamableHTTP

from support import principals
from support.http import McpHttp
from support.procs import uvicorn_server
from support.wire import WireChecker

pytestmark = pytest.mark.anyio
META = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {"elicitation": {"form": {}, "url": {}}},
}


def build(store: MemoryStore) -> Server:
    app = Server(
        "cached",
        cache_scope="public",
        cache_ttl_ms=60_000,
        state_keys=KeyRing([bytes(range(8, 40))]),
        store=store,
        auth=principals.Tokens(),
        page_auth=principals.CookieAuth(),
    )
    app.oauth_provider(
        "example",
        authorize_url="https://provider.example/authorize",
        token_url="https://provider.example/token",
        client_id="client",
        client_secret="secret",
    )

    @app.resource("test://key")
    async def key(ctx: Context) -> str:
        answer = await ctx.secret("api_key")
        if answer.secret is None:
            return f"no key ({answer.action})"
        return f"a key of {len(await answer.secret.reveal())} characters"

    @app.resource("test://account")
    async def account(ctx: Context) -> str:
        answer = await ctx.connect("example")
        return "connected" if answer.connection is not None else f"not connected ({answer.action})"

    @app.resource("test://me")
    async def me(ctx: Context) -> str:
        return f"hello {ctx.principal.subject if ctx.principal else 'stranger'}"

    @app.resource("test://me/plain")
    def me_plain(ctx: Context) -> str:  # a plain function: its Context is a ThreadContext
        return f"hello {ctx.principal.subject if ctx.principal else 'stranger'}"

    @app.resource("test://menu")
    def menu() -> str:
        return "soup"

    return app


async def read(http: httpx.AsyncClient, url: str, wire: WireChecker, uri: str, token: str) -> dict[str, Any]:
    body = {"jsonrpc": "2.0", "id": 1, "method": "resources/read", "params": {"uri": uri, "_meta": META}}
    wire.request(body)
    headers = {
        "accept": "application/json, text/event-stream",
        "mcp-protocol-version": "2026-07-28",
        "mcp-method": "resources/read",
        "mcp-name": uri,
        "authorization": f"Bearer {token}",
    }
    response = await http.post(url, json=body, headers=headers)
    assert response.status_code == 200, response.text
    message: dict[str, Any] = response.json()
    wire.response("resources/read", message)
    result: dict[str, Any] = message["result"]
    return result


async def test_contents_made_with_a_stored_secret_or_connection_are_never_public(wire: WireChecker) -> None:
    """ann stored a secret and connected her account earlier: her reads complete at once,
    and are ttlMs 0, cacheScope private, as the same reads are in the round that asked her;
    a resource that uses nothing of hers keeps the server's public hints."""
    store = MemoryStore()
    app = build(store)
    await app.url_mode.vault.put("vault", "api_key", "ann", b"sk-ann-1234")
    await app.url_mode.oauth.save("example", "ann", Tokens("ann-access"))
    async with uvicorn_server(StreamableHTTP(app)) as running, httpx.AsyncClient(timeout=10) as http:
        for uri, text in (("test://key", "a key of 11 characters"), ("test://account", "connected")):
            result = await read(http, running.url, wire, uri, "tok-ann")
            assert result["resultType"] == "complete", uri
            assert result["contents"][0]["text"] == text
            assert (result["ttlMs"], result["cacheScope"]) == (0, "private"), uri
        menu = await read(http, running.url, wire, "test://menu", "tok-ann")
        assert (menu["ttlMs"], menu["cacheScope"]) == (60_000, "public")
    await store.close()


async def test_contents_made_from_the_callers_principal_are_never_public(wire: WireChecker) -> None:
    """A resource that reads ctx.principal says who is calling: ann's contents differ from
    bob's, so they are cacheScope private (a cache per authorization context) with the
    server's ttlMs, as for a resource with a readable rule; from a plain function too."""
    store = MemoryStore()
    app = build(store)
    async with uvicorn_server(StreamableHTTP(app)) as running, httpx.AsyncClient(timeout=10) as http:
        for uri in ("test://me", "test://me/plain"):
            for who in ("ann", "bob"):
                result = await read(http, running.url, wire, uri, f"tok-{who}")
                assert result["contents"][0]["text"] == f"hello {who}"
                assert (result["ttlMs"], result["cacheScope"]) == (60_000, "private"), (uri, who)
    await store.close()


async def test_every_page_of_a_private_list_stays_private(wire: WireChecker) -> None:
    """A resource list holding a resource with a readable rule is cacheScope private, and so
    is every later page of it (the server's choice: the spec makes each page cacheable on
    its own, with no consistency across pages). The rule's resource removed between pages, the next page (asked with the first
    page's cursor) was public, so a shared cache could keep it; it stays private."""
    app = Server("paged", cache_scope="public", cache_ttl_ms=60_000, page_size=1)

    @app.resource("test://mine", readable=lambda p: True)
    def mine() -> str:
        return "mine"

    @app.resource("test://menu")
    def menu() -> str:
        return "soup"

    @app.resource("test://wine")
    def wine() -> str:
        return "red"

    async with uvicorn_server(StreamableHTTP(app)) as running, httpx.AsyncClient(timeout=10) as http:
        mcp = McpHttp(http, running.url, wire)
        first = (await mcp.request("resources/list")).result
        assert first["cacheScope"] == "private"
        app.remove_resource("test://mine")
        second = (await mcp.request("resources/list", {"cursor": first["nextCursor"]})).result
        assert [r["uri"] for r in second["resources"]] == ["test://wine"]
        assert (second["cacheScope"], second["ttlMs"]) == ("private", 60_000)
        fresh = (await mcp.request("resources/list")).result  # a new list request: the server's own
        assert (fresh["cacheScope"], fresh["ttlMs"]) == ("public", 60_000)
