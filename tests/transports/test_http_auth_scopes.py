"""Which scope the client's MCP authorization (transports/http_auth.py) asks for, seen
on the wire: the authorization URLs a real authorization server (authlib,
tests/support/mcp_authorization.py) is sent to, in front of a real mcp-elicit server that
challenges for one scope per operation, on 127.0.0.1.
"""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from mcp_elicit.server.auth import ResourceMetadata
from mcp_elicit.transports.http_auth import OAuth
from mcp_elicit.transports.http_client import connect_http

from support.http_auth_flow import Recording
from support.mcp_authorization import McpAuthorization, serving, whoami_server

pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
async def site() -> AsyncIterator[McpAuthorization]:
    async with serving(whoami_server()) as site:
        yield site


def needing(site: McpAuthorization, scope: str) -> None:
    """From now on the server challenges for ``scope`` alone (one operation's scope)."""
    site.mcp.resource_metadata = ResourceMetadata(
        [site.base], scopes_supported=["profile", "repo"], required_scopes=[scope]
    )


async def call(site: McpAuthorization, auth: OAuth) -> str:
    async with connect_http(site.url, auth=auth, versions=["2026-07-28"], timeout=10) as client:
        result = await client.call_tool("whoami", {})
    return str(result["content"][0]["text"])


async def test_a_new_authorization_keeps_the_scopes_asked_before(site: McpAuthorization) -> None:
    # MCP 2026-07-28, basic/authorization "Scope Selection Strategy": re-authorizing, a
    # client asks for the challenged scopes alongside those granted before. A token whose
    # refresh is refused and then signed in again for one operation's scope alone would
    # lose the step-up's scope, and the next operation would ask the person once more.
    person = Recording()
    auth = OAuth(person)  # type: ignore[arg-type]
    needing(site, "profile")
    assert await call(site, auth) == "hello"
    needing(site, "repo")  # 403 insufficient_scope: a step-up
    assert await call(site, auth) == "hello"
    assert person.scopes == ["profile", "profile repo"]
    site.provider.expire_all()
    site.provider.refuse_refresh = True
    needing(site, "profile")  # 401 (expired, no refresh): a new authorization
    assert await call(site, auth) == "hello"
    assert person.scopes[2] == "profile repo"
    needing(site, "repo")  # still granted: nobody is asked again
    assert await call(site, auth) == "hello"
    assert len(person.scopes) == 3
