"""The client's authorization requests (discovery, registration, token requests) against a
hostile server on a real 127.0.0.1 socket: a raw asyncio server that answers each request
with whatever bytes its script writes."""

from __future__ import annotations

import asyncio
import contextlib
import zlib
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field

import httpx
import orjson
import pytest

from mcp_elicit import Server
from mcp_elicit.errors import AuthorizationError, OAuthError
from mcp_elicit.server.oauth import OAuthProvider, Tokens
from mcp_elicit.stores import MemoryStore
from mcp_elicit.transports.http_auth import OAuth
from mcp_elicit.transports.http_client import connect_http
from mcp_elicit.transports.http_documents import get_json, post
from mcp_elicit.transports.oauth_client import HttpTokenExchange

pytestmark = pytest.mark.anyio

Script = Callable[[dict[str, str], asyncio.StreamWriter], Awaitable[None]]
#: The request's path, under this key of the headers a script is given.
PATH = ":path"


@dataclass
class Raw:
    port: int = 0
    seen: list[dict[str, str]] = field(default_factory=list)

    def url(self, path: str) -> str:
        return f"http://127.0.0.1:{self.port}{path}"


@contextlib.asynccontextmanager
async def raw_server(script: Script) -> AsyncIterator[Raw]:
    """A server on 127.0.0.1 that reads each request's head and body and lets ``script``
    answer it (one request per connection); stopped on exit."""
    raw = Raw()

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            _, path, _ = (await reader.readline()).decode("latin-1").split(" ", 2)
            headers: dict[str, str] = {PATH: path}
            while (line := await reader.readline()) not in (b"\r\n", b""):
                name, _, value = line.decode("latin-1").partition(":")
                headers[name.strip().lower()] = value.strip()
            await reader.readexactly(int(headers.get("content-length", "0")))
            raw.seen.append(headers)
            await script(headers, writer)
        except (ConnectionError, ValueError, asyncio.IncompleteReadError):
            pass
        finally:
            writer.close()
            with contextlib.suppress(Exception):
                await writer.wait_closed()

    server = await asyncio.start_server(handle, "127.0.0.1", 0)
    raw.port = server.sockets[0].getsockname()[1]
    try:
        yield raw
    finally:
        server.close()
        await server.wait_closed()


def _answer(status: str, headers: dict[str, str], body: bytes) -> bytes:
    head = f"HTTP/1.1 {status}\r\n" + "".join(f"{k}: {v}\r\n" for k, v in headers.items())
    return head.encode() + f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n".encode() + body


def _gzip_bomb(megabytes: int) -> bytes:
    """``megabytes`` MB of spaces (valid JSON whitespace), gzip-compressed."""
    squeeze = zlib.compressobj(9, zlib.DEFLATED, 31)
    return b"".join(squeeze.compress(b" " * 1_000_000) for _ in range(megabytes)) + squeeze.flush()


async def _gzip(headers: dict[str, str], writer: asyncio.StreamWriter) -> None:
    writer.write(_answer("200 OK", {"Content-Type": "application/json", "Content-Encoding": "gzip"}, _BOMB))
    await writer.drain()


_BOMB = _gzip_bomb(64)


async def _request(http: httpx.AsyncClient, method: str, url: str) -> object:
    if method == "GET":
        return await get_json(http, url)
    return await post(http, url, data={"grant_type": "authorization_code", "code": "the-code"})


@pytest.mark.parametrize("method", ["GET", "POST"])
async def test_a_compressed_authorization_answer_is_refused_not_inflated(method: str) -> None:
    """Metadata, registration and token requests ask for their answer uncompressed; a gzip
    one all the same (64 KB that httpx would inflate to 64 MB a network read at a time,
    before the 256 KiB cap is checked) is refused unread, naming the URL and the encoding."""
    async with raw_server(_gzip) as server, httpx.AsyncClient(follow_redirects=False) as http:
        url = server.url("/.well-known/oauth-authorization-server" if method == "GET" else "/token")
        with pytest.raises(AuthorizationError) as caught:
            await asyncio.wait_for(_request(http, method, url), 10)
    assert server.seen[0]["accept-encoding"] == "identity"
    message = str(caught.value)
    assert url in message and "compressed (gzip)" in message and "the-code" not in message


