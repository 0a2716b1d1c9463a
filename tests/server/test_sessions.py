"""Handshake sessions (2025-11-25): ids, limits, principals, ids in flight, cleaning up,
their methods, subscriptions and version negotiation."""

from __future__ import annotations

import asyncio

import orjson
import pytest

from mcp_elicit import Principal
from mcp_elicit.core.rev_2025_11_25 import Handshake
from mcp_elicit.errors import PrincipalLimitReached
from mcp_elicit.server.sessions import (
    MAX_SUBSCRIBED_URI,
    MAX_SUBSCRIPTIONS,
    Sessions,
)
from mcp_elicit.wire import jsonrpc
from mcp_elicit.wire.meta import ClientCapabilities

from support.memory import SessionClient
from support.server_sessions import Silent, build
from support.wire import WireChecker

pytestmark = pytest.mark.anyio
HANDSHAKE = Handshake("2025-11-25", ClientCapabilities({"elicitation": {}}), None)


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def test_session_ids_are_unguessable_visible_ascii() -> None:
    sessions = Sessions()
    ids = {sessions.create(HANDSHAKE, None).id for _ in range(50)}
    assert len(ids) == 50
    for sid in ids:
        assert len(sid) >= 32
        assert all(0x21 <= ord(c) <= 0x7E for c in sid)


def test_unknown_expired_and_foreign_sessions_are_not_found() -> None:
    clock = Clock()
    sessions = Sessions(idle_timeout=60, clock=clock)
    mine = sessions.create(HANDSHAKE, "alice")
    assert sessions.get("nope", "alice") is None
    assert sessions.get(mine.id, "bob") is None
    assert sessions.get(mine.id, None) is None
    assert sessions.get(mine.id, "alice") is mine
    clock.now += 59
    assert sessions.get(mine.id, "alice") is mine
    clock.now += 61
    assert sessions.get(mine.id, "alice") is None
    assert mine.closed


def test_the_number_of_sessions_is_bounded() -> None:
    clock = Clock()
    sessions = Sessions(max_sessions=3, clock=clock)
    first = sessions.create(HANDSHAKE, None)
    for _ in range(2):
        clock.now += 1
        sessions.create(HANDSHAKE, None)
    clock.now += 1
    sessions.create(HANDSHAKE, None)
    assert len(sessions) == 3
    assert first.closed, "the least recently used idle session makes room"


def test_one_principal_cannot_take_every_session() -> None:
    """With authentication, a principal holds at most ``max_sessions_per_principal``
    sessions: past it, its own least recently seen idle one makes room, never another's;
    when all of its own are in use, it alone is refused: -32600 with HTTP 429 (its own
    doing), while a server whose every session is in use says "try again later" (503)."""
    clock = Clock()
    sessions = Sessions(max_sessions=4, max_sessions_per_principal=2, clock=clock)
    bob = sessions.create(HANDSHAKE, "bob")
    ann = []
    for _ in range(5):
        clock.now += 1
        ann.append(sessions.create(HANDSHAKE, "ann"))
    assert sessions.get(bob.id, "bob") is bob, "another principal's flood leaves bob's session"
    assert [s.closed for s in ann] == [True, True, True, False, False]
    for held in ann[3:]:
        held.listeners = 1  # in use: not to be evicted
    with pytest.raises(PrincipalLimitReached) as refused:
        sessions.create(HANDSHAKE, "ann")
    assert (refused.value.code, refused.value.http_status) == (-32600, 429)
    assert refused.value.data == {"limit": "max_sessions_per_principal", "most": 2}
    assert refused.value.message.startswith(
        "Too many sessions: principal 'ann' holds 2, the limit for one principal "
        "(max_sessions_per_principal); "
    )
    assert sessions.create(HANDSHAKE, "bob") is not None, "bob can still open one"
    anonymous = Sessions(max_sessions=4, max_sessions_per_principal=2, clock=clock)
    unauthenticated = [anonymous.create(HANDSHAKE, None) for _ in range(4)]
    assert not any(s.closed for s in unauthenticated), "without authentication, only max_sessions counts"


async def _waiting(client: SessionClient, rid: int) -> asyncio.Task[bytes | None]:
    message = jsonrpc.Request(rid, "tools/call", {"name": "ask_name"})
    task = asyncio.ensure_future(client.server.respond_in_session(message, client.session, channel=client))
    for _ in range(50):
        await asyncio.sleep(0)
        if client.session.pending:
            break
    assert client.session.pending, "the server should be waiting for the answer"
    return task


async def test_a_request_reusing_the_id_of_one_in_flight_is_refused(wire_2025: WireChecker) -> None:
    """Over HTTP each request of a session has its own stream, so two can share an id; the
    second is refused (-32600) and the first keeps it: a cancellation still reaches it."""
    client = Silent(build(), checker=wire_2025)
    await client.open()
    first = await _waiting(client, 7)
    again = jsonrpc.Request(7, "tools/list", {})
    refused = await client.server.respond_in_session(again, client.session, channel=client)
    assert refused is not None
    error = orjson.loads(refused)
    wire_2025.response("tools/list", error)
    assert error["id"] == 7 and error["error"]["code"] == -32600
    assert "already in use" in error["error"]["message"]
    assert not first.done()
    assert client.session.cancel(7)
    assert await first is None
    assert client.session.inflight == {}


