"""The client's ``RateLimited``: a request the server refused for its rate limit reaches the
caller as that error, carrying the wait (``retry_after``) and the budget (``limit``), over
Streamable HTTP at 2026-07-28 (a 429), in a 2025-11-25 session (a 200 JSON-RPC error) and
over stdio. Real servers: HTTP
on 127.0.0.1, a stdio subprocess (tests/server/rate_limited_server.py: two calls at once,
then one a minute, so the third call is refused however slow the machine)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

import mcp_elicit
from client.recorder import Recorder
from mcp_elicit.errors import InvalidRequest, PrincipalLimitReached, ProtocolError, RateLimited
from mcp_elicit.transports.http_client import connect_http
from mcp_elicit.transports.stdio_client import connect_stdio

from support.procs import ROOT, http_process
from support.wire import WireChecker

pytestmark = pytest.mark.anyio
SERVER = ROOT / "tests" / "server" / "rate_limited_server.py"
REVISIONS = ["2026-07-28", "2025-11-25"]


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def checked(recorder: Recorder, revision: str) -> None:
    """Every message the client sent, and every answer it received, fits the schema."""
    checker = WireChecker.load(revision)
    recorder.check(checker)
    asked = {m["id"]: m["method"] for m in recorder.sent if "method" in m and "id" in m}
    for message in recorder.received:
        if "id" in message and "method" not in message:
            checker.response(asked[message["id"]], message)


def refusal(exc: RateLimited, status: int | None) -> None:
    """What the caller gets: the class tree, the wait and the budget, the server's words."""
    assert isinstance(exc, PrincipalLimitReached) and isinstance(exc, InvalidRequest)
    assert exc.code == -32600
    assert exc.limit == "max_calls_per_minute"
    assert isinstance(exc.retry_after, int) and 1 <= exc.retry_after <= 60
    assert exc.data == {"limit": "max_calls_per_minute", "most": 1, "retryAfter": exc.retry_after}
    assert exc.message.startswith("Too many tool calls: unauthenticated callers may make 1 a minute")
    if status is not None:
        assert exc.http_status == status


@pytest.mark.parametrize("revision", REVISIONS)
async def test_over_http_the_refusal_is_rate_limited(tmp_path: Path, revision: str) -> None:
    """At 2026-07-28 the refusal is an HTTP 429; in a 2025-11-25 session a 200: the same error."""
    recorder = Recorder()
    with http_process(SERVER, log_dir=tmp_path) as server:
        async with connect_http(server.url, versions=[revision], trace=recorder) as client:
            for _ in range(2):
                assert (await client.call_tool("hello"))["content"][0]["text"] == "hello"
            with pytest.raises(RateLimited) as refused:
                await client.call_tool("hello")
    refusal(refused.value, 429 if revision == "2026-07-28" else 200)
    checked(recorder, revision)


@pytest.mark.parametrize("revision", REVISIONS)
async def test_over_stdio_the_refusal_is_rate_limited(revision: str) -> None:
    recorder = Recorder()
    command = [sys.executable, "-m", "mcp_elicit", "serve", str(SERVER)]
    async with connect_stdio(command, versions=[revision], trace=recorder, cwd=str(ROOT)) as client:
        for _ in range(2):
            await client.call_tool("hello")
        with pytest.raises(RateLimited) as refused:
            await client.call_tool("hello")
    refusal(refused.value, None)
    checked(recorder, revision)


@pytest.mark.parametrize(
    ("error", "kind", "after", "limit"),
    [
        ({"code": -32600, "message": "m", "data": {"retryAfter": 3, "limit": "x"}}, RateLimited, 3, "x"),
        ({"code": -32600, "message": "m", "data": {"retryAfter": 0.5}}, RateLimited, 0.5, None),
        # a share held (no wait), or a wait that is no number: the plain -32600
        (
            {"code": -32600, "message": "m", "data": {"limit": "max_sessions", "most": 3}},
            InvalidRequest,
            0,
            None,
        ),
        ({"code": -32600, "message": "m", "data": {"retryAfter": True}}, InvalidRequest, 0, None),
        ({"code": -32600, "message": "m", "data": {"retryAfter": False}}, InvalidRequest, 0, None),
        ({"code": -32600, "message": "m", "data": {"retryAfter": "3"}}, InvalidRequest, 0, None),
        # a wait in the past is no wait: "try again in -5 s" would be nonsense
        ({"code": -32600, "message": "m", "data": {"retryAfter": -5}}, InvalidRequest, 0, None),
        ({"code": -32600, "message": "m", "data": {"retryAfter": 0}}, RateLimited, 0, None),
        ({"code": -32602, "message": "m", "data": {"retryAfter": 3}}, ProtocolError, 0, None),
    ],
)
def test_which_errors_are_rate_limited(
    error: dict[str, object], kind: type[ProtocolError], after: float, limit: str | None
) -> None:
    rebuilt = ProtocolError.from_error(error)
    assert type(rebuilt) is kind or (kind is ProtocolError and not isinstance(rebuilt, RateLimited))
    if isinstance(rebuilt, RateLimited):
        assert (rebuilt.retry_after, rebuilt.limit) == (after, limit)


def test_it_is_public() -> None:
    assert mcp_elicit.RateLimited is RateLimited
