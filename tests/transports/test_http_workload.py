"""Workload identity federation end to end: mcp-elicit's client, as a workload holding a JWT
from its platform, gets a token with the JWT-bearer grant (RFC 7523 §2.1) from a real
authorization server (authlib, with the grant judged by joserfc:
``support.workload_grant``) and calls a real mcp-elicit server, on 127.0.0.1 under
uvicorn. The official conformance suite's ``auth/wif-jwt-bearer`` judges the same client
against servers nobody here wrote (tests/conformance).
"""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from mcp_elicit import Context, Server
from mcp_elicit.errors import AuthorizationError, MCPElicitError
from mcp_elicit.transports.http_auth import OAuth
from mcp_elicit.transports.http_client import connect_http

from support.mcp_authorization import FollowRedirect, McpAuthorization, serving

pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def subject_server() -> Server:
    app = Server("workloads")

    @app.tool()
    async def whoami(ctx: Context) -> str:
        assert ctx.principal is not None
        return ctx.principal.subject

    return app


@pytest.fixture
async def site() -> AsyncIterator[McpAuthorization]:
    async with serving(subject_server()) as site:
        yield site


async def whoami(site: McpAuthorization, auth: OAuth, revision: str = "2026-07-28") -> str:
    async with connect_http(site.url, auth=auth, versions=[revision], timeout=10) as client:
        result = await client.call_tool("whoami", {})
    return str(result["content"][0]["text"])


@pytest.mark.parametrize("revision", ["2026-07-28", "2025-11-25"])
async def test_a_workload_reaches_the_tool_as_its_jwts_subject(site: McpAuthorization, revision: str) -> None:
    auth = OAuth(None, assertion=site.workload.assertion(subject="spiffe://example.org/agent"))
    assert await whoami(site, auth, revision) == "spiffe://example.org/agent"
    (request,) = site.workload.requests
    assert request["grant_type"] == "urn:ietf:params:oauth:grant-type:jwt-bearer"
    assert request["resource"] == site.url
    assert "client_id" not in request and site.registrations == 0  # no client identity needed


async def test_a_client_id_given_goes_with_the_assertion(site: McpAuthorization) -> None:
    auth = OAuth(None, client_id="agent-7", assertion=site.workload.assertion())
    assert await whoami(site, auth) == "workload-1"
    assert site.workload.requests[0]["client_id"] == "agent-7"


async def test_the_assertion_is_asked_for_again_when_the_token_runs_out(site: McpAuthorization) -> None:
    issued: list[str] = []

    async def current_jwt() -> str:  # e.g. a platform token file that rotates
        issued.append(site.workload.assertion(subject=f"pod-{len(issued)}"))
        return issued[-1]

    auth = OAuth(None, assertion=current_jwt)
    assert await whoami(site, auth) == "pod-0"
    site.provider.expire_all()
    assert await whoami(site, auth) == "pod-1"
    assert [r["assertion"] for r in site.workload.requests] == issued


@pytest.mark.parametrize(
    "make",
    [
        lambda s: s.workload.assertion(audience="https://other.example/token"),
        lambda s: s.workload.assertion(ttl=-60),
    ],
)
async def test_a_refused_assertion_is_an_error_without_a_retry(site: McpAuthorization, make: object) -> None:
    auth = OAuth(None, assertion=make(site))  # type: ignore[operator]
    with pytest.raises(AuthorizationError, match="refused: invalid_grant"):
        await whoami(site, auth)
    assert len(site.workload.requests) == 1  # no retry, and no other grant tried
    assert site.provider.exchanges == 0


async def test_an_authorization_server_without_the_grant_is_a_clear_error(site: McpAuthorization) -> None:
    site.workload.enabled = False
    with pytest.raises(AuthorizationError, match="does not take the JWT-bearer grant"):
        await whoami(site, OAuth(None, assertion=site.workload.assertion()))
    assert site.workload.requests == []


@pytest.mark.parametrize("value", ["not-a-jwt", "", 42])
async def test_an_assertion_that_is_not_a_jwt_is_a_clear_error(site: McpAuthorization, value: object) -> None:
    auth = OAuth(None, assertion=lambda: value)  # type: ignore[arg-type,return-value]
    with pytest.raises(MCPElicitError, match="not a JWT"):
        await whoami(site, auth)
    assert site.workload.requests == []


def test_an_assertion_is_for_a_workload_only() -> None:
    with pytest.raises(ValueError, match="authorizer=None"):
        OAuth(FollowRedirect(), assertion="a.b.c")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="workload's JWT as assertion"):
        OAuth(None)
