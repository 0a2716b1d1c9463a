"""When the client's MCP authorization (transports/http_auth.py) signs in: which refusals
it answers (a real mcp-elicit server behind a real authorization server,
tests/support/mcp_authorization.py, its 401s' ``WWW-Authenticate`` rewritten on the way
out), and what it refuses before anyone is asked; on 127.0.0.1.
"""

from __future__ import annotations

import json
import re
from collections.abc import AsyncIterator
from typing import Any

import pytest

from mcp_elicit.errors import AuthorizationError, TransportError
from mcp_elicit.transports.http_auth import OAuth
from mcp_elicit.transports.http_client import connect_http

from support.mcp_authorization import FollowRedirect, McpAuthorization, serving, whoami_server
from support.procs import uvicorn_server

pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


class Rewriting:
    """``site``'s app, each 401's ``WWW-Authenticate`` replaced by ``challenge`` (None: the
    header left out); ``rewritten`` counts them."""

    def __init__(self, site: McpAuthorization, challenge: bytes | None) -> None:
        self.site = site
        self.challenge = challenge
        self.rewritten = 0

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        async def rewrite(message: dict[str, Any]) -> None:
            if message["type"] == "http.response.start" and message["status"] == 401:
                self.rewritten += 1
                headers = [(k, v) for k, v in message["headers"] if k.lower() != b"www-authenticate"]
                if self.challenge is not None:
                    headers.append((b"www-authenticate", self.challenge))
                message = {**message, "headers": headers}
            await send(message)

        await self.site.app(scope, receive, rewrite)


@pytest.fixture
async def served(request: pytest.FixtureRequest) -> AsyncIterator[Rewriting]:
    site = McpAuthorization(whoami_server())
    app = Rewriting(site, request.param)
    async with uvicorn_server(app) as running:
        site.base = f"http://127.0.0.1:{running.port}"
        yield app


async def call(site: McpAuthorization, auth: OAuth, revision: str) -> str:
    async with connect_http(site.url, auth=auth, versions=[revision], timeout=10) as client:
        result = await client.call_tool("whoami", {})
    return str(result["content"][0]["text"])


@pytest.mark.parametrize("served", [None], indirect=True)
@pytest.mark.parametrize("revision", ["2026-07-28", "2025-11-25"])
async def test_a_401_without_a_challenge_signs_in_from_the_well_known_metadata(
    served: Rewriting, revision: str
) -> None:
    # MCP basic/authorization, Protected Resource Metadata Discovery: without a
    # resource_metadata in WWW-Authenticate the client looks at the well-known URLs. A 401
    # with no WWW-Authenticate at all names none either; the server publishes its metadata
    # there, so signing in works as with a challenge.
    person = FollowRedirect()
    assert await call(served.site, OAuth(person), revision) == "hello"  # type: ignore[arg-type]
    assert served.rewritten >= 1
    assert person.asked == [served.site.base]


@pytest.mark.parametrize("served", [b'Basic realm="mcp"'], indirect=True)
async def test_a_401_asking_for_another_scheme_is_not_signed_in(served: Rewriting) -> None:
    person = FollowRedirect()
    with pytest.raises(TransportError, match="401"):
        await call(served.site, OAuth(person), "2026-07-28")  # type: ignore[arg-type]
    assert person.asked == []
    assert served.site.registrations == 0


class Elsewhere(FollowRedirect):
    """A person's part whose redirect URI is not https, nor on this machine."""

    redirect_uri = "http://client.example/callback"


async def test_a_redirect_uri_neither_https_nor_loopback_is_refused() -> None:
    # MCP basic/authorization security considerations, Communication Security: every
    # redirect URI is localhost or https. One that is plain http to another host would
    # carry the authorization code across the network in the clear.
    person = Elsewhere()
    async with serving(whoami_server()) as site:
        with pytest.raises(
            AuthorizationError, match=re.escape("redirect URI 'http://client.example/callback'")
        ):
            await call(site, OAuth(person), "2026-07-28")  # type: ignore[arg-type]
    assert person.asked == []
    assert site.registrations == 0


async def test_protected_resource_metadata_whose_resource_has_a_fragment_is_refused() -> None:
    # RFC 8707 section 2 (and MCP basic/authorization, Canonical Server URI): the resource
    # parameter is an absolute URI without a fragment. A server whose metadata names
    # https://host/mcp#x would have the client send that to the authorization server,
    # which must refuse it (invalid_target), after the person was sent there.
    site = McpAuthorization(whoami_server())

    async def app(scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] == "http" and scope["path"].startswith("/.well-known/oauth-protected-resource"):
            body = json.dumps({"resource": site.url + "#x", "authorization_servers": [site.base]}).encode()
            headers = [(b"content-type", b"application/json")]
            await send({"type": "http.response.start", "status": 200, "headers": headers})
            await send({"type": "http.response.body", "body": body})
            return
        await site.app(scope, receive, send)

    person = FollowRedirect()
    async with uvicorn_server(app) as running:
        site.base = f"http://127.0.0.1:{running.port}"
        with pytest.raises(AuthorizationError, match=r"resource .*#REDACTED.* has a fragment"):
            await call(site, OAuth(person), "2026-07-28")  # type: ignore[arg-type]
    assert person.asked == []
    assert site.registrations == 0