async def test_abandoned_elicitations_leave_nothing_behind(wire_2025: WireChecker) -> None:
    client = Silent(build(), checker=wire_2025)
    await client.open()
    await asyncio.sleep(0)
    baseline = len(asyncio.all_tasks())
    # cancelled by the client, one after another: each question is withdrawn as well
    for rid in range(100, 120):
        task = await _waiting(client, rid)
        question = client.asked[-1]
        assert client.session.cancel(rid)
        assert await task is None
        withdrawn = client.asked[-1]
        assert withdrawn["method"] == "notifications/cancelled"
        assert withdrawn["params"] == {
            "requestId": question["id"],
            "reason": "the request it belongs to ended",
        }
        wire_2025.notification(withdrawn)
    # the session is deleted while a question waits: the request answers with an error
    task = await _waiting(client, 500)
    client.server.sessions.close(client.session.id)
    ended = await task
    assert ended is not None
    error = orjson.loads(ended)
    wire_2025.response("tools/call", error)
    assert error["id"] == 500 and "the session ended before the request finished" in error["error"]["message"]
    await asyncio.sleep(0)
    assert client.session.pending == {}
    assert client.session.inflight == {}
    assert client.session.cancelled == set()
    assert len(asyncio.all_tasks()) == baseline


async def test_closing_the_stream_cancels_the_wait(wire_2025: WireChecker) -> None:
    client = Silent(build(), checker=wire_2025)
    await client.open()
    task = await _waiting(client, 7)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert client.session.pending == {}
    assert client.session.inflight == {}


async def test_session_methods(wire_2025: WireChecker) -> None:
    server = build()

    @server.resource("test://x")
    async def x() -> str:
        return "x"

    client = SessionClient(server, checker=wire_2025)
    init = (await client.open())["result"]
    assert init["protocolVersion"] == "2025-11-25"
    assert init["serverInfo"]["name"] == "sessions"
    assert "resultType" not in init
    assert await client.result("ping") == {}
    assert await client.result("logging/setLevel", {"level": "info"}) == {}
    assert client.session.log_level == "info"
    assert await client.result("resources/subscribe", {"uri": "test://x"}) == {}
    assert client.server.notify_resource_updated("test://x") == 1
    assert orjson.loads(await client.session.next_pushed(0.1))["method"] == "notifications/resources/updated"
    assert await client.result("resources/unsubscribe", {"uri": "test://x"}) == {}
    assert client.server.notify_resource_updated("test://x") == 0
    missing = await client.request("server/discover", malformed=True)
    assert missing["error"]["code"] == -32601
    again = await client.request(
        "initialize",
        {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "x", "version": "1"}},
        malformed=True,
    )
    assert again["error"]["code"] == -32600


async def test_a_sessions_subscriptions_are_bounded(wire_2025: WireChecker) -> None:
    """A client cannot grow the server's memory by subscribing: a URI's length and the
    number of URIs a session holds are bounded, each refusal saying what to do."""
    server = build()

    @server.resource("test://{n}")
    async def numbered(n: str) -> str:
        return n

    client = SessionClient(server, checker=wire_2025)
    await client.open()
    long_uri = "test://" + "x" * MAX_SUBSCRIBED_URI
    too_long = await client.request("resources/subscribe", {"uri": long_uri}, malformed=True)
    assert too_long["error"]["code"] == -32602
    assert f"{MAX_SUBSCRIBED_URI}" in too_long["error"]["message"]
    for n in range(MAX_SUBSCRIPTIONS):
        assert await client.result("resources/subscribe", {"uri": f"test://{n}"}) == {}
    assert await client.result("resources/subscribe", {"uri": "test://0"}) == {}, "already held"
    full = await client.request("resources/subscribe", {"uri": "test://one-more"}, malformed=True)
    # the client's own doing, not the server's fault: -32600 naming the limit and the way out
    assert full["error"]["code"] == -32600
    assert f"limit of {MAX_SUBSCRIPTIONS}" in full["error"]["message"]
    assert "resources/unsubscribe" in full["error"]["message"]
    assert len(client.session.subscriptions) == MAX_SUBSCRIPTIONS
    assert await client.result("resources/unsubscribe", {"uri": "test://0"}) == {}
    assert await client.result("resources/subscribe", {"uri": "test://one-more"}) == {}


@pytest.mark.parametrize(
    ("asked", "got"),
    [
        ("2025-06-18", "2025-06-18"),
        ("2025-03-26", "2025-03-26"),
        ("2024-01-01", "2025-11-25"),
        ("2026-07-28", "2025-11-25"),
    ],
)
async def test_version_negotiation(asked: str, got: str) -> None:
    client = SessionClient(build(), version=asked)
    assert (await client.open())["result"]["protocolVersion"] == got


async def test_sessions_belong_to_their_principal() -> None:
    app = build()
    alice = SessionClient(app, principal=Principal("alice"))
    await alice.open()
    assert app.sessions.get(alice.session.id, "alice") is alice.session
    assert app.sessions.get(alice.session.id, "mallory") is None
