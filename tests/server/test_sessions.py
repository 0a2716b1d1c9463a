"""Handshake sessions: limits, expiry, principals, waiting for people, cleaning up, and
URL mode with completion (2025-11-25)."""

from __future__ import annotations

import asyncio
from typing import Any

import orjson
import pytest

from mcp_elicit import Context, Form, Principal, Server, String
from mcp_elicit.core.rev_2025_11_25 import Handshake
from mcp_elicit.errors import PrincipalLimitReached, URLElicitationRequired
from mcp_elicit.server.sessions import (
    INITIALIZED_WAIT,
    MAX_ELICITATIONS,
    MAX_SUBSCRIBED_URI,
    MAX_SUBSCRIPTIONS,
    Sessions,
)
from mcp_elicit.wire import jsonrpc
from mcp_elicit.wire.meta import ClientCapabilities

from support.memory import MemoryClient, SessionClient
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


def build(**options: Any) -> Server:
    app = Server("sessions", **options)

    @app.tool()
    async def ask_name(ctx: Context) -> str:
        answer = await ctx.elicit("Name?", Form(name=String()))
        return f"answer: {answer.action}"

    @app.tool()
    async def connect(ctx: Context) -> str:
        answer = await ctx.require_url(
            "Connect your account", "https://example.com/connect", elicitation_id="e-1"
        )
        return f"connected: {answer.action}"

    @app.tool()
    async def open_page(ctx: Context, n: int) -> str:
        answer = await ctx.elicit_url("Open the page", "https://example.com/step", elicitation_id=f"step-{n}")
        return f"page: {answer.action}"

    return app


class Silent(SessionClient):
    """A client that never answers the server's questions."""

    async def send(self, data: bytes) -> None:
        self.asked.append(orjson.loads(data))


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


async def test_no_answer_in_time_counts_as_cancel(wire_2025: WireChecker) -> None:
    client = Silent(build(ask_timeout=0.05), checker=wire_2025)
    await client.open()
    result = await client.result("tools/call", {"name": "ask_name"})
    assert result["content"][0]["text"] == "answer: cancel"
    assert client.session.pending == {}
    # The client is told the question is withdrawn, so that nobody keeps answering it.
    question, withdrawn = client.asked
    assert question["method"] == "elicitation/create"
    assert withdrawn == {
        "jsonrpc": "2.0",
        "method": "notifications/cancelled",
        "params": {"requestId": question["id"], "reason": "no answer within 0.05 s"},
    }
    wire_2025.notification(withdrawn)


async def test_no_question_goes_out_before_the_client_says_initialized(wire_2025: WireChecker) -> None:
    """2025-11-25 lifecycle: the server sends no request but pings and logging before the
    client's ``notifications/initialized``. A question asked before it waits for it (a
    client's notification may arrive after its first request, on another connection)."""
    client = SessionClient(build(), checker=wire_2025)
    client.answer = lambda _k, _r: {"action": "decline"}
    await client.open(initialized=False)
    call = asyncio.ensure_future(client.result("tools/call", {"name": "ask_name"}))
    await asyncio.sleep(0.05)
    assert client.asked == [], "elicitation/create went out before notifications/initialized"
    assert not call.done()
    client.initialized()
    result = await asyncio.wait_for(call, 5)
    assert result["content"][0]["text"] == "answer: decline"
    assert [m["method"] for m in client.asked] == ["elicitation/create"]


async def test_a_client_that_never_says_initialized_is_asked_nothing(
    wire_2025: WireChecker, caplog: pytest.LogCaptureFixture
) -> None:
    """The wait for ``notifications/initialized`` is bounded by the question's own time:
    past it the question counts as unanswered (cancel), was never sent, and the log says why."""
    client = Silent(build(ask_timeout=0.05), checker=wire_2025)
    await client.open(initialized=False)
    with caplog.at_level("WARNING", logger="mcp_elicit.sessions"):
        result = await client.result("tools/call", {"name": "ask_name"})
    assert result["content"][0]["text"] == "answer: cancel"
    assert client.asked == [], "nothing is sent, not even a withdrawal"
    assert client.session.pending == {}
    assert "notifications/initialized" in caplog.text and "elicitation/create" in caplog.text


