"""2025-11-25 sessions over real HTTP (uvicorn on 127.0.0.1): the handshake, questions on
the request's SSE stream answered by a separate POST, the standalone GET stream, DELETE,
cancelling, and cleanup when the client goes away. Every message is checked against the
2025-11-25 schema."""

from __future__ import annotations

import asyncio
from typing import Any

import httpx
import orjson
import pytest

from mcp_elicit import Server
from mcp_elicit.transports.http_server import StreamableHTTP
from mcp_elicit.wire.sse import EventDecoder

from support.http_sessions import Session, _events, accepting
from support.procs import InProcess, uvicorn_server
from support.sessions import ACCEPT, ask_name_server, initialize_body
from support.wire import WireChecker

pytestmark = pytest.mark.anyio


async def test_initialize_gives_a_visible_ascii_session(
    served: tuple[Server, InProcess], wire_2025: WireChecker
) -> None:
    _, running = served
    async with httpx.AsyncClient() as http:
        session = Session(http, running.url, wire_2025)
        response = await session.open()
        assert response.json()["result"]["protocolVersion"] == "2025-11-25"
        assert all(0x21 <= ord(c) <= 0x7E for c in session.sid)
        pong = await http.post(
            running.url, json={"jsonrpc": "2.0", "id": 9, "method": "ping"}, headers=session.headers()
        )
        assert pong.json() == {"jsonrpc": "2.0", "id": 9, "result": {}}


async def test_a_question_on_the_stream_answered_by_a_post(session: Session, wire_2025: WireChecker) -> None:
    async with session.asked() as (stream, events, question):
        assert stream.headers["content-type"] == "text/event-stream"
        assert question["params"]["requestedSchema"]["properties"] == {"name": {"type": "string"}}
        answer = accepting(question, name="Ada")
        wire_2025.response("elicitation/create", answer)
        posted = await session.post(answer)
        assert posted.status_code == 202
        final = await anext(events)
        wire_2025.response("tools/call", final)
        assert final["result"]["content"][0]["text"] == "hello Ada"


async def test_completion_goes_to_the_session_stream(
    served: tuple[Server, InProcess], session: Session, wire_2025: WireChecker
) -> None:
    app, _ = served
    required = (await session.post(session.call("connect"))).json()
    wire_2025.response("tools/call", required)
    assert required["error"]["code"] == -32042
    assert required["error"]["data"]["elicitations"][0]["elicitationId"] == "e-42"
    async with session.http.stream("GET", session.url, headers=session.headers()) as stream:
        assert stream.status_code == 200
        events = _events(stream)
        assert app.complete_elicitation("e-42")
        done = await anext(events)
        wire_2025.notification(done)
        assert done == {
            "jsonrpc": "2.0",
            "method": "notifications/elicitation/complete",
            "params": {"elicitationId": "e-42"},
        }


async def test_a_client_that_goes_away_leaves_nothing_waiting(
    served: tuple[Server, InProcess], session: Session
) -> None:
    app, _ = served
    live = app.sessions.get(session.sid, None)
    assert live is not None
    for _ in range(5):
        async with session.asked():
            assert len(live.pending) == 1
        # the stream is closed: the server notices (within its watch delay), waits
        # resume_within for the client to resume it, then cleans up
        for _ in range(100):
            if not live.pending and not live.inflight:
                break
            await asyncio.sleep(0.02)
        assert live.pending == {}
    assert live.pending == {}
    assert live.inflight == {}


async def test_delete_ends_the_session(session: Session) -> None:
    assert (await session.http.delete(session.url, headers=session.headers())).status_code == 200
    gone = await session.post({"jsonrpc": "2.0", "id": 3, "method": "ping"})
    assert gone.status_code == 404
    assert gone.json()["id"] == 3
    assert (await session.http.delete(session.url, headers=session.headers())).status_code == 404


async def test_without_a_session(served: tuple[Server, InProcess]) -> None:
    _, running = served
    async with httpx.AsyncClient(timeout=10) as http:
        headers = {"accept": ACCEPT, "mcp-protocol-version": "2025-11-25"}
        response = await http.post(
            running.url, json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"}, headers=headers
        )
        assert response.status_code == 400
        assert "initialize" in response.json()["error"]["message"]
        unknown = await http.post(
            running.url,
            json={"jsonrpc": "2.0", "id": 2, "method": "ping"},
            headers={**headers, "mcp-session-id": "nope"},
        )
        assert unknown.status_code == 404
        modern_init = await http.post(
            running.url,
            json={
                "jsonrpc": "2.0",
                "id": 3,
                "method": "initialize",
                "params": {
                    "_meta": {
                        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
                        "io.modelcontextprotocol/clientCapabilities": {},
                    }
                },
            },
            headers={"accept": ACCEPT, "mcp-protocol-version": "2026-07-28", "mcp-method": "initialize"},
        )
        assert modern_init.status_code == 404
        assert modern_init.json()["error"]["code"] == -32601


