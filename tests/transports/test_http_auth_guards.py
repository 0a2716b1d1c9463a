"""The client's MCP authorization (transports/http_auth.py) against a real authorization
server and a real mcp-elicit server: what the flow guards against. Options are checked, a
server that keeps refusing ends in an error, signing in does not count against timeouts,
registrations and tokens go to no other server or origin, a refused refresh is tried once,
and a key in the server URL stays out of errors and logs."""

from __future__ import annotations

import asyncio
import logging
from typing import Any

import httpx
import pytest

from mcp_elicit.errors import AuthorizationError, MCPElicitError, TransportError
from mcp_elicit.transports.http_auth import MemoryTokenStore, OAuth
from mcp_elicit.transports.http_client import connect_http

from support.http_auth_flow import REVISIONS, call, oauth
from support.mcp_authorization import FollowRedirect, McpAuthorization, whoami_server
from support.procs import uvicorn_server

pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def test_the_flow_refuses_a_synchronous_client() -> None:
    with httpx.Client(auth=oauth()) as http, pytest.raises(RuntimeError, match="AsyncClient"):
        http.get("http://127.0.0.1:9/")


def test_options_are_checked() -> None:
    with pytest.raises(ValueError, match="need client_id"):
        oauth(client_secret="s")
    with pytest.raises(ValueError, match="not both"):
        oauth(client_id="c", client_secret="s", private_key="k")
    with pytest.raises(ValueError, match="without an authorizer"):
        OAuth(None, client_id="c")
    with pytest.raises(ValueError, match="application_type"):
        oauth(application_type="desktop")


@pytest.mark.parametrize(
    "url",
    [
        "http://client.example/metadata.json",  # not https
        "https://client.example",  # no path
        "https://client.example/",
        "https://client.example/metadata.json#top",  # a fragment
        "https://me:pw@client.example/metadata.json",  # credentials
        "https://client.example/a/../metadata.json",  # a dot segment
        "client.example/metadata.json",
    ],
)
def test_a_client_metadata_url_that_cannot_be_a_client_id_is_refused(url: str) -> None:
    # MCP client registration, Client ID Metadata Documents: the client_id URL is https
    # with a path; one that is not would be sent to the authorization server as the client
    with pytest.raises(ValueError, match="client_metadata_url"):
        oauth(client_metadata_url=url)
    oauth(client_metadata_url="https://client.example/metadata.json")


async def test_a_server_that_keeps_refusing_ends_in_an_error(site: McpAuthorization) -> None:
    async def never(token: str) -> None:
        return None

    site.mcp.auth = type(site.mcp.auth)(never)  # every token is refused
    authorizer = FollowRedirect()
    with pytest.raises(TransportError, match="after 3 authorizations") as caught:
        await call(site, oauth(authorizer))
    assert isinstance(caught.value, AuthorizationError)
    assert len(authorizer.asked) == 3


class SlowPerson(FollowRedirect):
    """A person who takes their time."""

    def __init__(self, seconds: float) -> None:
        super().__init__()
        self.seconds = seconds

    async def authorize(self, url: str, *, issuer: str) -> str:
        await asyncio.sleep(self.seconds)
        return await super().authorize(url, issuer=issuer)


@pytest.mark.parametrize("revision", REVISIONS)
async def test_a_person_signing_in_does_not_count_against_the_timeout(
    site: McpAuthorization, revision: str
) -> None:
    auth = oauth(SlowPerson(1.5))
    async with connect_http(site.url, auth=auth, versions=[revision], timeout=1.0) as client:
        result = await client.call_tool("whoami", {})
    assert result["content"][0]["text"] == "hello"


async def test_requests_waiting_for_a_sign_in_do_not_time_out(site: McpAuthorization) -> None:
    person = SlowPerson(1.5)
    async with connect_http(site.url, auth=oauth(person), versions=["2026-07-28"], timeout=1.0) as client:
        results = await asyncio.gather(*(client.call_tool("whoami", {}) for _ in range(3)))
    assert len(results) == 3
    assert len(person.asked) == 1


