"""What the HTTP client refuses from a server: an SSE answer over the 16 MiB cap (per line,
per event, as a JSON body), failing the request naming the limit; a malformed response to
the request, failing it at once as a protocol violation."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest

from mcp_elicit.client.transport import SAID_MAX, Ended
from mcp_elicit.errors import ProtocolViolation, TransportError
from mcp_elicit.transports.http_client import HttpTransport
from mcp_elicit.wire.sse import encode_event

_MIB = 1024 * 1024

pytestmark = pytest.mark.anyio


def _sse(chunks: AsyncIterator[bytes]) -> httpx.MockTransport:
    async def handler(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, headers={"content-type": "text/event-stream"}, content=chunks)

    return httpx.MockTransport(handler)


async def _ended(chunks: AsyncIterator[bytes]) -> Ended:
    async with httpx.AsyncClient(transport=_sse(chunks)) as http:
        transport = HttpTransport("http://127.0.0.1:9/mcp", client=http)
        exchange = await transport.exchange({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}, {})
        while not isinstance(item := await exchange.receive(), Ended):
            pass
        await exchange.aclose()
        return item


async def test_an_event_that_never_ends_fails_at_the_limit() -> None:
    async def data_lines() -> AsyncIterator[bytes]:
        for _ in range(17):  # data: lines, and never the blank line that ends the event
            yield b"data: " + b"x" * (_MIB - 8) + b"\n"

    ended = await _ended(data_lines())
    assert ended.reason is not None and str(16 * _MIB) in ended.reason
    assert "SSE event" in ended.reason


async def test_a_line_that_never_ends_fails_at_the_limit() -> None:
    async def one_line() -> AsyncIterator[bytes]:
        yield b"data: "
        for _ in range(17):
            yield b"x" * _MIB

    ended = await _ended(one_line())
    assert ended.reason is not None and str(16 * _MIB) in ended.reason
    assert "SSE line" in ended.reason


@pytest.mark.parametrize("sse", [False, True], ids=["json", "sse"])
@pytest.mark.parametrize(
    ("body", "what"),
    [
        (b'{"jsonrpc":"2.0","id":1,"result":"a string"}', '"result" must be an object'),
        (b'{"jsonrpc":"2.0","id":1,"error":{"message":"no code"}}', '"error" must be an object'),
    ],
)
async def test_a_malformed_response_fails_its_request(body: bytes, what: str, sse: bool) -> None:
    async def handler(request: httpx.Request) -> httpx.Response:
        if sse:
            return httpx.Response(
                200, headers={"content-type": "text/event-stream"}, content=encode_event(body)
            )
        return httpx.Response(200, headers={"content-type": "application/json"}, content=body)

    async with httpx.AsyncClient(transport=httpx.MockTransport(handler)) as http:
        transport = HttpTransport("http://127.0.0.1:9/mcp", client=http)
        exchange = await transport.exchange({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}, {})
        ended = await exchange.receive()
        await exchange.aclose()
    assert isinstance(ended, Ended) and isinstance(ended.error, ProtocolViolation)
    assert "malformed response" in str(ended.error) and what in str(ended.error)


async def _nothing(_: object) -> None:
    return None


def _redirecting(port: int, seen: list[httpx.Request]) -> httpx.MockTransport:
    """/mcp/ redirects to /mcp on ``port``, which answers (a GET with an empty event
    stream); every request lands in ``seen``."""

    async def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        if request.url.path == "/mcp/":
            return httpx.Response(307, headers={"location": f"http://127.0.0.1:{port}/mcp"})
        if request.method == "GET":
            return httpx.Response(200, headers={"content-type": "text/event-stream"}, content=b"")
        body = b'{"jsonrpc":"2.0","id":1,"result":{"tools":[]}}'
        return httpx.Response(200, headers={"content-type": "application/json"}, content=body)

    return httpx.MockTransport(handler)


@pytest.mark.parametrize("own_client", [True, False], ids=["its own client", "the caller's client"])
@pytest.mark.parametrize(("port", "kept"), [(8001, True), (8002, False)], ids=["same origin", "other port"])
async def test_fixed_headers_are_not_sent_on_a_redirect_to_another_origin(
    monkeypatch: pytest.MonkeyPatch, port: int, kept: bool, own_client: bool
) -> None:
    seen: list[httpx.Request] = []
    real = httpx.AsyncClient
    given: httpx.AsyncClient | None = None
    if own_client:
        monkeypatch.setattr(httpx, "AsyncClient", lambda **kw: real(transport=_redirecting(port, seen), **kw))
    else:
        given = real(transport=_redirecting(port, seen), follow_redirects=True)
    # The GET stream (a POST is not followed to another origin at all: test_client_hostile_http)
    transport = HttpTransport("http://127.0.0.1:8001/mcp/", headers={"X-Api-Key": "secret"}, client=given)
    await transport.open(_nothing)
    stream = await transport.listen({})
    assert stream is not None
    await stream.aclose()
    await transport.aclose()
    if given is not None:  # the caller's client is left as it was
        assert given.event_hooks == {"request": [], "response": []}
        await given.aclose()
    first, redirected = seen
    assert first.headers["x-api-key"] == "secret"
    assert redirected.url == f"http://127.0.0.1:{port}/mcp"
    assert ("x-api-key" in redirected.headers) is kept
    assert redirected.headers["accept"] == "text/event-stream"


class _Proving(httpx.Auth):
    """Signs each request as an OAuth client with DPoP does: a token and a proof."""

    def auth_flow(self, request: httpx.Request) -> Any:
        request.headers["Authorization"] = "DPoP tok"
        request.headers["DPoP"] = "proof-for-" + str(request.url)
        yield request


@pytest.mark.parametrize(("port", "kept"), [(8001, True), (8002, False)], ids=["same origin", "other port"])
async def test_a_dpop_proof_is_not_sent_on_a_redirect_to_another_origin(
    monkeypatch: pytest.MonkeyPatch, port: int, kept: bool
) -> None:
    """httpx drops Authorization on a redirect to another origin; the DPoP proof, made for
    this server's URL, goes no further either."""
    seen: list[httpx.Request] = []
    real = httpx.AsyncClient
    monkeypatch.setattr(httpx, "AsyncClient", lambda **kw: real(transport=_redirecting(port, seen), **kw))
    transport = HttpTransport("http://127.0.0.1:8001/mcp/", auth=_Proving())
    await transport.open(_nothing)
    stream = await transport.listen({})  # the GET stream: a POST goes to no other origin at all
    assert stream is not None
    await stream.aclose()
    await transport.aclose()
    first, redirected = seen
    assert first.headers["dpop"] == "proof-for-http://127.0.0.1:8001/mcp/"
    assert ("dpop" in redirected.headers) is kept
    assert ("authorization" in redirected.headers) is kept