class Slow(SessionClient):
    """A client whose person takes ``delay`` seconds to answer each question."""

    delay = 1.8

    async def send(self, data: bytes) -> None:
        async def later() -> None:
            await asyncio.sleep(self.delay)
            await SessionClient.send(self, data)

        self._answering = asyncio.ensure_future(later())


async def test_a_late_initialized_leaves_the_question_its_whole_time(wire_2025: WireChecker) -> None:
    """A client that sends ``notifications/initialized`` late, then takes most of
    ``ask_timeout`` to answer, still gets its answer in: the wait for the notification has
    a bound of its own and is not taken out of the time the person has to answer."""
    # Late by half of ask_timeout (the wait for the notification is bounded by it too), then
    # answering 60% of it: together past it, and each 1.2 s or more within its bound.
    client = Slow(build(ask_timeout=3.0), checker=wire_2025)
    client.answer = lambda _k, _r: {"action": "decline"}
    await client.open(initialized=False)
    call = asyncio.ensure_future(client.result("tools/call", {"name": "ask_name"}))
    await asyncio.sleep(1.5)
    assert client.asked == []
    client.initialized()
    result = await asyncio.wait_for(call, 5)
    assert result["content"][0]["text"] == "answer: decline"
    assert [m["method"] for m in client.asked] == ["elicitation/create"]


async def test_a_client_that_never_says_initialized_hears_so_long_before_ask_timeout(
    wire_2025: WireChecker, caplog: pytest.LogCaptureFixture
) -> None:
    """The wait for ``notifications/initialized`` is bounded by ``initialized_wait``
    (``INITIALIZED_WAIT`` unless changed), far below the default ``ask_timeout``: a client
    that never sends it has its question end as unanswered soon, not after ten minutes."""
    server = build()
    client = Silent(server, checker=wire_2025)
    await client.open(initialized=False)
    assert client.session.initialized_wait == INITIALIZED_WAIT <= server.ask_timeout / 10
    client.session.initialized_wait = 0.1
    with caplog.at_level("WARNING", logger="mcp_elicit.sessions"):
        result = await asyncio.wait_for(client.result("tools/call", {"name": "ask_name"}), 5)
    assert result["content"][0]["text"] == "answer: cancel"
    assert client.asked == []
    assert "sent no notifications/initialized within 0.1 s; elicitation/create was not sent" in caplog.text


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


async def test_url_required_and_completion_reach_only_the_owning_session(wire_2025: WireChecker) -> None:
    app = build()
    owner = SessionClient(app, capabilities={"elicitation": {"url": {}}}, checker=wire_2025)
    other = SessionClient(app, capabilities={"elicitation": {"url": {}}}, checker=wire_2025)
    await owner.open()
    await other.open()
    response = await owner.request("tools/call", {"name": "connect"})
    assert response["error"]["code"] == -32042
    (elicitation,) = response["error"]["data"]["elicitations"]
    assert elicitation == {
        "mode": "url",
        "message": "Connect your account",
        "url": "https://example.com/connect",
        "elicitationId": "e-1",
    }
    assert not app.complete_elicitation("unknown-id")
    assert app.complete_elicitation("e-1")
    assert not app.complete_elicitation("e-1"), "a finished id is ignored"
    pushed = await owner.session.next_pushed(0.1)
    notification = orjson.loads(pushed)
    wire_2025.notification(notification)
    assert notification == {
        "jsonrpc": "2.0",
        "method": "notifications/elicitation/complete",
        "params": {"elicitationId": "e-1"},
    }
    assert await other.session.next_pushed(0.01) is None


