"""The client's MCP authorization (transports/http_auth.py) against a real authorization
server (authlib, tests/support/mcp_authorization.py) and a real mcp-elicit server that
wants its tokens, both on 127.0.0.1 under uvicorn, at both revisions.

The official conformance suite runs every scored authorization scenario too
(tests/conformance); these tests cover what it does not: tokens that expire and refresh,
a refresh the server refuses, stored tokens reused by the next process, parallel requests
sharing one authorization, a person who says no, and secrets kept out of every message.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import stat
import urllib.parse
from pathlib import Path
from typing import Any

import pytest

from mcp_elicit.errors import AuthorizationError, MCPElicitError, TransportError
from mcp_elicit.server.auth import ResourceMetadata
from mcp_elicit.transports.http_auth import FileTokenStore, MemoryTokenStore
from mcp_elicit.transports.http_client import connect_http

from support.http_auth_flow import REVISIONS, call, oauth
from support.mcp_authorization import FollowRedirect, McpAuthorization, serving, whoami_server
from support.procs import uvicorn_server

pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.mark.parametrize("revision", REVISIONS)
async def test_a_protected_server_is_reached_after_registration_and_authorization(
    site: McpAuthorization, revision: str
) -> None:
    authorizer = FollowRedirect()
    auth = oauth(authorizer)
    assert await call(site, auth, revision) == "hello"
    assert site.registrations == 1
    assert site.provider.exchanges == 1
    assert authorizer.asked == [site.base]
    assert auth.issuer == site.base


async def test_without_authorization_the_401_is_reported(site: McpAuthorization) -> None:
    with pytest.raises(TransportError, match="401"):
        async with connect_http(site.url, timeout=10) as client:
            await client.list_tools()


async def test_one_authorization_serves_parallel_requests(site: McpAuthorization) -> None:
    auth = oauth()
    async with connect_http(site.url, auth=auth, versions=["2026-07-28"], timeout=10) as client:
        results = await asyncio.gather(*(client.call_tool("whoami", {}) for _ in range(6)))
    assert all(r["content"][0]["text"] == "hello" for r in results)
    assert site.registrations == 1
    assert site.provider.exchanges == 1


async def test_an_expired_token_is_refreshed_without_asking_again(site: McpAuthorization) -> None:
    authorizer = FollowRedirect()
    auth = oauth(authorizer)
    await call(site, auth)
    site.provider.expire_all()
    assert await call(site, auth) == "hello"
    assert site.provider.refreshes == 1
    assert site.provider.exchanges == 1
    assert len(authorizer.asked) == 1


async def test_a_refused_refresh_leads_to_a_new_authorization(site: McpAuthorization) -> None:
    authorizer = FollowRedirect()
    auth = oauth(authorizer)
    await call(site, auth)
    site.provider.expire_all()
    site.provider.refuse_refresh = True
    assert await call(site, auth) == "hello"
    assert site.provider.exchanges == 2
    assert len(authorizer.asked) == 2
    assert site.registrations == 1  # the registration is kept


async def test_a_token_close_to_expiry_is_refreshed_before_it_is_sent(site: McpAuthorization) -> None:
    site.provider.lifetime = 10  # under the 30 s margin: stale as soon as it is issued
    auth = oauth()
    await call(site, auth)
    await call(site, auth)
    assert site.provider.refreshes >= 1
    assert site.provider.exchanges == 1


async def test_stored_tokens_serve_the_next_process(site: McpAuthorization, tmp_path: Path) -> None:
    path = tmp_path / "state" / "tokens.json"
    first = FollowRedirect()
    await call(site, oauth(first, store=FileTokenStore(path)))
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
    second = FollowRedirect()
    assert await call(site, oauth(second, store=FileTokenStore(path))) == "hello"
    assert second.asked == []
    assert site.provider.exchanges == 1
    assert site.registrations == 1


async def test_a_damaged_store_is_ignored_and_replaced(site: McpAuthorization, tmp_path: Path) -> None:
    path = tmp_path / "tokens.json"
    path.write_text(json.dumps({site.url: {"tokens": {"access_token": 5}, "clients": "no"}}))
    assert await call(site, oauth(store=FileTokenStore(path))) == "hello"
    path.write_text("not json")
    assert await call(site, oauth(store=FileTokenStore(path))) == "hello"
    assert site.url in path.read_text()


async def test_stored_tokens_of_another_server_are_not_used(site: McpAuthorization) -> None:
    store = MemoryTokenStore()
    await call(site, oauth(store=store))
    (record,) = store.records.values()
    store.records = {"http://127.0.0.1:1/mcp": record}
    second = FollowRedirect()
    await call(site, oauth(second, store=store))
    assert second.asked == [site.base]


async def test_consent_refused_is_a_clear_error(site: McpAuthorization) -> None:
    site.provider.consent = False
    with pytest.raises(TransportError, match=r"refused the authorization \(access_denied"):
        await call(site, oauth())
    assert site.provider.exchanges == 0


@pytest.mark.parametrize("server_metadata", [True, False])
async def test_a_2025_03_26_server_is_authorized_by_its_origin(
    site: McpAuthorization, server_metadata: bool
) -> None:
    """No protected resource metadata: the server's origin is its authorization server, with
    RFC 8414 metadata at the root or, without any, the default /authorize, /token and
    /register (the conformance suite's auth/2025-03-26-* judge the same)."""
    site.mcp.resource_metadata = None
    site.server_metadata = server_metadata
    authorizer = FollowRedirect()
    assert await call(site, oauth(authorizer), "2025-11-25") == "hello"
    assert authorizer.asked == [site.base] and site.registrations == 1


async def test_a_2025_03_26_servers_resource_is_its_url_without_the_query(site: McpAuthorization) -> None:
    """The RFC 8707 resource of a server that publishes no metadata is its URL, which the
    client was given with a query (a key, a tenant): the resource indicator is the canonical
    URI, without it (RFC 8707 section 2), in the authorization request as in the token's."""

    class Recording(FollowRedirect):
        def __init__(self) -> None:
            super().__init__()
            self.urls: list[str] = []

        async def authorize(self, url: str, *, issuer: str) -> str:
            self.urls.append(url)
            return await super().authorize(url, issuer=issuer)

    site.mcp.resource_metadata = None
    person = Recording()
    async with connect_http(
        site.url + "?key=k3y", auth=oauth(person), versions=["2025-11-25"], timeout=10
    ) as client:
        await client.call_tool("whoami", {})
    (url,) = person.urls
    assert urllib.parse.parse_qs(urllib.parse.urlsplit(url).query)["resource"] == [site.url]


async def test_an_origin_that_authorizes_nothing_is_a_clear_error(site: McpAuthorization) -> None:
    site.mcp.resource_metadata = None
    site.server_metadata = site.registration = False
    with pytest.raises(TransportError, match="refused to register") as caught:
        await call(site, oauth())
    assert site.base in str(caught.value) and "no protected resource metadata" in str(caught.value)
    assert "MCP 2025-03-26" in str(caught.value)


async def test_a_challenge_naming_missing_metadata_is_a_clear_error() -> None:
    """A server that names its metadata is not a 2025-03-26 one: nothing is guessed then."""
    asked: list[str] = []

    async def app(scope: dict[str, Any], receive: Any, send: Any) -> None:
        asked.append(scope["path"])
        host, port = scope["server"]
        where = f"http://{host}:{port}/.well-known/oauth-protected-resource/gone"
        challenge = f'Bearer resource_metadata="{where}"'.encode()
        await send(
            {"type": "http.response.start", "status": 401, "headers": [(b"www-authenticate", challenge)]}
        )
        await send({"type": "http.response.body", "body": b""})

    async with uvicorn_server(app) as running:
        url = f"http://127.0.0.1:{running.port}/mcp"
        with pytest.raises(TransportError, match="publishes no protected resource metadata") as caught:
            async with connect_http(url, auth=oauth(), timeout=10) as client:
                await client.list_tools()
    assert "/.well-known/oauth-protected-resource/gone" in str(caught.value)
    assert not any(path.startswith("/.well-known/oauth-authorization-server") for path in asked)
    assert "/register" not in asked


async def test_an_authorization_server_without_pkce_is_refused(site: McpAuthorization) -> None:
    site.pkce = False
    with pytest.raises(TransportError, match="PKCE"):
        await call(site, oauth())
    assert site.registrations == 0


async def test_without_registration_a_client_id_is_needed(site: McpAuthorization) -> None:
    site.registration = False
    with pytest.raises(TransportError, match="pass its client id"):
        await call(site, oauth())


async def test_a_pre_registered_client_is_used_as_given(site: McpAuthorization) -> None:
    from support.oauth_provider import CLIENT_ID, CLIENT_SECRET

    site.registration = False
    authorizer = FollowRedirect()
    site.provider.register(authorizer.redirect_uri)
    auth = oauth(authorizer, client_id=CLIENT_ID, client_secret=CLIENT_SECRET)
    assert await call(site, auth) == "hello"
    assert site.provider.exchanges == 1
    assert auth.client_issuer == site.base  # bound to where it was first used


async def test_a_pre_registered_client_is_never_shown_to_another_authorization_server(
    site: McpAuthorization,
) -> None:
    from support.oauth_provider import CLIENT_ID, CLIENT_SECRET

    site.registration = False
    authorizer = FollowRedirect()
    site.provider.register(authorizer.redirect_uri)
    elsewhere = "https://auth.elsewhere.example"
    auth = oauth(authorizer, client_id=CLIENT_ID, client_secret=CLIENT_SECRET, client_issuer=elsewhere)
    with pytest.raises(AuthorizationError, match=f"registered at {elsewhere}"):
        await call(site, auth)
    assert authorizer.asked == []
    assert site.provider.exchanges == 0


async def test_a_pre_registered_client_stays_bound_to_its_server_in_the_next_process(
    site: McpAuthorization, tmp_path: Path
) -> None:
    """The binding of a client id given beforehand to the authorization server it was first
    used with is stored with the tokens: a later run, told by the server's metadata to go to
    another authorization server, refuses instead of showing it the client's secret."""
    from support.oauth_provider import CLIENT_ID, CLIENT_SECRET

    site.registration = False
    first = FollowRedirect()
    site.provider.register(first.redirect_uri)
    path = tmp_path / "tokens.json"
    given = {"client_id": CLIENT_ID, "client_secret": CLIENT_SECRET}
    assert await call(site, oauth(first, store=FileTokenStore(path), **given)) == "hello"
    site.provider.expire_all()
    site.provider.refuse_refresh = True
    async with serving(whoami_server()) as other:
        other.provider.register(first.redirect_uri)  # the same client id, known there too
        site.mcp.resource_metadata = ResourceMetadata([other.base])
        second = FollowRedirect()
        with pytest.raises(AuthorizationError, match=f"registered at {site.base}"):
            await call(site, oauth(second, store=FileTokenStore(path), **given))
        assert second.asked == []
        assert other.provider.exchanges == 0


async def test_secrets_stay_out_of_errors_and_logs(
    site: McpAuthorization, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG, logger="mcp_elicit")
    auth = oauth()
    await call(site, auth)
    site.provider.expire_all()
    site.provider.refuse_refresh = True
    site.provider.consent = False
    with pytest.raises(MCPElicitError) as caught:
        await call(site, auth)
    assert site.provider.issued, "the provider handed out secrets"
    ours = [r.getMessage() for r in caplog.records if r.name.startswith("mcp_elicit")]
    assert ours, "nothing of ours was logged: the check would prove nothing"
    text = "\n".join(ours) + str(caught.value)
    leaked = [secret for secret in site.provider.issued if secret in text]
    assert not leaked


async def test_a_server_moving_to_another_authorization_server_is_logged_without_secrets(
    site: McpAuthorization, caplog: pytest.LogCaptureFixture
) -> None:
    """The line saying the server now uses another authorization server names the server
    URL the tokens are kept under as any URL is shown: its user name and password left out."""
    caplog.set_level(logging.INFO, logger="mcp_elicit")
    url = site.url.replace("://", "://me:PASSWORD@", 1)
    auth = oauth()
    async with connect_http(url, auth=auth, versions=["2026-07-28"], timeout=10) as client:
        await client.call_tool("whoami", {})
    async with serving(whoami_server()) as other:
        site.mcp.resource_metadata = ResourceMetadata([other.base])
        site.provider.expire_all()
        with contextlib.suppress(MCPElicitError):  # other's tokens are not site's: refused
            async with connect_http(url, auth=auth, versions=["2026-07-28"], timeout=10) as client:
                await client.call_tool("whoami", {})
    moved = [r.getMessage() for r in caplog.records if "now uses authorization server" in r.getMessage()]
    assert moved, "the move was not logged: the check would prove nothing"
    assert other.base in moved[0] and "REDACTED:REDACTED@" in moved[0]
    assert "PASSWORD" not in moved[0]
