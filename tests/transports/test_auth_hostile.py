"""The server's request authentication against a hostile or broken peer, over real HTTP
on 127.0.0.1 (uvicorn): what ``transports.http_bearer`` answers when the token verifier
fails, when a token is bound to something this server cannot check, when a Host's port
is not a port (it would be repeated in the challenge), and to an unbound DPoP token where
DPoP is required.

The header variants, DPoP proofs, replays, nonces, scopes and the metadata document are
covered in tests/server/test_auth.py, tests/transports/test_http_dpop.py,
tests/transports/test_http_resource_metadata.py and tests/core/test_dpop.py.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import time
from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest

from mcp_elicit import Server
from mcp_elicit.core.authorization import bearer_challenge
from mcp_elicit.core.dpop import DpopKey
from mcp_elicit.errors import ConfigError
from mcp_elicit.server.auth import CallableVerifier, Principal, ResourceMetadata
from mcp_elicit.transports.http_server import StreamableHTTP

from support.procs import uvicorn_server
from support.sessions import ACCEPT, initialize_body

pytestmark = pytest.mark.anyio

ISSUER = "https://auth.example.com"
SECRET = "tok-s3cr3t-value"
BODY = json.dumps(initialize_body()).encode()


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@contextlib.asynccontextmanager
async def guarded(verify: Any, **options: Any) -> AsyncIterator[str]:
    app = StreamableHTTP(
        Server("guarded"),
        auth=CallableVerifier(verify),
        resource_metadata=ResourceMetadata([ISSUER]),
        **options,
    )
    async with uvicorn_server(app) as running:
        yield f"http://127.0.0.1:{running.port}/mcp"


async def initialize(url: str, authorization: str) -> httpx.Response:
    async with httpx.AsyncClient(timeout=10) as http:
        return await http.post(
            url, json=initialize_body(), headers={"accept": ACCEPT, "authorization": authorization}
        )


async def _unreachable(token: str) -> Principal | None:
    raise ConnectionError(f"introspection endpoint unreachable while checking {token}")


async def _not_a_principal(token: str) -> Any:
    return {"sub": "ann"}  # a claims dict where a Principal is due


async def _no_subject(token: str) -> Principal | None:
    """A token without ``sub``: a subject of None would be the key every table keeps the
    unauthenticated callers under (their rate limit, sessions, tasks)."""
    claims: dict[str, Any] = {"scope": "mcp"}
    return Principal(subject=claims.get("sub"))


@pytest.mark.parametrize(
    ("verify", "logged"),
    [
        (_unreachable, "introspection endpoint unreachable"),
        (_not_a_principal, "not a Principal"),
        (_no_subject, "TypeError: Principal.subject must be a non-empty string, not None"),
    ],
)
async def test_a_verifier_that_fails_gets_503_not_a_crash(
    verify: Any, logged: str, caplog: pytest.LogCaptureFixture
) -> None:
    """An introspection endpoint that is down, a JWT library that raises on a malformed
    token, a verifier returning the wrong type: the request is refused (503, retry later),
    never a 500 nor a pass, and the token is neither logged nor sent back."""
    caplog.set_level(logging.ERROR, "mcp_elicit.auth")
    async with guarded(verify) as url:
        response = await initialize(url, f"Bearer {SECRET}")
    assert response.status_code == 503, response.text
    assert response.headers["retry-after"] == "1"
    assert "cannot check access tokens" in response.text
    assert logged in caplog.text
    assert SECRET not in caplog.text and SECRET not in response.text


JWT = "eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJhbm4iLCJleHAiOjE3MDB9.c2lnbmF0dXJlLW9mLXRoZS10b2tlbg"


async def _quotes_a_segment(token: str) -> Principal | None:
    header, payload, signature = token.split(".")
    raise ValueError(f"bad signature {signature!r} for payload {payload}; header {header} ok")


async def _quotes_it_cut_off(token: str) -> Principal | None:
    raise ConnectionError(f"introspection refused token {token[:20]}... (HTTP 500)")


async def _quotes_its_tail(token: str) -> Principal | None:
    raise LookupError(f"no key for token ending {token[-12:]}; kid unknown")


@pytest.mark.parametrize(
    ("verify", "logged"),
    [
        (_quotes_a_segment, "ValueError: bad signature '"),
        (_quotes_it_cut_off, "ConnectionError: introspection refused token "),
        (_quotes_its_tail, "LookupError: no key for token ending "),
    ],
)
async def test_a_verifier_quoting_part_of_the_token_logs_none_of_it(
    verify: Any, logged: str, caplog: pytest.LogCaptureFixture
) -> None:
    """A verifier's error that quotes a piece of the token (a JWT's signature or payload,
    the token cut short, its last characters) is logged without that piece: any run of 8
    characters or more that is part of the token is replaced, the rest of the reason kept."""
    caplog.set_level(logging.ERROR, "mcp_elicit.auth")
    async with guarded(verify) as url:
        response = await initialize(url, f"Bearer {JWT}")
    assert response.status_code == 503, response.text
    assert logged in caplog.text
    for piece in [*JWT.split("."), JWT[:20], JWT[-12:]]:
        assert piece not in caplog.text
    assert "<part of the token>" in caplog.text


async def test_a_verifier_that_hangs_gets_503_within_its_time_limit(caplog: pytest.LogCaptureFixture) -> None:
    """An introspection call that never answers must not hold the request (and its
    connection) for ever: past ``verify_timeout`` the request is refused like a verifier
    that failed, and the log says the verifier did not answer."""
    caplog.set_level(logging.ERROR, "mcp_elicit.auth")
    called = asyncio.Event()

    async def hangs(token: str) -> Principal | None:
        called.set()
        await asyncio.Event().wait()  # never set
        raise AssertionError("unreachable")

    async with guarded(hangs, verify_timeout=0.3) as url:
        response = await initialize(url, f"Bearer {SECRET}")  # the client's timeout: a hang guard
    assert called.is_set()
    assert response.status_code == 503, response.text
    assert response.headers["retry-after"] == "1"
    assert "cannot check access tokens" in response.text
    assert "did not answer within 0.3 s" in caplog.text
    assert SECRET not in caplog.text and SECRET not in response.text


@pytest.mark.parametrize("seconds", [0, -1, float("inf"), float("nan")])
def test_verify_timeout_must_be_a_positive_number_of_seconds(seconds: float) -> None:
    with pytest.raises(ConfigError, match="verify_timeout must be a positive number"):
        StreamableHTTP(Server("guarded"), verify_timeout=seconds)


@pytest.mark.parametrize(
    "cnf",
    [
        {"x5t#S256": "bwcK0esc3ACC3DB2Y5_lESsXE8o9ltc05O89jdN-dg2"},  # to a client certificate (RFC 8705)
        {"jkt": 42},  # a DPoP binding, garbled
        {"jkt": ""},
        {"jwk": {"kty": "EC", "crv": "P-256", "x": "AA", "y": "AA"}},  # to a key given whole (RFC 7800)
        "bound",
    ],
)
async def test_a_token_bound_to_what_this_server_cannot_check_is_not_taken_as_bearer(cnf: object) -> None:
    """A sender-constrained token is worthless to a thief only if every server checks its
    binding: one bound to anything but a DPoP key thumbprint cannot be checked here, so
    it is refused, never downgraded to a bearer token."""

    async def verify(token: str) -> Principal | None:
        return Principal("ann", claims={"cnf": cnf}) if token == SECRET else None

    async with guarded(verify) as url:
        response = await initialize(url, f"Bearer {SECRET}")
    assert response.status_code == 401, response.text
    challenge = bearer_challenge(response.headers.get_list("www-authenticate"))
    assert challenge is not None and challenge.error == "invalid_token"
    assert "cannot check" in response.headers["www-authenticate"]


async def _raw(url: str, request: bytes) -> tuple[int, bytes]:
    """Send ``request`` as it is (httpx would not send a control character) and read the
    status line and headers of the answer."""
    port = int(url.split(":")[2].split("/")[0])
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    try:
        writer.write(request)
        head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), 10)
    finally:
        writer.close()
        await writer.wait_closed()
    return int(head.split(b" ", 2)[1]), head


@pytest.mark.parametrize("suffix", [b"\x01", b"\x1b[31m", b'", error="x', b"/evil", b"\x7f", b"zzz"])
@pytest.mark.parametrize("path", [b"/mcp", b"/.well-known/oauth-protected-resource/mcp"])
async def test_a_host_whose_port_is_not_a_port_is_refused_not_reflected(suffix: bytes, path: bytes) -> None:
    """The allow-list looks at a Host's name; what follows the colon went unchecked, and
    the challenge (``resource_metadata``) and the metadata document repeated it, control
    characters and quotes included. A port that is not digits now fails the allow-list."""

    async def verify(token: str) -> Principal | None:
        return None

    async with guarded(verify) as url:
        host = f"127.0.0.1:{url.split(':')[2].split('/')[0]}".encode() + suffix
        method = b"POST" if path == b"/mcp" else b"GET"
        status, head = await _raw(
            url,
            method + b" " + path + b" HTTP/1.1\r\nhost: " + host + b"\r\ncontent-type: application/json\r\n"
            b"accept: " + ACCEPT.encode() + b"\r\nauthorization: Bearer nope\r\n"
            b"content-length: %d\r\nconnection: close\r\n\r\n%b" % (len(BODY), BODY),
        )
        good, _ = await _raw(
            url, b"GET " + path + b" HTTP/1.1\r\nhost: 127.0.0.1\r\nconnection: close\r\n\r\n"
        )
    assert status == 421, head
    assert suffix not in head
    assert good != 421  # a Host without a port is allowed


async def test_where_dpop_is_required_an_unbound_token_is_not_told_to_go_bearer() -> None:
    """An unbound token sent with the DPoP scheme is told to come as Bearer, unless the
    server takes DPoP-bound tokens only: then that advice would only earn another 401."""
    key = DpopKey.generate()

    async def verify(token: str) -> Principal | None:
        return Principal("ann") if token == SECRET else None

    app = StreamableHTTP(
        Server("guarded"),
        auth=CallableVerifier(verify),
        resource_metadata=ResourceMetadata([ISSUER], dpop_required=True),
    )
    async with uvicorn_server(app) as running:
        url = f"http://127.0.0.1:{running.port}/mcp"
        proof = key.proof("POST", url, now=time.time(), access_token=SECRET, body=BODY)
        async with httpx.AsyncClient(timeout=10) as http:
            response = await http.post(
                url,
                content=BODY,
                headers={
                    "accept": ACCEPT,
                    "content-type": "application/json",
                    "authorization": f"DPoP {SECRET}",
                    "dpop": proof,
                },
            )
    assert response.status_code == 401, response.text
    value = response.headers["www-authenticate"]
    assert value.startswith("DPoP ") and 'error="invalid_token"' in value
    assert "Bearer" not in value and "DPoP-bound tokens only" in value


async def _ann(token: str) -> Principal | None:
    return Principal("ann") if token == SECRET else None


_RESPONSE = b'{"jsonrpc": "2.0", "id": 7, "result": {"action": "accept"}}'


@pytest.mark.parametrize(
    ("body", "headers", "judged_as"),
    [
        (b"{}", {}, 400),
        (b"not json", {}, 400),
        (b"[1, 2]", {}, 400),
        (b'{"jsonrpc": "2.0", "id": 1}', {}, 400),
        (_RESPONSE, {}, 400),  # a response to a question of ours, as an attacker would forge it
        (b'{"jsonrpc": "2.0", "id": 7, "result": 1, "error": {}}', {}, 400),  # a malformed one
        (BODY, {"content-type": "text/plain"}, 415),
        (BODY, {"accept": "text/html"}, 406),
    ],
    ids=["empty-object", "not-json", "batch", "no-method", "response", "bad-response", "415", "406"],
)
@pytest.mark.parametrize("authorization", [None, "Bearer nope"])
async def test_a_post_without_a_valid_token_gets_401_whatever_its_body(
    body: bytes, headers: dict[str, str], judged_as: int, authorization: str | None
) -> None:
    """Authentication comes before the request is judged: a POST without valid
    credentials is told to sign in (401 and the challenge), as the MCP authorization spec
    says, not what is wrong with a body it has no right to send (400, 415, 406)."""
    sent = {"accept": ACCEPT, "content-type": "application/json", **headers}
    if authorization is not None:
        sent["authorization"] = authorization
    async with guarded(_ann) as url, httpx.AsyncClient(timeout=10) as http:
        refused = await http.post(url, content=body, headers=sent)
        sent["authorization"] = f"Bearer {SECRET}"
        judged = await http.post(url, content=body, headers=sent)
    assert refused.status_code == 401, refused.text
    challenge = bearer_challenge(refused.headers.get_list("www-authenticate"))
    assert challenge is not None and challenge.resource_metadata is not None
    assert challenge.error == (None if authorization is None else "invalid_token")
    assert judged.status_code == judged_as, judged.text  # with the token: the body's own answer


async def test_a_body_declared_over_max_body_is_refused_before_authentication() -> None:
    """What is not read cannot be authenticated (a DPoP proof digests the body): a body
    whose Content-Length is over ``max_body`` is 413 at once, token or not."""
    async with guarded(_ann, max_body=64) as url, httpx.AsyncClient(timeout=10) as http:
        response = await http.post(
            url, content=b" " * 65, headers={"accept": ACCEPT, "content-type": "application/json"}
        )
    assert response.status_code == 413, response.text
    assert "www-authenticate" not in response.headers
