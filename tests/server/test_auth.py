"""The authentication hook: bearer tokens give a principal; state is bound to it."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from mcp_elicit import Context, Form, Server, StaticTokens, String
from mcp_elicit.transports.http_server import StreamableHTTP

from support.wire import WireChecker

pytestmark = pytest.mark.anyio
META = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {"elicitation": {}},
}


def build() -> Server:
    app = Server("auth", auth=StaticTokens({"tok-alice": "alice", "tok-bob": "bob"}))

    @app.tool()
    async def whoami(ctx: Context) -> str:
        return ctx.principal.subject if ctx.principal else "nobody"

    @app.tool()
    async def ask(ctx: Context) -> str:
        answer = await ctx.elicit("Name?", Form(name=String()))
        return f"{ctx.principal.subject if ctx.principal else '-'} got {answer.action}"

    return app


async def _post(client: httpx.AsyncClient, token: str | None, name: str, **params: Any) -> httpx.Response:
    headers = {
        "accept": "application/json, text/event-stream",
        "mcp-protocol-version": "2026-07-28",
        "mcp-method": "tools/call",
        "mcp-name": name,
    }
    if token is not None:
        headers["authorization"] = f"Bearer {token}"
    body = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tools/call",
        "params": {"name": name, "_meta": META, **params},
    }
    return await client.post("http://127.0.0.1/mcp", json=body, headers=headers)


@pytest.fixture
async def client() -> Any:
    transport = httpx.ASGITransport(app=StreamableHTTP(build()))
    async with httpx.AsyncClient(transport=transport) as http:
        yield http


async def test_no_token_is_401_with_a_challenge(client: httpx.AsyncClient) -> None:
    response = await _post(client, None, "whoami")
    assert response.status_code == 401
    assert response.headers["www-authenticate"].startswith("Bearer")
    bad = await _post(client, "forged", "whoami")
    assert bad.status_code == 401
    assert 'error="invalid_token"' in bad.headers["www-authenticate"]


async def test_the_principal_reaches_the_handler(client: httpx.AsyncClient, wire: WireChecker) -> None:
    response = await _post(client, "tok-alice", "whoami")
    assert response.status_code == 200
    wire.response("tools/call", response.json())
    assert response.json()["result"]["content"][0]["text"] == "alice"


async def test_state_is_bound_to_the_principal(client: httpx.AsyncClient, wire: WireChecker) -> None:
    first = (await _post(client, "tok-alice", "ask")).json()["result"]
    retry = {"inputResponses": {"elicit-1": {"action": "decline"}}, "requestState": first["requestState"]}
    stolen = (await _post(client, "tok-bob", "ask", **retry)).json()
    wire.response("tools/call", stolen)
    assert stolen["error"] == {"code": -32602, "message": "Invalid or expired requestState"}
    own = (await _post(client, "tok-alice", "ask", **retry)).json()
    assert own["result"]["content"][0]["text"] == "alice got decline"