def _authorization_site(token_answer: dict[str, object]) -> Script:
    """An MCP server at ``/mcp`` wanting a token, its resource metadata, its authorization
    server's metadata (on the same origin) and a token endpoint answering ``token_answer``."""

    async def script(seen: dict[str, str], writer: asyncio.StreamWriter) -> None:
        origin = f"http://{seen['host']}"
        json = {"Content-Type": "application/json"}
        path = seen[PATH]
        if path == "/mcp":
            challenge = f'Bearer resource_metadata="{origin}/.well-known/oauth-protected-resource/mcp"'
            writer.write(_answer("401 Unauthorized", {"WWW-Authenticate": challenge}, b""))
        elif path == "/.well-known/oauth-protected-resource/mcp":
            document = {"resource": f"{origin}/mcp", "authorization_servers": [origin]}
            writer.write(_answer("200 OK", json, orjson.dumps(document)))
        elif path == "/.well-known/oauth-authorization-server":
            document = {
                "issuer": origin,
                "authorization_endpoint": f"{origin}/authorize",
                "token_endpoint": f"{origin}/token",
                "code_challenge_methods_supported": ["S256"],
                "grant_types_supported": ["client_credentials"],
            }
            writer.write(_answer("200 OK", json, orjson.dumps(document)))
        elif path == "/token":
            writer.write(_answer("200 OK", json, orjson.dumps(token_answer)))
        else:
            writer.write(_answer("404 Not Found", {}, b""))
        await writer.drain()

    return script


@pytest.mark.parametrize(
    "token",
    ["the-secret\r\nX-Injected: 1", "the-secret\x00", "the secret", "the-secr\u00e9t"],
    ids=["crlf", "nul", "space", "non-ascii"],
)
async def test_an_access_token_that_cannot_be_a_header_is_refused_unquoted(
    token: str, caplog: pytest.LogCaptureFixture
) -> None:
    """An access token is a b64token (RFC 6750 §2.1): one with a line break, a NUL, a space
    or a non-ASCII letter cannot go in an Authorization header. It is refused when the token
    endpoint gives it, naming the fault, and is never quoted (nor sent)."""
    answer = {"access_token": token, "token_type": "Bearer", "expires_in": 3600}
    auth = OAuth(None, client_id="cid", client_secret="the-client-secret")
    async with raw_server(_authorization_site(answer)) as server:
        with pytest.raises(AuthorizationError) as caught:
            async with asyncio.timeout(10), connect_http(server.url("/mcp"), auth=auth, timeout=5) as client:
                await client.list_tools()
        await auth.aclose()
    message = str(caught.value)
    assert "access_token" in message and "token endpoint" in message
    shown = message + caplog.text
    assert "the-secr" not in shown and "the secret" not in shown and "the-client-secret" not in shown
    assert not any("the-secr" in h.get("authorization", "") for h in server.seen)


@pytest.mark.parametrize(
    "token",
    ["the-secret\r\nX-Injected: 1", "the-secret\x00", "the secret", "the-secr\u00e9t"],
    ids=["crlf", "nul", "space", "non-ascii"],
)
async def test_a_providers_access_token_that_cannot_be_a_header_is_refused_unquoted(token: str) -> None:
    """Third-party sign-in (the server's own token requests): the provider's access token
    goes in the Authorization header of the tool's requests, where httpx would refuse it in a
    message quoting the header. It is refused when it arrives, naming the provider, not the
    token; the grant is not thereby refused."""
    answer = orjson.dumps({"access_token": token, "token_type": "Bearer"})

    async def script(seen: dict[str, str], writer: asyncio.StreamWriter) -> None:
        writer.write(_answer("200 OK", {"Content-Type": "application/json"}, answer))
        await writer.drain()

    async with raw_server(script) as server:
        provider = OAuthProvider("example", "https://id.example.com/a", server.url("/token"), "cid", "s")
        with pytest.raises(OAuthError) as caught:
            await asyncio.wait_for(
                HttpTokenExchange().exchange(provider, "the-code", "v" * 43, "http://127.0.0.1:1/cb"), 10
            )
    assert (caught.value.error, caught.value.refused) == ("invalid_response", False)
    assert "example" in str(caught.value) and "access_token" in str(caught.value)
    assert "the-secr" not in str(caught.value) and "the secret" not in str(caught.value)


