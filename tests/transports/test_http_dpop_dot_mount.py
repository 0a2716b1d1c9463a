"""A mount path that is a dot segment (``Mount("/{tenant}", app)`` reached at
``/%2E%2E/mcp``: the router takes ``..`` as the tenant's name, it resolves nothing) is the
URL the request was sent to as it is: a DPoP proof must name it so. Taking its dots out
made it ``/mcp``, and a proof minted for that other URL (another resource of the same
site) was taken here. Real uvicorn on 127.0.0.1."""

from __future__ import annotations

import time

import httpx
import orjson
import pytest
from starlette.applications import Starlette
from starlette.routing import Mount

from mcp_elicit.core.dpop import DpopKey
from mcp_elicit.server.auth import Principal, ResourceMetadata, StaticTokens
from mcp_elicit.transports.http_server import StreamableHTTP

from support.mcp_authorization import bound_server
from support.procs import uvicorn_server

pytestmark = pytest.mark.anyio

OWNER = DpopKey.generate()
BOUND = "bound-token"
CALL = orjson.dumps(
    {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tools/call",
        "params": {
            "name": "whoami",
            "arguments": {},
            "_meta": {
                "io.modelcontextprotocol/protocolVersion": "2026-07-28",
                "io.modelcontextprotocol/clientCapabilities": {},
                "io.modelcontextprotocol/clientInfo": {"name": "t", "version": "1"},
            },
        },
    }
)
HEADERS = {
    "content-type": "application/json",
    "accept": "application/json, text/event-stream",
    "mcp-protocol-version": "2026-07-28",
    "mcp-method": "tools/call",
    "mcp-name": "whoami",
}


def tenants() -> Starlette:
    principal = Principal("ann", claims={"cnf": {"jkt": OWNER.thumbprint}})
    mcp = StreamableHTTP(
        bound_server(),
        auth=StaticTokens({BOUND: principal}),
        resource_metadata=ResourceMetadata(["https://as.example"]),
    )
    return Starlette(routes=[Mount("/{tenant}", app=mcp)], lifespan=mcp.lifespan)


@pytest.mark.parametrize(
    ("tenant", "elsewhere"),
    [
        ("%2E%2E", "/mcp"),  # tenant "..": not the site's /mcp
        ("%2E", "/mcp"),  # tenant "."
        ("%2e%2E", "/mcp"),
    ],
)
async def test_a_proof_for_the_resolved_url_is_not_taken_at_a_dot_tenant(tenant: str, elsewhere: str) -> None:
    async with uvicorn_server(tenants()) as running, httpx.AsyncClient(timeout=10) as http:
        origin = f"http://127.0.0.1:{running.port}"

        async def send(proof_for: str) -> httpx.Response:
            proof = OWNER.proof("POST", proof_for, now=time.time(), access_token=BOUND, body=CALL)
            headers = {**HEADERS, "authorization": f"DPoP {BOUND}", "dpop": proof}
            return await http.post(f"{origin}/{tenant}/mcp", content=CALL, headers=headers)

        other = await send(f"{origin}{elsewhere}")
        own = await send(f"{origin}/{tenant.upper()}/mcp")  # the URL used, escapes in either case
    assert other.status_code == 401, "a proof for another URL was taken"
    assert "htu is not this endpoint" in other.headers["www-authenticate"]
    assert own.status_code == 200, own.headers.get("www-authenticate")
    assert own.json()["result"]["content"][0]["text"] == f"ann {OWNER.thumbprint}"
