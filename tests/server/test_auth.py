"""The authentication hook: bearer tokens give a principal; state is bound to it."""

from __future__ import annotations

import re
from typing import Any

import httpx
import pytest

from mcp_elicit import Context, Form, Server, StaticTokens, String
from mcp_elicit.server.auth import Principal, ResourceMetadata
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


async def _raw(client: httpx.AsyncClient, authorization: list[str]) -> httpx.Response:
    """A ``whoami`` call carrying these ``Authorization`` header values, each as its own field."""
    headers = [
        ("accept", "application/json, text/event-stream"),
        ("mcp-protocol-version", "2026-07-28"),
        ("mcp-method", "tools/call"),
        ("mcp-name", "whoami"),
        *(("authorization", value.encode()) for value in authorization),
    ]
    body = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "whoami", "_meta": META}}
    return await client.post("http://127.0.0.1/mcp", json=body, headers=headers)


async def test_two_authorization_headers_are_a_malformed_request(client: httpx.AsyncClient) -> None:
    # RFC 6750 §3.1: more than one way of sending a token is invalid_request (400); taking
    # either one would let a proxy that checks the first and this server disagree on who calls
    for values in (["Bearer tok-bob", "Bearer tok-alice"], ["Bearer tok-alice", "Bearer tok-alice"]):
        response = await _raw(client, values)
        assert response.status_code == 400, response.text
        assert 'error="invalid_request"' in response.headers["www-authenticate"]


@pytest.mark.parametrize(
    "value", ["Bearer", "Bearer ", "bearer tok-alice extra", "Bearer tok,alice", "Bearer tök", 'Bearer "tok"']
)
async def test_a_bearer_token_that_is_not_a_b64token_is_a_malformed_request(
    client: httpx.AsyncClient, value: str
) -> None:
    response = await _raw(client, [value])
    assert response.status_code == 400, response.text
    challenge = response.headers["www-authenticate"]
    assert 'error="invalid_request"' in challenge
    # RFC 6750 §3: error_description is printable ASCII without '"' and '\'
    description = re.search(r'error_description="([^"]*)"', challenge)
    assert description is not None and re.fullmatch(r"[\x20\x21\x23-\x5b\x5d-\x7e]*", description[1])


@pytest.mark.parametrize("value", ["bearer tok-alice", "BEARER tok-alice", "Bearer    tok-alice"])
async def test_the_scheme_is_case_insensitive_and_may_be_followed_by_several_spaces(
    client: httpx.AsyncClient, value: str
) -> None:
    response = await _raw(client, [value])
    assert response.status_code == 200, response.text
    assert response.json()["result"]["content"][0]["text"] == "alice"


async def test_another_scheme_is_answered_like_no_credentials(client: httpx.AsyncClient) -> None:
    # RFC 6750 §3.1: a request with an unsupported method of authentication gets no error code
    response = await _raw(client, ["Basic dXNlcjpwYXNz"])
    assert response.status_code == 401
    assert response.headers["www-authenticate"] == 'Bearer realm="mcp"'


def test_scopes_given_as_the_tokens_scope_string_are_its_scope_tokens() -> None:
    # A JWT access token's (or an introspection answer's) ``scope`` is one space-separated
    # string; handed over as it is, it must not be searched for substrings
    metadata = ResourceMetadata(["https://auth.example.com"], required_scopes=["admin", "mcp:read"])
    principal = Principal("ann", scopes="notadmin mcp:reader")  # type: ignore[arg-type]
    assert principal.scopes == frozenset({"notadmin", "mcp:reader"})
    assert metadata.missing(principal) == ["admin", "mcp:read"]
    assert not metadata.missing(Principal("bob", scopes="mcp:read  admin"))  # type: ignore[arg-type]
    assert Principal("cy", scopes=["a", "b"]).scopes == frozenset({"a", "b"})  # type: ignore[arg-type]


def test_a_scope_given_twice_is_named_once() -> None:
    # RFC 6749 §3.3: a scope is a set of scope-tokens; a challenge (and a tool's scopes) naming
    # one twice ("repo repo") reads as if two were needed
    metadata = ResourceMetadata(["https://auth.example.com"], required_scopes=["repo", "profile", "repo"])
    assert metadata.required_scopes == ("repo", "profile")
    assert 'scope="repo profile"' in metadata.challenge("https://mcp.example.com/.well-known/x")
    app = Server("scoped")

    @app.tool(scopes=["repo", "repo"])
    def push() -> str:
        return "pushed"

    assert app.tool_scopes == {"push": ("repo",)}