async def test_a_malformed_answer_is_refused_without_an_id_and_gives_the_question_up(
    session: Session, wire_2025: WireChecker
) -> None:
    async with session.asked() as (_, events, question):
        posted = await session.post({"jsonrpc": "2.0", "id": question["id"], "result": None})
        assert posted.status_code == 400
        refused = posted.json()
        assert "id" not in refused, "the error answers no request of the client's"
        assert refused["error"]["code"] == -32600
        final = await asyncio.wait_for(anext(events), 10)
        wire_2025.response("tools/call", final)
        assert final["result"]["content"][0]["text"] == "hello cancel"


async def test_a_session_in_use_does_not_expire(wire_2025: WireChecker) -> None:
    """Idle means nothing going on: a session whose standalone stream stays open longer
    than the idle timeout was closed (its stream ended, its next request was 404), and so
    was one whose only request ran longer than it, right after that request answered."""
    app = ask_name_server("http-sessions-idle", session_idle_timeout=0.5)

    @app.tool()
    async def slow() -> str:
        await asyncio.sleep(0.8)
        return "slow done"

    ping = {"jsonrpc": "2.0", "id": 9, "method": "ping"}
    async with (
        uvicorn_server(StreamableHTTP(app, keepalive=0.2)) as running,
        httpx.AsyncClient(timeout=10) as http,
    ):
        listening, working = Session(http, running.url, wire_2025), Session(http, running.url, wire_2025)
        await listening.open()
        await working.open()
        async with http.stream("GET", running.url, headers=listening.headers()) as stream:
            assert stream.status_code == 200
            done = await http.post(running.url, json=working.call("slow"), headers=working.headers())
            answer = orjson.loads(EventDecoder().feed(done.content)[-1].data)  # kept alive: SSE
            wire_2025.response("tools/call", answer)
            assert answer["result"]["content"][0]["text"] == "slow done"
            await Session(http, running.url, wire_2025).open()  # a new session looks for expired ones
            app.notify_resource_updated("test://x")  # nobody subscribed: just a wake-up
            for session in (listening, working):
                kept = await http.post(running.url, json=ping, headers=session.headers())
                assert kept.status_code == 200, kept.text
                assert kept.json() == {"jsonrpc": "2.0", "id": 9, "result": {}}
        await asyncio.sleep(0.7)  # idle now, for longer than the timeout: gone
        gone = await http.post(running.url, json=ping, headers=listening.headers())
        assert gone.status_code == 404


async def test_a_client_that_takes_only_sse_gets_sse(
    served: tuple[Server, InProcess], wire_2025: WireChecker
) -> None:
    """Accept: text/event-stream alone: initialize and every answer come as SSE (they came
    as JSON, which the client had not said it takes)."""
    _, running = served
    accept = {"accept": "text/event-stream"}
    async with httpx.AsyncClient(timeout=10) as http:
        session = Session(http, running.url, wire_2025)
        opened = await http.post(running.url, json=initialize_body(capabilities={}), headers=accept)
        assert opened.headers["content-type"] == "text/event-stream"
        (answer,) = EventDecoder().feed(opened.content)
        wire_2025.response("initialize", orjson.loads(answer.data))
        session.sid = opened.headers["mcp-session-id"]
        pong = await http.post(
            running.url,
            json={"jsonrpc": "2.0", "id": 9, "method": "ping"},
            headers={**session.headers(), **accept},
        )
        assert pong.headers["content-type"] == "text/event-stream"
        (event,) = EventDecoder().feed(pong.content)  # the priming event carries no data
        assert orjson.loads(event.data) == {"jsonrpc": "2.0", "id": 9, "result": {}}
        assert event.id is not None


