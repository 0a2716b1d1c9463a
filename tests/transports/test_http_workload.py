"""Assertion grants end to end: mcp-elicit's client gets a token with the JWT-bearer grant
(RFC 7523 §2.1) from a real authorization server (authlib, with the grant judged by
joserfc: ``support.workload_grant``) and calls a real mcp-elicit server, on 127.0.0.1
under uvicorn, with no person signing in:

* workload identity federation: a workload presents the JWT its platform gave it;
* enterprise-managed authorization: the client trades the person's single sign-on ID
  token at their company's identity provider (``support.enterprise_idp``) for an ID-JAG.

The official conformance suite's ``auth/wif-jwt-bearer`` and
``auth/enterprise-managed-authorization`` judge the same client against servers nobody
here wrote (tests/conformance).
"""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from mcp_elicit import Context, Server
from mcp_elicit.errors import AuthorizationError, MCPElicitError
from mcp_elicit.transports.http_auth import OAuth
from mcp_elicit.transports.http_client import connect_http
from mcp_elicit.transports.http_grants import Audience, EnterpriseIdp

from support.enterprise_idp import CLIENT_AT_IDP
from support.mcp_authorization import SCOPES, FollowRedirect, McpAuthorization, serving
from support.oauth_provider import Client

pytestmark = pytest.mark.anyio


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

    async def current_jwt(audience: Audience) -> str:  # e.g. a platform token file that rotates
        assert audience == Audience(site.base, f"{site.base}/token", site.url, audience.scope)
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
    auth = OAuth(None, assertion=lambda audience: value)  # type: ignore[arg-type,return-value]
    with pytest.raises(MCPElicitError, match="not a JWT"):
        await whoami(site, auth)
    assert site.workload.requests == []


def test_an_assertion_is_for_a_workload_only() -> None:
    with pytest.raises(ValueError, match="authorizer=None"):
        OAuth(FollowRedirect(), assertion="a.b.c")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="workload's JWT as assertion"):
        OAuth(None)


# ---- enterprise-managed authorization ----------------------------------------------------

SECRET = "ema-secret"


def company(site: McpAuthorization, **options: object) -> EnterpriseIdp:
    """The client registered at the company IdP and at the MCP server's authorization
    server, and policy letting it reach the MCP server."""
    site.provider.clients["ema-client"] = Client("ema-client", SECRET, ["http://127.0.0.1:9/cb"], SCOPES)
    site.idp.client_id = "ema-client"
    site.idp.allowed = {site.url}
    id_token = options.pop("id_token", site.idp.id_token("ann@example.com"))
    return EnterpriseIdp(f"{site.base}/idp/token", id_token, CLIENT_AT_IDP, **options)  # type: ignore[arg-type]


@pytest.mark.parametrize("revision", ["2026-07-28", "2025-11-25"])
async def test_a_person_signed_in_at_their_company_reaches_the_tool_without_being_asked(
    site: McpAuthorization, revision: str
) -> None:
    auth = OAuth(None, client_id="ema-client", client_secret=SECRET, assertion=company(site))
    assert await whoami(site, auth, revision) == "ann@example.com"
    (exchange,) = site.idp.exchanges
    assert (exchange["audience"], exchange["resource"]) == (site.base, site.url)
    (grant,) = site.workload.requests
    assert grant["grant_type"] == "urn:ietf:params:oauth:grant-type:jwt-bearer"
    assert site.registrations == 0 and site.provider.exchanges == 0  # no registration, no sign-in


async def test_the_companys_policy_saying_no_is_a_clear_error(site: McpAuthorization) -> None:
    idp = company(site)
    site.idp.allowed = set()
    auth = OAuth(None, client_id="ema-client", client_secret=SECRET, assertion=idp)
    with pytest.raises(AuthorizationError, match="refused the token exchange: access_denied"):
        await whoami(site, auth)
    assert site.workload.requests == []  # nothing went to the MCP server's authorization server


async def test_an_id_token_for_another_client_is_refused_by_the_idp(site: McpAuthorization) -> None:
    idp = company(site, id_token=site.idp.id_token(audience="someone-else"))
    auth = OAuth(None, client_id="ema-client", client_secret=SECRET, assertion=idp)
    with pytest.raises(AuthorizationError, match="invalid_grant"):
        await whoami(site, auth)


async def test_an_id_jag_presented_by_another_client_is_refused(site: McpAuthorization) -> None:
    idp = company(site)
    site.provider.clients["thief"] = Client("thief", "thief-secret", ["http://127.0.0.1:9/cb"], SCOPES)
    auth = OAuth(None, client_id="thief", client_secret="thief-secret", assertion=idp)
    with pytest.raises(AuthorizationError, match="refused: invalid_grant"):
        await whoami(site, auth)


def test_the_identity_providers_endpoint_must_be_https() -> None:
    with pytest.raises(AuthorizationError, match="plain http to a host that is not this machine"):
        EnterpriseIdp("http://idp.example/token", "a.b.c", "client")