async def test_a_handler_chosen_id_completes_for_its_principal_only(wire_2025: WireChecker) -> None:
    app = build()
    url_caps = {"elicitation": {"url": {}}}
    alice = SessionClient(app, capabilities=url_caps, principal=Principal("alice"), checker=wire_2025)
    alice_too = SessionClient(app, capabilities=url_caps, principal=Principal("alice"), checker=wire_2025)
    bob = SessionClient(app, capabilities=url_caps, principal=Principal("bob"), checker=wire_2025)
    for client in (bob, alice, alice_too):  # bob's session waits on "e-1" first
        await client.open()
        assert (await client.request("tools/call", {"name": "connect"}))["error"]["code"] == -32042
    # the handler chose the id, so several sessions wait on "e-1": the principal says whose it is
    assert not app.complete_elicitation("e-1"), "no unauthenticated session waits on e-1"
    assert app.complete_elicitation("e-1", principal="alice")
    for client in (alice, alice_too):  # every session of alice's that waits on it hears
        pushed = orjson.loads(await client.session.next_pushed(0.1))
        wire_2025.notification(pushed)
        assert pushed["params"] == {"elicitationId": "e-1"}
    assert await bob.session.next_pushed(0.01) is None, "alice's completion reached bob's session"
    assert not app.complete_elicitation("e-1", principal="alice"), "a finished id is ignored"
    assert app.complete_elicitation("e-1", principal="bob")
    assert orjson.loads(await bob.session.next_pushed(0.1))["params"] == {"elicitationId": "e-1"}


@pytest.mark.parametrize("action", ["decline", "cancel", None])
async def test_a_url_question_that_ends_without_the_page_is_forgotten(
    wire_2025: WireChecker, action: str | None
) -> None:
    """Declined, cancelled or unanswered in time (None), nothing will complete it: the
    session stops waiting on its id (a long-lived session would otherwise pile them up)."""
    caps = {"elicitation": {"url": {}}}
    app = build(ask_timeout=0.05)
    client = (
        SessionClient(app, capabilities=caps, checker=wire_2025) if action else Silent(app, capabilities=caps)
    )
    client.answer = lambda _k, _r: {"action": action}
    await client.open()
    result = await client.result("tools/call", {"name": "open_page", "arguments": {"n": 1}})
    assert result["content"][0]["text"] == f"page: {action or 'cancel'}"
    assert "step-1" not in client.session.elicitations
    assert not app.complete_elicitation("step-1")


async def test_an_accepted_url_question_waits_for_its_completion(wire_2025: WireChecker) -> None:
    app = build()
    client = SessionClient(app, capabilities={"elicitation": {"url": {}}}, checker=wire_2025)
    client.answer = lambda _k, _r: {"action": "accept"}
    await client.open()
    for _ in range(2):  # the same id asked twice: one completion finishes both
        result = await client.result("tools/call", {"name": "open_page", "arguments": {"n": 1}})
        assert result["content"][0]["text"] == "page: accept"
    client.answer = lambda _k, _r: {"action": "decline"}
    await client.result("tools/call", {"name": "open_page", "arguments": {"n": 1}})
    assert "step-1" in client.session.elicitations, "a declined ask dropped the accepted ones' id"
    assert app.complete_elicitation("step-1")
    assert "step-1" not in client.session.elicitations
    assert not app.complete_elicitation("step-1")


async def test_url_questions_sharing_a_handler_chosen_id_get_unique_ids(wire_2025: WireChecker) -> None:
    """An elicitation id is unique per elicitation: a handler that gives one id to every
    step of a kind ("step-1"), asked again while the first step still waits on its page,
    has the second sent under an id of its own, so the client can tell them apart. The
    handler's id still completes them: one notice for each, under the id it was sent with."""
    app = build()
    client = SessionClient(app, capabilities={"elicitation": {"url": {}}}, checker=wire_2025)
    client.answer = lambda _k, _r: {"action": "accept"}
    await client.open()
    for _ in range(2):
        await client.result("tools/call", {"name": "open_page", "arguments": {"n": 1}})
    sent = [asked["params"]["elicitationId"] for asked in client.asked]
    assert sent[0] == "step-1", "the first step keeps the handler's id"
    assert len(set(sent)) == 2, f"two live elicitations share an id: {sent}"
    assert app.complete_elicitation("step-1")
    notices = [orjson.loads(await client.session.next_pushed(0.1)) for _ in sent]
    for notice in notices:
        wire_2025.notification(notice)
    assert sorted(n["params"]["elicitationId"] for n in notices) == sorted(sent)
    assert await client.session.next_pushed(0.01) is None
    assert client.session.elicitations == {}
    # once the first has completed, the handler's id is free again
    await client.result("tools/call", {"name": "open_page", "arguments": {"n": 1}})
    assert client.asked[-1]["params"]["elicitationId"] == "step-1"