@pytest.mark.parametrize("named", [True, 1.0, [1], {"id": 1}])
async def test_a_cancel_naming_no_request_id_cancels_nothing(
    session: Session, wire_2025: WireChecker, named: Any
) -> None:
    """``notifications/cancelled`` whose requestId is not a string or an integer (true,
    1.0, a list) names no request: the tool call with id 1 waiting on the person goes on,
    and the answer reaches it (true is not the id 1, though Python holds True == 1)."""
    async with session.asked() as (_, events, question):
        cancel = {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": named}}
        assert (await session.post(cancel)).status_code == 202
        assert (await session.post(accepting(question, name="Ada"))).status_code == 202
        final = await asyncio.wait_for(anext(events), 10)
        wire_2025.response("tools/call", final)
        assert final["result"]["content"][0]["text"] == "hello Ada"


async def test_a_cancelled_request_asks_the_person_nothing_more(
    session: Session, wire_2025: WireChecker
) -> None:
    """The client cancels a tool call while the person is asked; its handler catches the
    cancellation and asks again. The client has given the request up: nothing more is
    asked for it (the second question reads as cancel at once, unsent), and its stream
    ends with the first question withdrawn, not held open for the ask timeout."""
    async with session.http.stream(
        "POST", session.url, json=session.call("stubborn"), headers=session.headers()
    ) as stream:
        events = _events(stream)
        question = await anext(events)
        assert question["params"]["message"] == "Name?"
        cancel = {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 1}}
        assert (await session.post(cancel)).status_code == 202
        async with asyncio.timeout(5):
            rest = [message async for message in events]
        for message in rest:
            wire_2025.notification(message)
        assert rest == [
            {
                "jsonrpc": "2.0",
                "method": "notifications/cancelled",
                "params": {"requestId": question["id"], "reason": "the request it belongs to ended"},
            }
        ]


async def test_a_cancelled_request_whose_handler_then_asks_a_url_step_gets_no_answer(
    session: Session, wire_2025: WireChecker
) -> None:
    """The client cancels a tool call; its handler catches the cancellation and asks a URL
    step, which ends the request with -32042. The client has given the request up: as for
    a handler that returns, nothing answers it, and the session waits on no step."""
    async with session.http.stream(
        "POST", session.url, json=session.call("stubborn_step"), headers=session.headers()
    ) as stream:
        events = _events(stream)
        question = await anext(events)
        cancel = {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 1}}
        assert (await session.post(cancel)).status_code == 202
        async with asyncio.timeout(5):
            rest = [message async for message in events]
    assert [m.get("method") for m in rest] == ["notifications/cancelled"], rest
    assert rest[0]["params"]["requestId"] == question["id"]


async def test_a_request_cancelled_before_it_streamed_gets_an_empty_event_stream(
    wire_2025: WireChecker,
) -> None:
    """A request whose response was still to be JSON when the client cancelled it gets no
    JSON-RPC response, yet the HTTP response to a POSTed request must be an event stream
    or JSON: an event stream with no event, so a client that checks the content type (the
    TypeScript SDK throws on any other) takes the cancellation quietly."""
    app = Server("cancelled-silent")
    started = asyncio.Event()

    @app.tool()
    async def silent() -> str:
        started.set()
        await asyncio.sleep(30)
        return "too late"

    async with uvicorn_server(StreamableHTTP(app, keepalive=None)) as running:
        async with httpx.AsyncClient(timeout=10) as http:
            session = Session(http, running.url, wire_2025)
            await session.open()
            call = asyncio.ensure_future(session.post(session.call("silent")))
            async with asyncio.timeout(5):
                await started.wait()
            cancel = {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 1}}
            assert (await session.post(cancel)).status_code == 202
            async with asyncio.timeout(5):
                response = await call
    assert response.status_code == 200
    assert response.headers["content-type"] == "text/event-stream"
    assert response.content == b""


async def test_get_and_delete_refuse_a_foreign_origin(session: Session) -> None:
    """The Origin check covers every request of a session, not only POSTs: a page of another
    site (DNS rebinding) can neither listen to the session's stream nor end it."""
    foreign = {**session.headers(), "origin": "http://evil.example.com"}
    async with session.http.stream("GET", session.url, headers=foreign) as listened:
        assert listened.status_code == 403
        refusal = orjson.loads(await listened.aread())
    deleted = await session.http.delete(session.url, headers=foreign)
    assert deleted.status_code == 403
    for error in (refusal, deleted.json()):
        assert error["error"]["code"] == -32600 and "id" not in error
    pong = await session.post({"jsonrpc": "2.0", "id": 7, "method": "ping"})
    assert pong.json() == {"jsonrpc": "2.0", "id": 7, "result": {}}  # not ended by the refused DELETE


async def test_a_ping_is_answered_while_a_question_waits_and_shares_its_id(
    session: Session, wire_2025: WireChecker
) -> None:
    """A ping is answered at once while the person is asked, on its own POST; one whose id
    is the pending question's (the two sides number their requests apart) is a request of
    the client's like any other, and the question still takes its answer."""
    async with session.asked() as (_, events, question):
        for rid in (5, question["id"]):
            pong = await session.post({"jsonrpc": "2.0", "id": rid, "method": "ping"})
            assert pong.json() == {"jsonrpc": "2.0", "id": rid, "result": {}}
        assert (await session.post(accepting(question, name="Ada"))).status_code == 202
        final = await anext(events)
        wire_2025.response("tools/call", final)
        assert final["result"]["content"][0]["text"] == "hello Ada"