@pytest.mark.parametrize(
    "url",
    [
        "http://user:hunter2@127.0.0.1:9/mcp?api_key=s3cr3t",  # port 9: nothing listens
        # what httpx sends (%-escaped) though prose would end the URL at the space or quote
        "http://us er:hunter2@127.0.0.1:9/mcp?api_key=s3cr3t s3cr3t",
        "http://us\"er:hunter2@127.0.0.1:9/mcp?api_key=s3cr3t's3cr3t",
        "http://user:hunter2\u00a0x@127.0.0.1:9/mcp?api_key=s3cr3t\u3000s3cr3t",
    ],
)
async def test_a_key_in_the_servers_url_reaches_no_message_or_log(
    url: str, caplog: pytest.LogCaptureFixture
) -> None:
    """A key in the URL's query (``?api_key=``) or user info goes to the server, but into no
    error message, log line or the place the server is named (``where``): the URL is known,
    so it is redacted whole, whatever a space or a quote in it would do to a URL in prose."""
    transport = HttpTransport(url)
    assert transport.where == "http://REDACTED:REDACTED@127.0.0.1:9/mcp?REDACTED"
    await transport.open(_nothing)
    exchange = await transport.exchange({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}, {})
    ended = await exchange.receive()
    await exchange.aclose()
    with pytest.raises(TransportError, match="could not send to") as caught:
        await transport.send({"jsonrpc": "2.0", "method": "notifications/initialized"}, {})
    await transport.aclose()
    assert isinstance(ended, Ended) and ended.reason is not None and "cannot connect to" in ended.reason
    said = [ended.reason, str(caught.value), *(r.getMessage() for r in caplog.records)]
    assert not [text for text in said if "s3cr3t" in text or "hunter2" in text]