async def test_the_ids_a_session_waits_on_are_bounded() -> None:
    app = build()
    client = SessionClient(app, capabilities={"elicitation": {"url": {}}})
    client.answer = lambda _k, _r: {"action": "accept"}  # and the pages are never completed
    await client.open()
    for n in range(MAX_ELICITATIONS + 10):
        await client.result("tools/call", {"name": "open_page", "arguments": {"n": n}})
    assert len(client.session.elicitations) == MAX_ELICITATIONS
    assert "step-0" not in client.session.elicitations, "the oldest makes room"
    assert app.complete_elicitation(f"step-{MAX_ELICITATIONS + 9}")


async def test_require_url_on_2026_is_an_input_request(wire: WireChecker) -> None:
    client = MemoryClient(build(), capabilities={"elicitation": {"url": {}}}, checker=wire)
    first = await client.result("tools/call", {"name": "connect"})
    request = next(iter(first["inputRequests"].values()))
    assert request["params"]["mode"] == "url"
    final, _ = await client.rounds("tools/call", {"name": "connect"}, lambda k, r: {"action": "accept"})
    assert final["result"]["content"][0]["text"] == "connected: accept"


def raising_url_required() -> tuple[Server, list[bool]]:
    """A tool that raises ``URLElicitationRequired`` itself until its step is done."""
    app, linked = Server("raises"), [False]

    @app.tool()
    async def link(ctx: Context) -> str:
        if linked[0]:
            return "linked"
        step = {"mode": "url", "message": "Link your account", "url": "https://example.com/link"}
        raise URLElicitationRequired(
            "Link your account first", {"elicitations": [{**step, "elicitationId": "l-1"}]}
        )

    return app, linked


async def test_a_raised_url_elicitation_required_on_2026_is_an_input_request(
    wire: WireChecker, wire_2025: WireChecker
) -> None:
    """2026-07-28 has no -32042: a handler's own ``URLElicitationRequired`` asks its steps
    as ``ctx.require_url`` would (an input request); the retry runs the handler again,
    which either finishes or asks again; a declined step ends the tool with an error."""
    app, linked = raising_url_required()
    client = MemoryClient(app, capabilities={"elicitation": {"url": {}}}, checker=wire)
    first = await client.result("tools/call", {"name": "link"})
    assert first["resultType"] == "input_required"
    (request,) = first["inputRequests"].values()
    assert request == {
        "method": "elicitation/create",
        "params": {"mode": "url", "message": "Link your account", "url": "https://example.com/link"},
    }
    retry = {"name": "link", "inputResponses": {key: {"action": "accept"} for key in first["inputRequests"]}}
    again = await client.result("tools/call", {**retry, "requestState": first["requestState"]})
    assert again["resultType"] == "input_required", "accepted but not done yet: asked again"
    assert list(again["inputRequests"].values()) == [request]
    declined, _ = await client.rounds("tools/call", {"name": "link"}, lambda k, r: {"action": "decline"})
    assert declined["result"]["isError"] is True
    assert "Link your account" in declined["result"]["content"][0]["text"]
    linked[0] = True
    final, _ = await client.rounds("tools/call", {"name": "link"}, lambda k, r: {"action": "accept"})
    assert final["result"]["content"][0]["text"] == "linked"
    bare = MemoryClient(app, capabilities={"elicitation": {"form": {}}}, checker=wire)
    linked[0] = False
    refused = await bare.request("tools/call", {"name": "link"})
    assert refused["error"]["code"] == -32021, "as ctx.require_url: the client must declare elicitation.url"
    session = SessionClient(app, capabilities={"elicitation": {"url": {}}}, checker=wire_2025)
    await session.open()
    assert (await session.request("tools/call", {"name": "link"}))["error"]["code"] == -32042


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