async def test_a_token_endpoint_that_trickles_is_given_up_within_the_timeout() -> None:
    """A token endpoint that sends its answer a byte at a time, each byte well within the
    timeout of one read: the token request as a whole still ends within the timeout (the
    browser waiting on the callback is not held for as long as the provider likes), as an
    unreachable provider, quoting nothing."""

    async def script(seen: dict[str, str], writer: asyncio.StreamWriter) -> None:
        body = orjson.dumps({"access_token": "the-secret", "token_type": "Bearer"})
        writer.write(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n")
        writer.write(f"Content-Length: {len(body) + 4096}\r\n\r\n".encode() + b" ")
        await writer.drain()
        for _ in range(4096):
            await asyncio.sleep(0.1)
            writer.write(b" ")
            await writer.drain()
        writer.write(body)
        await writer.drain()

    async with raw_server(script) as server:
        provider = OAuthProvider("example", "https://id.example.com/a", server.url("/token"), "cid", "s")
        exchange = HttpTokenExchange(timeout=1.0)
        with pytest.raises(OAuthError) as caught:  # not wait_for's TimeoutError: the answer takes 400 s
            await asyncio.wait_for(
                exchange.exchange(provider, "the-code", "v" * 43, "http://127.0.0.1:1/cb"), 10
            )
    assert (caught.value.error, caught.value.refused) == ("unreachable", False)
    assert "example" in str(caught.value) and "the-code" not in str(caught.value)


async def _expired_tokens(token_url: str) -> Server:
    """A server whose provider "example" refreshes at ``token_url``, holding ann's tokens,
    expired (the clock is past them), with a refresh token."""
    app = Server("refresh", store=MemoryStore(), clock=lambda: 1000.0)
    app.oauth_provider(
        "example", authorize_url="https://id.example.com/a", token_url=token_url, client_id="c"
    )
    app.url_mode.token_exchange = HttpTokenExchange(timeout=5)
    await app.url_mode.oauth.save(
        "example", "ann", Tokens("the-access", refresh_token="the-refresh", expires_at=900.0)
    )
    return app


@pytest.mark.parametrize(
    ("status", "error"),
    [
        ("429 Too Many Requests", "rate_limit_exceeded"),
        ("400 Bad Request", "temporarily_unavailable"),
        ("401 Unauthorized", "invalid_client"),
        ("400 Bad Request", "unauthorized_client"),
    ],
)
async def test_a_refresh_the_provider_cannot_serve_now_keeps_the_tokens(status: str, error: str) -> None:
    """A refresh answered with an OAuth error that is not about the user's grant (the
    provider rate-limits or is busy, or does not take the server's own client credentials:
    the operator's to fix) fails the call and keeps the tokens; only a grant the provider
    says is dead (invalid_grant) drops them, so that the user is asked again."""
    answers = [
        _answer(status, {"Content-Type": "application/json"}, orjson.dumps({"error": error})),
        _answer("400 Bad Request", {"Content-Type": "application/json"}, b'{"error": "invalid_grant"}'),
    ]

    async def script(seen: dict[str, str], writer: asyncio.StreamWriter) -> None:
        writer.write(answers.pop(0))
        await writer.drain()

    async with raw_server(script) as server:
        app = await _expired_tokens(server.url("/token"))
        oauth = app.url_mode.oauth
        with pytest.raises(OAuthError) as caught:
            await oauth.usable("example", "ann")
        assert (caught.value.error, caught.value.refused) == (error, False)
        assert "the-refresh" not in str(caught.value)
        assert await oauth.stored("example", "ann") is not None, "the tokens were dropped"
        assert await oauth.usable("example", "ann") is None  # invalid_grant: dropped, asked again
        assert await oauth.stored("example", "ann") is None
        await app.url_mode.store.close()


@pytest.mark.parametrize(
    "answer",
    [{"access_token": None}, {"access_token": ""}, {"access_token": "fresh", "token_type": "mac"}],
    ids=["null", "empty", "not-bearer"],
)
async def test_a_refresh_answer_without_a_usable_token_keeps_the_tokens(answer: dict[str, object]) -> None:
    """A token endpoint that answers a refresh with 200 but no usable access token (null,
    empty, a token type this client cannot send) has not refused the grant: the call fails
    naming the fault, and the stored tokens are kept for when the provider answers properly."""

    async def script(seen: dict[str, str], writer: asyncio.StreamWriter) -> None:
        writer.write(_answer("200 OK", {"Content-Type": "application/json"}, orjson.dumps(answer)))
        await writer.drain()

    async with raw_server(script) as server:
        app = await _expired_tokens(server.url("/token"))
        oauth = app.url_mode.oauth
        with pytest.raises(OAuthError) as caught:
            await oauth.usable("example", "ann")
        assert caught.value.refused is False
        assert "token" in str(caught.value) and "the-refresh" not in str(caught.value)
        assert await oauth.stored("example", "ann") is not None, "the tokens were dropped"
        await app.url_mode.store.close()