@pytest.mark.parametrize(
    "url",
    [
        "not a url",
        "127.0.0.1:8000/mcp",
        "ftp://127.0.0.1/mcp",
        "http:///mcp",
        "https://key@/mcp?api_key=s3cr3t",
    ],
)
def test_a_server_url_that_is_not_an_absolute_http_url_is_refused_when_the_transport_is_made(
    url: str,
) -> None:
    # It was taken, and the first request failed as a TransportError quoting httpx
    # ("Request URL is missing an 'http://' or 'https://' protocol").
    with pytest.raises(ValueError, match=r"the server URL must be an absolute http\(s\) URL") as caught:
        HttpTransport(url)
    assert "s3cr3t" not in str(caught.value)


def test_a_server_url_that_is_not_text_is_refused_saying_so() -> None:
    with pytest.raises(TypeError, match=r"the server URL must be a string, not int"):
        HttpTransport(8000)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("headers", "said"),
    [
        (
            {"Authorization": "Bearer tök3n-s3cr3t"},
            r"the value of header 'Authorization' is not ASCII \('ö' at 8\)",
        ),
        (
            {"X-Tenant": "acme\r\nX-Evil: 1"},
            r"the value of header 'X-Tenant' holds a control character \(at 4\)",
        ),
        (
            {"X-Tenant": "acme\x00s3cr3t"},
            r"the value of header 'X-Tenant' holds a control character \(at 4\)",
        ),
        (
            {"Authorization": " Bearer s3cr3t"},
            r"the value of header 'Authorization' starts or ends with white space",
        ),
        ({"X-Tenant": "s3cr3t\t"}, r"the value of header 'X-Tenant' starts or ends with white space"),
        ({"X Tenant": "s3cr3t"}, r"the header name 'X Tenant' is not an HTTP token"),
        ({"": "s3cr3t"}, r"the header name '' is not an HTTP token"),
    ],
)
def test_a_fixed_header_that_cannot_be_sent_is_refused_when_the_transport_is_made(
    headers: dict[str, str], said: str
) -> None:
    # It was taken, and every request then failed as if the server had misbehaved: "the
    # response from ... was refused: 'ascii' codec can't encode character" (nothing had been
    # sent), or "the connection to ... broke (LocalProtocolError: Illegal header value
    # b' Bearer s3cr3t')", the secret quoted.
    with pytest.raises(ValueError, match=said) as caught:
        HttpTransport("http://127.0.0.1:9/mcp", headers=headers)
    assert "s3cr3t" not in str(caught.value)


def test_a_fixed_header_value_that_is_not_text_is_refused_saying_so() -> None:
    with pytest.raises(
        TypeError, match=r"the value of header 'X-Retries' must be a string \(or bytes\), not int"
    ):
        HttpTransport("http://127.0.0.1:9/mcp", headers={"X-Retries": 3})  # type: ignore[dict-item]


def test_fixed_headers_that_can_be_sent_are_kept_as_given() -> None:
    headers = {"Authorization": "Bearer a b\tc", "X-Empty": ""}
    assert HttpTransport("http://127.0.0.1:9/mcp", headers=headers).fixed == headers


def test_fixed_header_values_given_as_bytes_are_kept_as_httpx_takes_them() -> None:
    # httpx sends a bytes value as it is (a Latin-1 server's, say); they were taken before
    # fixed headers were checked, and then refused: "must be a string, not bytes"
    headers = {"Authorization": b"Bearer s3cr3t", "X-Name": "Jos\xe9".encode("latin-1")}
    assert HttpTransport("http://127.0.0.1:9/mcp", headers=headers).fixed == headers  # type: ignore[arg-type]


@pytest.mark.parametrize("value", [b"acme\r\nX-Evil: 1", b"acme\x00s3cr3t", b" s3cr3t", b"acme\x7f"])
def test_a_fixed_header_value_in_bytes_that_cannot_be_sent_is_refused(value: bytes) -> None:
    with pytest.raises(
        ValueError, match=r"the value of header 'X-Tenant' (holds a control|starts or ends)"
    ) as caught:
        HttpTransport("http://127.0.0.1:9/mcp", headers={"X-Tenant": value})  # type: ignore[dict-item]
    assert "s3cr3t" not in str(caught.value)


def test_a_body_is_redacted_before_it_is_cut() -> None:
    """``Ended.said`` quotes a body cut at ``SAID_MAX``: redacted first, so a URL the cut
    falls inside keeps nothing of its password (a transport other than HTTP's passes its
    body as it came)."""
    body = "x" * (SAID_MAX - 20) + " https://me:SECRETPW@h/p?key=KEY"
    said = Ended(500, body=body).said
    assert "SECRE" not in said and "https://REDACTED:" in said