async def test_a_failed_sign_in_is_raised_as_an_authorization_error(site: McpAuthorization) -> None:
    site.provider.consent = False
    with pytest.raises(AuthorizationError, match="access_denied"):
        await call(site, oauth())


class Port(FollowRedirect):
    def __init__(self, port: int) -> None:
        super().__init__()
        self.redirect_uri = f"http://127.0.0.1:{port}/callback"


async def test_a_stored_registration_is_kept_for_its_redirect_uri_only(site: McpAuthorization) -> None:
    store = MemoryTokenStore()
    first = oauth(Port(40001), store=store)
    await call(site, first)
    assert first.issuer == site.base
    (record,) = store.records.values()
    assert [c["redirect_uri"] for c in record["clients"].values()] == ["http://127.0.0.1:40001/callback"]
    store.records = {site.url: {**record, "tokens": None}}  # a new sign-in, same registration
    await call(site, oauth(Port(40001), store=store))
    assert site.registrations == 1
    store.records = {site.url: {**store.records[site.url], "tokens": None}}
    await call(site, oauth(Port(40002), store=store))  # an exact-matching server would refuse the old one
    assert site.registrations == 2


async def test_tokens_are_never_presented_to_another_server(site: McpAuthorization) -> None:
    # One OAuth is one MCP server's: its tokens are for that resource (RFC 8707), so another
    # server reached with the same OAuth must not see them, nor have its own stored under
    # the first one's name.
    seen: list[str] = []

    async def other(scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            return
        seen.extend(v.decode() for k, v in scope["headers"] if k == b"authorization")
        headers = [(b"www-authenticate", b'Bearer realm="other"'), (b"content-type", b"text/plain")]
        await send({"type": "http.response.start", "status": 401, "headers": headers})
        await send({"type": "http.response.body", "body": b"Unauthorized"})

    auth = oauth()
    assert await call(site, auth) == "hello"
    async with uvicorn_server(other) as running:
        with pytest.raises(AuthorizationError, match="one OAuth per MCP server"):
            async with connect_http(f"http://127.0.0.1:{running.port}/mcp", auth=auth, timeout=10) as client:
                await client.list_tools()
    leaked = [secret for secret in site.provider.issued if any(secret in value for value in seen)]
    assert not leaked
    assert await call(site, auth) == "hello"  # still the first server's


@pytest.mark.parametrize(
    ("error", "shown"),
    [
        ("invalid_client_metadata", "HTTP 400, invalid_client_metadata"),
        ("invalid\n\x1b[31mWARNING: sign in again at https://evil.example", "HTTP 400)"),
        ("x" * 5000, "HTTP 400)"),
        (["not", "a", "string"], "HTTP 400)"),
    ],
)
async def test_a_refused_registration_says_the_servers_error_code_only(
    site: McpAuthorization, error: object, shown: str
) -> None:
    # what the server says is shown when it is an error code, never text of any shape
    site.registration_refusal = {"error": error, "error_description": "Call 555-0100"}
    with pytest.raises(AuthorizationError, match="refused to register this client") as caught:
        await call(site, oauth())
    message = str(caught.value)
    assert shown in message
    assert (
        "\n" not in message and "\x1b" not in message and "xxxxx" not in message and "555-0100" not in message
    )  # not "555": a port may hold it


async def refusing(scope: dict[str, Any], receive: Any, send: Any) -> None:
    """Another server: every request is a 401 with a Bearer challenge of its own."""
    if scope["type"] != "http":
        return
    headers = [(b"www-authenticate", b'Bearer realm="elsewhere"'), (b"content-type", b"text/plain")]
    await send({"type": "http.response.start", "status": 401, "headers": headers})
    await send({"type": "http.response.body", "body": b"Unauthorized"})


@pytest.mark.parametrize("status", [307, 308])
async def test_a_post_redirected_to_another_origin_fails_before_anyone_is_asked_to_sign_in(
    status: int,
) -> None:
    # The POST is not followed to another origin at all (its body would go there, though
    # the token does not): nobody is asked to sign in, nothing reaches the other server,
    # and the error says where the server sent the client.
    site = McpAuthorization(whoami_server())
    reached: list[str] = []

    async def counting(scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] == "http":
            reached.append(scope["method"])
        await refusing(scope, receive, send)

    async with uvicorn_server(counting) as elsewhere:
        mcp = site.app

        async def app(scope: dict[str, Any], receive: Any, send: Any) -> None:
            if scope["type"] == "http" and scope["path"] == "/mcp":
                location = f"http://127.0.0.1:{elsewhere.port}/mcp".encode()
                await send(
                    {"type": "http.response.start", "status": status, "headers": [(b"location", location)]}
                )
                await send({"type": "http.response.body", "body": b""})
                return
            await mcp(scope, receive, send)

        async with uvicorn_server(app) as running:
            site.base = f"http://127.0.0.1:{running.port}"
            authorizer = FollowRedirect()
            with pytest.raises(TransportError) as caught:
                await call(site, oauth(authorizer))
    assert authorizer.asked == []
    assert site.registrations == 0
    assert reached == []
    message = str(caught.value)
    assert f"redirects (HTTP {status}) to http://127.0.0.1:{elsewhere.port}/mcp, another origin" in message
    assert f"use http://127.0.0.1:{elsewhere.port}/mcp directly" in message


class Counting(httpx.AsyncHTTPTransport):
    """The flow's own requests, over the network; counts the refresh requests."""

    refreshes = 0

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        if b"grant_type=refresh_token" in await request.aread():
            self.refreshes += 1
        return await super().handle_async_request(request)


async def test_an_expired_token_whose_refresh_is_refused_is_refreshed_once(site: McpAuthorization) -> None:
    site.provider.lifetime = 10  # stale as soon as issued: refreshed before it is sent
    counting = Counting()
    authorizer = FollowRedirect()
    auth = oauth(authorizer, transport=counting)
    await call(site, auth)
    before = counting.refreshes
    site.provider.expire_all()  # and its refresh token dead: one try, then a sign-in
    site.provider.refuse_refresh = True
    async with connect_http(site.url, auth=auth, versions=["2026-07-28"], timeout=10) as client:
        # the opening request: one refresh (refused, before it was sent), then the sign-in
        assert counting.refreshes - before == 1
        assert len(authorizer.asked) == 2
        result = await client.call_tool("whoami", {})
    assert result["content"][0]["text"] == "hello"


async def _refuses_and_publishes_nothing(scope: dict[str, Any], receive: Any, send: Any) -> None:
    """Every POST 401, naming protected resource metadata that is not there (404)."""
    if scope["type"] != "http":
        return
    headers = [(b"content-length", b"0")]
    if scope["method"] == "POST":
        host = dict(scope["headers"])[b"host"].decode()
        where = f'Bearer resource_metadata="http://{host}/.well-known/oauth-protected-resource/mcp"'
        headers.append((b"www-authenticate", where.encode()))
    await send(
        {
            "type": "http.response.start",
            "status": 401 if scope["method"] == "POST" else 404,
            "headers": headers,
        }
    )
    await send({"type": "http.response.body", "body": b""})


async def test_a_key_in_the_server_url_stays_out_of_authorization_errors_and_logs(
    caplog: pytest.LogCaptureFixture,
) -> None:
    key = "k3y-in-the-query-9f8e"
    async with uvicorn_server(_refuses_and_publishes_nothing) as running:
        url = f"http://127.0.0.1:{running.port}/mcp?api_key={key}"
        with caplog.at_level(logging.DEBUG, "mcp_elicit"), pytest.raises(MCPElicitError) as raised:
            async with connect_http(url, auth=oauth(), versions=["2026-07-28"], timeout=10) as client:
                await client.list_tools()
    assert "publishes no protected resource metadata" in str(raised.value)
    assert f"127.0.0.1:{running.port}/mcp asks" in str(raised.value)  # the server is still named
    assert key not in str(raised.value)
    assert key not in caplog.text
