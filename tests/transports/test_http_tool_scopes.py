"""Per-tool scopes (``app.tool(scopes=...)``) on the Streamable HTTP server: a call whose
token lacks one is refused with 403 ``insufficient_scope`` before the tool runs, on both
revisions, and mcp-elicit's client steps up and succeeds. Real servers on 127.0.0.1: the
authlib authorization server of ``support.mcp_authorization``, and raw HTTP for the
response itself.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator

import httpx
import orjson
import pytest

from mcp_elicit import Context, Principal, Server, StaticTokens
from mcp_elicit.core.dpop import DpopKey
from mcp_elicit.errors import ConfigError
from mcp_elicit.server.auth import ResourceMetadata
from mcp_elicit.transports.http_auth import OAuth
from mcp_elicit.transports.http_client import connect_http
from mcp_elicit.transports.http_server import StreamableHTTP

from support.http import McpHttp, build_request
from support.http_auth_flow import REVISIONS, Recording
from support.mcp_authorization import McpAuthorization, serving, whoami_server
from support.procs import uvicorn_server
from support.sessions import ACCEPT
from support.stdio_pipes import stdio_session
from support.wire import WireChecker

pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def scoped_server(runs: list[str]) -> Server:
    """``whoami`` for anyone the endpoint lets in; ``push`` needs the scope ``repo`` (each
    run of it is appended to ``runs``)."""
    app = whoami_server()

    @app.tool(scopes=["repo"])
    async def push(ctx: Context) -> str:
        runs.append("push")
        return "pushed"

    return app


@pytest.fixture
async def site() -> AsyncIterator[tuple[McpAuthorization, list[str]]]:
    runs: list[str] = []
    async with serving(scoped_server(runs)) as site:
        site.mcp.resource_metadata = ResourceMetadata(
            [site.base], scopes_supported=["profile"], required_scopes=["profile"]
        )
        yield site, runs


@pytest.mark.parametrize("revision", REVISIONS)
async def test_the_client_steps_up_to_a_scoped_tool_and_calls_it(
    site: tuple[McpAuthorization, list[str]], revision: str
) -> None:
    # MCP authorization, "Scope Challenge Handling": a request needing more scope than the
    # token has is answered 403 insufficient_scope naming the scopes, and the client asks
    # for them too (the union) and retries. The tool runs once, with the new token.
    mcp, runs = site
    person = Recording()
    auth = OAuth(person)  # type: ignore[arg-type]
    async with connect_http(mcp.url, auth=auth, versions=[revision], timeout=10) as client:
        assert (await client.call_tool("whoami", {}))["content"][0]["text"] == "hello"
        assert person.scopes == ["profile"]
        assert runs == []
        assert (await client.call_tool("push", {}))["content"][0]["text"] == "pushed"
        assert (await client.call_tool("whoami", {}))["content"][0]["text"] == "hello"
    assert person.scopes == ["profile", "profile repo"]
    assert runs == ["push"]


KEY = DpopKey.generate()
TOKENS = {
    "tok-profile": Principal("ann", scopes="profile"),
    "tok-bound": Principal("ann", scopes="profile", claims={"cnf": {"jkt": KEY.thumbprint}}),
    "tok-repo": Principal("ann", scopes="profile repo"),
    "tok-admin": Principal("ann", scopes="profile admin"),  # admin implies repo
}


@pytest.fixture
async def raw(wire: WireChecker) -> AsyncIterator[tuple[McpHttp, httpx.AsyncClient, list[str]]]:
    runs: list[str] = []
    metadata = ResourceMetadata(
        ["https://as.example"], required_scopes=["profile"], implied_scopes={"admin": ["repo"]}
    )
    app = StreamableHTTP(scoped_server(runs), auth=StaticTokens(TOKENS), resource_metadata=metadata)
    async with uvicorn_server(app) as running, httpx.AsyncClient(timeout=10) as http:
        yield McpHttp(http, running.url, wire), http, runs


def bearer(token: str) -> dict[str, object]:
    return {"Authorization": f"Bearer {token}"}


async def test_a_call_without_the_tools_scope_gets_403_and_the_challenge(
    raw: tuple[McpHttp, httpx.AsyncClient, list[str]],
) -> None:
    mcp, http, runs = raw
    unauthorized = await mcp.call("push", {}, refused=True)
    assert unauthorized.status == 401
    document = unauthorized.headers["www-authenticate"].split("resource_metadata=")[1]
    reply = await mcp.call("push", {}, headers=bearer("tok-profile"), refused=True)
    assert reply.status == 403
    assert reply.headers["www-authenticate"] == (
        'Bearer error="insufficient_scope", error_description="tool \'push\' needs scope repo", '
        f'scope="profile repo", resource_metadata={document}'
    )
    assert runs == []  # refused before the tool ran
    # the document stays the endpoint's: the tool's scope is asked for by step-up
    published = (await http.get(document.strip('"'))).json()
    assert published["scopes_supported"] == ["profile"]
    # a token holding the scope, or one implying it, calls it; other tools need none
    assert (await mcp.call("push", {}, headers=bearer("tok-repo"))).result["content"][0]["text"] == "pushed"
    assert (await mcp.call("push", {}, headers=bearer("tok-admin"))).result["content"][0]["text"] == "pushed"
    assert (await mcp.call("whoami", {}, headers=bearer("tok-profile"))).status == 200
    assert runs == ["push", "push"]
    # tools/list shows a tool the caller cannot call yet (calling it is how it steps up)
    listed = await mcp.request("tools/list", {}, headers=bearer("tok-profile"))
    assert [t["name"] for t in listed.result["tools"]] == ["whoami", "push"]


async def test_a_dpop_request_gets_a_dpop_challenge(
    raw: tuple[McpHttp, httpx.AsyncClient, list[str]],
) -> None:
    mcp, _, runs = raw
    message, headers = build_request("tools/call", {"name": "push", "arguments": {}}, rid=1)
    body = orjson.dumps(message)
    proof = KEY.proof("POST", mcp.url, now=time.time(), access_token="tok-bound", body=body)
    headers |= {"Authorization": "DPoP tok-bound", "DPoP": proof}
    reply = await mcp.post(body, headers)
    assert reply.status == 403
    challenge = reply.headers["www-authenticate"]
    assert challenge.startswith('DPoP algs="') and 'error="insufficient_scope"' in challenge
    assert 'scope="profile repo"' in challenge
    assert runs == []


async def test_a_2025_11_25_session_request_gets_the_same_403(
    raw: tuple[McpHttp, httpx.AsyncClient, list[str]],
) -> None:
    mcp, http, runs = raw
    auth = {"accept": ACCEPT, "authorization": "Bearer tok-profile"}
    init = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-11-25",
            "capabilities": {},
            "clientInfo": {"name": "raw", "version": "1"},
        },
    }
    opened = await http.post(mcp.url, json=init, headers=auth)
    assert opened.status_code == 200
    session = {
        **auth,
        "mcp-session-id": opened.headers["mcp-session-id"],
        "mcp-protocol-version": "2025-11-25",
    }
    await http.post(mcp.url, json={"jsonrpc": "2.0", "method": "notifications/initialized"}, headers=session)
    call = {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "push", "arguments": {}}}
    refused = await http.post(mcp.url, json=call, headers=session)
    assert refused.status_code == 403
    assert 'error="insufficient_scope"' in refused.headers["www-authenticate"]
    assert 'scope="profile repo"' in refused.headers["www-authenticate"]
    assert runs == []
    stepped_up = {**session, "authorization": "Bearer tok-repo"}
    answered = await http.post(mcp.url, json=call, headers=stepped_up)
    assert answered.status_code == 200, answered.text
    assert "pushed" in answered.text
    assert runs == ["push"]


async def test_without_resource_metadata_the_challenge_still_names_the_scope(wire: WireChecker) -> None:
    runs: list[str] = []
    app = StreamableHTTP(scoped_server(runs), auth=StaticTokens(TOKENS))
    async with uvicorn_server(app) as running, httpx.AsyncClient(timeout=10) as http:
        mcp = McpHttp(http, running.url, wire)
        reply = await mcp.call("push", {}, headers=bearer("tok-profile"), refused=True)
    assert reply.status == 403
    assert reply.headers["www-authenticate"] == (
        'Bearer realm="mcp", error="insufficient_scope", '
        'error_description="tool \'push\' needs scope repo", scope="repo"'
    )
    assert runs == []


async def test_a_scoped_tool_is_never_served_over_http_without_token_checks(wire: WireChecker) -> None:
    runs: list[str] = []
    with pytest.raises(ConfigError, match="'push' needs scopes: serving it over HTTP needs auth="):
        StreamableHTTP(scoped_server(runs))
    # registered after the app was made: refused at the call, never open to anyone
    server = whoami_server()
    app = StreamableHTTP(server)

    @server.tool(scopes=["repo"])
    async def push(ctx: Context) -> str:
        runs.append("push")
        return "pushed"

    async with uvicorn_server(app) as running, httpx.AsyncClient(timeout=10) as http:
        mcp = McpHttp(http, running.url, wire)
        assert (await mcp.call("push", {}, refused=True)).status == 403
        server.remove_tool("push")
        assert (await mcp.call("whoami", {})).status == 200
        # removed, its scopes go too: a call of it is an unknown tool's, not a 403
        gone = await mcp.call("push", {})
        assert gone.status == 200 and "push" in gone.error["message"]
        # registered again without scopes: no longer refused
        server.tool(name="push")(lambda: "open")
        assert (await mcp.call("push", {})).result["content"][0]["text"] == "open"
    assert runs == []


@pytest.mark.parametrize("scopes", ["repo", ["repo read"], ['re"po'], [""], [3], None], ids=lambda x: repr(x))
def test_scopes_must_be_a_list_of_scope_names(scopes: object) -> None:
    with pytest.raises(ConfigError, match=r"app.tool\(\): scopes: a list of scope names"):
        Server("s").tool(scopes=scopes)  # type: ignore[arg-type]


async def test_on_stdio_a_scoped_tool_is_called_without_a_token() -> None:
    # MCP authorization is HTTP's: over stdio the person who started the server is the
    # caller, with the credentials of its environment, so the scopes are not checked.
    runs: list[str] = []
    async with stdio_session(scoped_server(runs)) as pipes:
        pipes.write({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "push"}})
        answer = (await pipes.until(2))[-1]
    assert answer["result"]["content"][0]["text"] == "pushed"
    assert runs == ["push"]


async def test_a_dpop_client_steps_up_to_a_scoped_tool(site: tuple[McpAuthorization, list[str]]) -> None:
    # The 403 to a DPoP request is a DPoP challenge (RFC 9449 §7.1); the client steps up
    # from it as from a Bearer one, and its new token is bound to the same key.
    mcp, runs = site
    mcp.dpop = True
    person = Recording()
    auth = OAuth(person)  # type: ignore[arg-type]
    async with connect_http(mcp.url, auth=auth, versions=["2026-07-28"], timeout=10) as client:
        assert (await client.call_tool("whoami", {}))["content"][0]["text"] == "hello"
        assert (await client.call_tool("push", {}))["content"][0]["text"] == "pushed"
    assert person.scopes == ["profile", "profile repo"]
    assert len(set(mcp.dpop_tokens.bound.values())) == 1 and len(mcp.dpop_tokens.bound) == 2
    assert runs == ["push"]


@pytest.mark.parametrize("revision", REVISIONS)
async def test_concurrent_calls_of_a_scoped_tool_step_up_once(
    site: tuple[McpAuthorization, list[str]], revision: str
) -> None:
    # Two calls of the tool at once both meet the 403; the first steps up, and the second
    # takes the token that first got (its scope asked already covers the challenge)
    # instead of sending the person to sign in a second time for the same scope.
    mcp, runs = site
    person = Recording()
    auth = OAuth(person)  # type: ignore[arg-type]
    async with connect_http(mcp.url, auth=auth, versions=[revision], timeout=10) as client:
        assert (await client.call_tool("whoami", {}))["content"][0]["text"] == "hello"
        answers = await asyncio.gather(client.call_tool("push", {}), client.call_tool("push", {}))
    assert [a["content"][0]["text"] for a in answers] == ["pushed", "pushed"]
    assert person.scopes == ["profile", "profile repo"]
    assert runs == ["push", "push"]
