"""The client against a scripted server function at a handshake revision (2025-11-25): sessions, their ids, versions and expiry, renewed once
however many requests or streams meet an expired one."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from client.fakes import FakeExchange, FakeTransport, error, result
from mcp_elicit.client import Client
from mcp_elicit.client.transport import Ended
from mcp_elicit.errors import (
    ProtocolViolation,
    TransportError,
    UnsupportedProtocolVersion,
)
from mcp_elicit.wire.versions import SUPPORTED

from support.handshake import V2025, init
from support.waiting import eventually
from support.wire import WireChecker

pytestmark = pytest.mark.anyio


async def test_the_session_id_goes_on_every_later_request_and_delete_ends_it(wire_2025: WireChecker) -> None:
    def serve(message: dict[str, Any], headers: dict[str, str]) -> list[Any]:
        if message["method"] == "initialize":
            return [init(message)]
        assert headers["Mcp-Session-Id"] == "sess-1"
        assert headers["MCP-Protocol-Version"] == "2025-11-25"
        return [result(message, {"tools": [{"name": "t", "inputSchema": {"type": "object"}}]})]

    transport = FakeTransport(serve, headers={"mcp-session-id": "sess-1"})
    async with Client(transport, versions=V2025) as client:
        assert [t["name"] for t in await client.list_tools()] == ["t"]
    init_message, init_headers = transport.requests[0]
    assert "Mcp-Session-Id" not in init_headers
    wire_2025.request(init_message)
    assert init_message["params"]["clientInfo"]["name"] == "mcp-elicit"
    note, note_headers = transport.sent[0]
    assert note == {"jsonrpc": "2.0", "method": "notifications/initialized"}
    assert note_headers["Mcp-Session-Id"] == "sess-1"
    assert transport.ended_sessions == [{"MCP-Protocol-Version": "2025-11-25", "Mcp-Session-Id": "sess-1"}]
    for message, _ in transport.requests[1:]:
        wire_2025.request(message)


@pytest.mark.parametrize(
    ("session_id", "shown"),
    [
        ("bad id", "character 4 is U+0020"),
        ("tab\tid", "character 4 is U+0009"),
        ("caf\u00e9", "character 4 is U+00E9"),
        ("x\x1b[2J", "character 2 is U+001B"),
        ("s" * 4097, "4097 characters long"),
    ],
    ids=["space", "tab", "non-ascii", "escape", "enormous"],
)
async def test_a_session_id_that_is_not_visible_ascii_is_a_protocol_violation(
    session_id: str, shown: str
) -> None:
    """Carrying on without the session the server meant (its later requests refused with a
    bare 400) helps nobody: ``initialize`` fails, saying what is wrong with the id."""
    requests: list[str] = []

    def serve(message: dict[str, Any], headers: dict[str, str]) -> list[Any]:
        requests.append(message["method"])
        return [init(message)] if message["method"] == "initialize" else [result(message, {"tools": []})]

    transport = FakeTransport(serve, headers={"mcp-session-id": session_id})
    with pytest.raises(ProtocolViolation) as caught:
        async with Client(transport, versions=V2025):
            pass
    message = str(caught.value)
    assert message.startswith("fake://server sent an invalid Mcp-Session-Id")
    assert shown in message and "visible ASCII" in message
    assert "\x1b" not in message and len(message) < 300
    assert requests == ["initialize"] and transport.ended_sessions == []


@pytest.mark.parametrize("session_id", ["!", "~" * 4096, "".join(map(chr, range(0x21, 0x7F)))])
async def test_a_session_id_of_visible_ascii_is_kept(session_id: str) -> None:
    def serve(message: dict[str, Any], headers: dict[str, str]) -> list[Any]:
        if message["method"] != "initialize":
            assert headers["Mcp-Session-Id"] == session_id
        return [init(message)] if message["method"] == "initialize" else [result(message, {"tools": []})]

    transport = FakeTransport(serve, headers={"mcp-session-id": session_id})
    async with Client(transport, versions=V2025) as client:
        assert await client.list_tools() == []
    assert transport.ended_sessions[0]["Mcp-Session-Id"] == session_id


@pytest.mark.parametrize("versions", [V2025, list(SUPPORTED)])
async def test_a_session_opened_at_a_version_the_client_refuses_is_ended(versions: list[str]) -> None:
    """basic/lifecycle.mdx: a client that does not support the version the server chose
    disconnects, saying which version; the session the server opened with that answer is
    no longer needed, so it gets its DELETE (basic/transports.mdx). It was left open on
    the server until it expired (the id was read only once the version was accepted); and
    a client that also speaks 2026-07-28 took its own refusal (-32022) for the server's
    word that it is modern after all: it probed and initialized again, leaving a second
    session, and failed with 'could not settle a protocol revision'."""

    def serve(message: dict[str, Any], headers: dict[str, str]) -> list[Any]:
        if message["method"] == "server/discover":
            return [error(message, -32601, "Method not found")]
        return [init(message, "2024-11-05")]

    transport = FakeTransport(serve, headers={"mcp-session-id": "S"})
    with pytest.raises(UnsupportedProtocolVersion, match="chose protocol version '2024-11-05'"):
        async with Client(transport, versions=versions):
            pass
    assert transport.methods().count("initialize") == 1
    assert [h.get("Mcp-Session-Id") for h in transport.ended_sessions] == ["S"]
    assert transport.closed


async def test_an_expired_session_is_renewed_once() -> None:
    calls = {"tools/list": 0, "initialize": 0}

    def serve(message: dict[str, Any], headers: dict[str, str]) -> list[Any]:
        calls[message["method"]] += 1
        if message["method"] == "initialize":
            return [init(message)]
        if calls["tools/list"] == 1:
            return [Ended(404, body="session not found")]
        return [result(message, {"tools": []})]

    async with Client(FakeTransport(serve, headers={"mcp-session-id": "s"}), versions=V2025) as client:
        assert await client.list_tools() == []
    assert calls == {"tools/list": 2, "initialize": 2}


async def test_concurrent_requests_on_an_expired_session_renew_it_once() -> None:
    """Two requests that both meet the 404 of an expired session start one new session
    between them (the lifecycle's one initialize, then notifications/initialized), and no
    request goes out while it is being set up, without the session's MCP-Protocol-Version
    and Mcp-Session-Id: each started its own initialize, the second replacing the first's
    session, and a request sent meanwhile carried neither header."""
    transport: FakeTransport
    live: list[str] = []  # the session the server knows, if any

    async def serve(message: dict[str, Any], headers: dict[str, str]) -> list[Any]:
        if message["method"] == "initialize":
            opened = len(transport.methods())
            if opened > 1:
                await asyncio.sleep(0.2)  # a slow handshake: others are waiting meanwhile
            live[:] = [f"s-{opened}"]
            transport.response_headers = {"mcp-session-id": live[0]}
            return [init(message)]
        await asyncio.sleep(0.05)
        if headers.get("Mcp-Session-Id") not in live:
            return [Ended(404, body="session not found")]
        return [result(message, {"tools": []})]

    transport = FakeTransport(serve)
    async with Client(transport, versions=V2025) as client:
        live.clear()  # the server forgot the session
        assert await asyncio.gather(client.list_tools(), client.list_tools(), client.list_tools()) == [[]] * 3
    assert transport.methods().count("initialize") == 2
    for message, headers in transport.requests:
        if message["method"] != "initialize":
            assert headers.get("MCP-Protocol-Version") == "2025-11-25", message
            assert headers.get("Mcp-Session-Id") in ("s-1", "s-5"), message
    initialized = [m for m, _ in transport.sent if m.get("method") == "notifications/initialized"]
    assert len(initialized) == 2


def _expiring(transport_box: list[FakeTransport], live: list[str]) -> Any:
    """A server whose sessions are ``s-<n>``: each initialize opens one, a request in a
    session it no longer knows gets 404."""

    def serve(message: dict[str, Any], headers: dict[str, str]) -> list[Any]:
        if message["method"] == "initialize":
            live[:] = [f"s-{transport_box[0].methods().count('initialize')}"]
            transport_box[0].response_headers = {"mcp-session-id": live[0]}
            return [init(message)]
        if headers.get("Mcp-Session-Id") not in live:
            return [Ended(404, body="session not found")]
        if message["method"] == "tools/call":
            return [Ended(200, last_event_id="ev-1", retry_ms=10)]
        return [result(message, {"tools": []})]

    return serve


async def test_an_event_stream_that_meets_an_expired_session_renews_it_and_listens_again() -> None:
    """basic/transports.mdx, Session Management: a 404 to a request with Mcp-Session-Id
    means a new InitializeRequest; the GET event stream is such a request. An idle client
    whose session expired met the 404 when it came back to its event stream and stopped
    listening, in a session nobody renewed: the server's notices (URL steps completed, list
    changes) never reached it. Now it opens a new session and listens in that one."""
    box: list[FakeTransport] = []
    live: list[str] = []

    def listen(headers: dict[str, str], last: str | None) -> FakeExchange | Ended | None:
        if headers.get("Mcp-Session-Id") not in live:
            return Ended(404, body="session not found")
        if live == ["s-1"]:  # the server ends the stream, then forgets the session
            live.clear()
            return FakeExchange([Ended(200, last_event_id="g-1", retry_ms=10)])
        quiet = FakeExchange([])
        quiet.hang = True
        return quiet

    transport = FakeTransport(_expiring(box, live), listen=listen)
    box.append(transport)
    async with Client(transport, versions=V2025) as client:
        await eventually(
            lambda: any(h.get("Mcp-Session-Id") == "s-2" for h, _, _ in transport.listens), "a GET in s-2"
        )
        assert await client.list_tools() == []
    assert transport.methods().count("initialize") == 2
    (renewing,) = [h for m, h in transport.requests if m["method"] == "initialize"][1:]
    assert "Mcp-Session-Id" not in renewing
    assert [(h.get("Mcp-Session-Id"), last) for h, last, _ in transport.listens] == [
        ("s-1", None),
        ("s-1", "g-1"),
        ("s-2", None),
    ]


async def test_a_resume_that_meets_an_expired_session_renews_it_and_fails_its_call_saying_so() -> None:
    """A 404 to the GET resuming a response stream is the session's end too: a new session
    is opened (later requests go in it), and the request fails saying its session expired
    while it was resumed; it is not sent again, since the server may have acted on it."""
    box: list[FakeTransport] = []
    live: list[str] = []

    def listen(headers: dict[str, str], last: str | None) -> FakeExchange | Ended | None:
        if last is None:
            return None  # no standalone stream
        live.clear()  # the session expired while the response was awaited
        return Ended(404, body="session not found")

    transport = FakeTransport(_expiring(box, live), listen=listen)
    box.append(transport)
    async with Client(transport, versions=V2025) as client:
        with pytest.raises(TransportError, match="session expired while its response was being resumed"):
            await client.call_tool("t")
        assert await client.list_tools() == []
    assert transport.methods() == ["initialize", "tools/call", "initialize", "tools/list"]
    assert transport.requests[-1][1]["Mcp-Session-Id"] == "s-2"
