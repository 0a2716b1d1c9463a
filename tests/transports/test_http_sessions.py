"""2025-11-25 sessions over real HTTP (uvicorn on 127.0.0.1): the handshake, questions on
the request's SSE stream answered by a separate POST, the standalone GET stream, DELETE,
and cleanup when the client goes away. Every message is checked against the 2025-11-25
schema."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from typing import Any

import httpx
import orjson
import pytest

from mcp_elicit import Context, Form, Server, String
from mcp_elicit.server.auth import StaticTokens
from mcp_elicit.transports.http_server import StreamableHTTP
from mcp_elicit.wire.sse import EventDecoder

from support.procs import InProcess, uvicorn_server
from support.sessions import ACCEPT, ask_name_server, initialize_body, open_session
from support.wire import WireChecker

pytestmark = pytest.mark.anyio


def build() -> Server:
    app = ask_name_server("http-sessions")

    @app.tool()
    async def connect(ctx: Context) -> str:
        await ctx.require_url("Connect", "https://example.com/c", elicitation_id="e-42")
        return "connected"

    @app.tool()
    async def stubborn(ctx: Context) -> str:
        """Asks once more when cancelled (a handler may catch the cancellation)."""
        try:
            await ctx.elicit("Name?", Form(name=String()))
        except asyncio.CancelledError:
            again = await ctx.elicit("Sure you want to stop?", Form(sure=String()))
            return f"asked again: {again.action}"
        return "answered"

    return app


@pytest.fixture
async def served() -> AsyncIterator[tuple[Server, InProcess]]:
    app = build()
    async with uvicorn_server(StreamableHTTP(app, keepalive=0.2, resume_within=0.2)) as running:
        yield app, running


class Session:
    def __init__(self, http: httpx.AsyncClient, url: str, wire: WireChecker) -> None:
        self.http = http
        self.url = url
        self.wire = wire
        self.sid = ""
        self.ids = 0

    def headers(self) -> dict[str, str]:
        return {"accept": ACCEPT, "mcp-session-id": self.sid, "mcp-protocol-version": "2025-11-25"}

    async def open(self, caps: dict[str, Any] | None = None) -> httpx.Response:
        body = {
            "jsonrpc": "2.0",
            "id": 0,
            "method": "initialize",
            "params": {
                "protocolVersion": "2025-11-25",
                "capabilities": caps if caps is not None else {"elicitation": {"form": {}, "url": {}}},
                "clientInfo": {"name": "t", "version": "1"},
            },
        }
        self.wire.request(body)
        response = await self.http.post(self.url, json=body, headers={"accept": ACCEPT})
        self.wire.response("initialize", response.json())
        self.sid = response.headers["mcp-session-id"]
        note = {"jsonrpc": "2.0", "method": "notifications/initialized"}
        self.wire.notification(note)
        assert (await self.http.post(self.url, json=note, headers=self.headers())).status_code == 202
        return response

    def call(self, name: str) -> dict[str, Any]:
        self.ids += 1
        body = {"jsonrpc": "2.0", "id": self.ids, "method": "tools/call", "params": {"name": name}}
        self.wire.request(body)
        return body

    @contextlib.asynccontextmanager
    async def asked(
        self, name: str = "ask_name"
    ) -> AsyncIterator[tuple[httpx.Response, AsyncIterator[dict[str, Any]], dict[str, Any]]]:
        """Call the tool ``name`` with its answer streamed: the stream, its events, and the
        question the tool asks first (an ``elicitation/create``, schema-checked)."""
        async with self.http.stream("POST", self.url, json=self.call(name), headers=self.headers()) as stream:
            events = _events(stream)
            question = await anext(events)
            self.wire.request(question)
            assert question["method"] == "elicitation/create"
            yield stream, events, question


async def _events(response: httpx.Response) -> AsyncIterator[dict[str, Any]]:
    decoder = EventDecoder()
    async for chunk in response.aiter_bytes():
        for event in decoder.feed(chunk):
            yield orjson.loads(event.data)


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


async def test_a_question_on_the_stream_answered_by_a_post(
    served: tuple[Server, InProcess], wire_2025: WireChecker
) -> None:
    _, running = served
    async with httpx.AsyncClient(timeout=10) as http:
        session = Session(http, running.url, wire_2025)
        await session.open()
        async with session.asked() as (stream, events, question):
            assert stream.headers["content-type"] == "text/event-stream"
            assert question["params"]["requestedSchema"]["properties"] == {"name": {"type": "string"}}
            answer = {
                "jsonrpc": "2.0",
                "id": question["id"],
                "result": {"action": "accept", "content": {"name": "Ada"}},
            }
            wire_2025.response("elicitation/create", answer)
            posted = await http.post(running.url, json=answer, headers=session.headers())
            assert posted.status_code == 202
            final = await anext(events)
            wire_2025.response("tools/call", final)
            assert final["result"]["content"][0]["text"] == "hello Ada"


async def test_completion_goes_to_the_session_stream(
    served: tuple[Server, InProcess], wire_2025: WireChecker
) -> None:
    app, running = served
    async with httpx.AsyncClient(timeout=10) as http:
        session = Session(http, running.url, wire_2025)
        await session.open()
        required = (
            await http.post(running.url, json=session.call("connect"), headers=session.headers())
        ).json()
        wire_2025.response("tools/call", required)
        assert required["error"]["code"] == -32042
        assert required["error"]["data"]["elicitations"][0]["elicitationId"] == "e-42"
        async with http.stream("GET", running.url, headers=session.headers()) as stream:
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
    served: tuple[Server, InProcess], wire_2025: WireChecker
) -> None:
    app, running = served
    async with httpx.AsyncClient(timeout=10) as http:
        session = Session(http, running.url, wire_2025)
        await session.open()
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


async def test_delete_ends_the_session(served: tuple[Server, InProcess], wire_2025: WireChecker) -> None:
    _, running = served
    async with httpx.AsyncClient(timeout=10) as http:
        session = Session(http, running.url, wire_2025)
        await session.open()
        assert (await http.delete(running.url, headers=session.headers())).status_code == 200
        gone = await http.post(
            running.url, json={"jsonrpc": "2.0", "id": 3, "method": "ping"}, headers=session.headers()
        )
        assert gone.status_code == 404
        assert gone.json()["id"] == 3
        assert (await http.delete(running.url, headers=session.headers())).status_code == 404


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


async def test_a_session_with_an_open_stream_is_not_evicted(wire_2025: WireChecker) -> None:
    app = ask_name_server("http-sessions-bounded", max_sessions=2)
    async with (
        uvicorn_server(StreamableHTTP(app, keepalive=0.2)) as running,
        httpx.AsyncClient(timeout=10) as http,
    ):
        listening, idle = Session(http, running.url, wire_2025), Session(http, running.url, wire_2025)
        await listening.open()
        async with http.stream("GET", running.url, headers=listening.headers()) as stream:
            assert stream.status_code == 200
            await idle.open()
            await Session(http, running.url, wire_2025).open()
            ping = {"jsonrpc": "2.0", "id": 9, "method": "ping"}
            kept = await http.post(running.url, json=ping, headers=listening.headers())
            assert kept.json() == {"jsonrpc": "2.0", "id": 9, "result": {}}, "the listening session stays"
            gone = await http.post(running.url, json=ping, headers=idle.headers())
            assert gone.status_code == 404, "the idle session made room"


async def test_no_room_while_every_session_listens(wire_2025: WireChecker) -> None:
    app = ask_name_server("http-sessions-full", max_sessions=1)
    async with (
        uvicorn_server(StreamableHTTP(app, keepalive=0.2)) as running,
        httpx.AsyncClient(timeout=10) as http,
    ):
        listening = Session(http, running.url, wire_2025)
        await listening.open()
        async with http.stream("GET", running.url, headers=listening.headers()) as stream:
            assert stream.status_code == 200
            body = {
                "jsonrpc": "2.0",
                "id": 0,
                "method": "initialize",
                "params": {
                    "protocolVersion": "2025-11-25",
                    "capabilities": {},
                    "clientInfo": {"name": "t", "version": "1"},
                },
            }
            refused = await http.post(running.url, json=body, headers={"accept": ACCEPT})
            assert refused.status_code == 503
            assert "mcp-session-id" not in refused.headers
            assert refused.json()["error"]["message"] == "Too many sessions; try again later"
            ping = {"jsonrpc": "2.0", "id": 9, "method": "ping"}
            kept = await http.post(running.url, json=ping, headers=listening.headers())
            assert kept.json() == {"jsonrpc": "2.0", "id": 9, "result": {}}


async def test_one_principal_cannot_push_anothers_session_out_or_use_it() -> None:
    """Over HTTP with bearer tokens: ann opening sessions without end leaves bob's
    session open, and ann, holding bob's session id, gets 404 on POST, GET and DELETE."""
    app = ask_name_server(
        "http-sessions-principals",
        auth=StaticTokens({"token-ann": "ann", "token-bob": "bob"}),
        max_sessions=4,
        max_sessions_per_principal=2,
    )
    async with (
        uvicorn_server(StreamableHTTP(app, keepalive=0.2)) as running,
        httpx.AsyncClient(timeout=10) as http,
    ):

        async def open_as(token: str) -> dict[str, str]:
            headers = {"accept": ACCEPT, "authorization": f"Bearer {token}"}
            opened = await http.post(running.url, json=initialize_body(), headers=headers)
            assert opened.status_code == 200, opened.text
            return {
                **headers,
                "mcp-session-id": opened.headers["mcp-session-id"],
                "mcp-protocol-version": "2025-11-25",
            }

        bob = await open_as("token-bob")
        for _ in range(6):
            await open_as("token-ann")
        ping = {"jsonrpc": "2.0", "id": 9, "method": "ping"}
        kept = await http.post(running.url, json=ping, headers=bob)
        assert kept.json() == {"jsonrpc": "2.0", "id": 9, "result": {}}, (
            "ann's sessions did not push bob's out"
        )
        as_ann = {**bob, "authorization": "Bearer token-ann"}
        for method in ("POST", "GET", "DELETE"):
            foreign = await http.request(
                method, running.url, headers=as_ann, json=ping if method == "POST" else None
            )
            assert foreign.status_code == 404, method
            assert foreign.json()["error"]["message"].startswith("Session not found"), method
        still = await http.post(running.url, json=ping, headers=bob)
        assert still.status_code == 200, "bob's session survived ann's attempts"


async def test_a_handshake_revision_without_a_session_is_told_to_initialize(
    served: tuple[Server, InProcess],
) -> None:
    _, running = served
    meta = {
        "io.modelcontextprotocol/protocolVersion": "2025-11-25",
        "io.modelcontextprotocol/clientCapabilities": {},
    }
    headers = {"accept": ACCEPT, "mcp-protocol-version": "2025-11-25", "mcp-method": "tools/list"}
    body = {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {"_meta": meta}}
    async with httpx.AsyncClient(timeout=10) as http:
        response = await http.post(running.url, json=body, headers=headers)
    assert response.status_code == 400
    error = response.json()["error"]
    assert error["code"] == -32600, "not -32022, whose supported list would name 2025-11-25 again"
    assert "initialize" in error["message"]


async def test_an_unknown_version_header_in_a_session_is_unsupported(
    served: tuple[Server, InProcess], wire_2025: WireChecker
) -> None:
    _, running = served
    async with httpx.AsyncClient(timeout=10) as http:
        session = Session(http, running.url, wire_2025)
        await session.open()
        response = await http.post(
            running.url,
            json={"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
            headers={**session.headers(), "mcp-protocol-version": "1999-01-01"},
        )
    assert response.status_code == 400
    error = response.json()["error"]
    assert error["code"] == -32022
    assert error["message"].startswith("Unsupported protocol version '1999-01-01'")
    assert error["data"]["requested"] == "1999-01-01"


async def test_a_malformed_answer_is_refused_without_an_id_and_gives_the_question_up(
    served: tuple[Server, InProcess], wire_2025: WireChecker
) -> None:
    _, running = served
    async with httpx.AsyncClient(timeout=10) as http:
        session = Session(http, running.url, wire_2025)
        await session.open()
        async with session.asked() as (_, events, question):
            malformed = {"jsonrpc": "2.0", "id": question["id"], "result": None}
            posted = await http.post(running.url, json=malformed, headers=session.headers())
            assert posted.status_code == 400
            refused = posted.json()
            assert "id" not in refused, "the error answers no request of the client's"
            assert refused["error"]["code"] == -32600
            final = await asyncio.wait_for(anext(events), 10)
            wire_2025.response("tools/call", final)
            assert final["result"]["content"][0]["text"] == "hello cancel"


@pytest.mark.parametrize(
    "version", ["1999-01-01", "2025-06-18", "2026-07-28", "x" * 2000, "2025-11-25\xa0", "\x852025-11-25"]
)
async def test_get_and_delete_check_the_version_header(
    served: tuple[Server, InProcess], wire_2025: WireChecker, version: str
) -> None:
    """A GET or DELETE whose MCP-Protocol-Version is not the session's is 400, as a POST
    is (the GET opened the session's stream and the DELETE ended the session, whatever
    version the header named). Only HTTP's white space (spaces, tabs) around the value is
    trimmed: not a no-break space or a NEL (bytes 0xA0, 0x85), as for a 2026-07-28 request."""
    _, running = served
    async with httpx.AsyncClient(timeout=10) as http:
        session = Session(http, running.url, wire_2025)
        await session.open()
        wrong = {**session.headers(), "mcp-protocol-version": version.encode("latin-1")}
        async with http.stream("GET", running.url, headers=wrong) as listened:
            assert listened.status_code == 400
            assert listened.headers["content-type"] == "application/json"
            refusal = orjson.loads(await listened.aread())
        deleted = await http.delete(running.url, headers=wrong)
        assert deleted.status_code == 400
        for error in (refusal, deleted.json()):
            wire_2025.response("ping", error)
            assert error["error"]["code"] == -32600 and "id" not in error
            assert (
                "MCP-Protocol-Version" in error["error"]["message"]
                and "2025-11-25" in error["error"]["message"]
            )
            assert len(error["error"]["message"]) < 300
        pong = await http.post(
            running.url, json={"jsonrpc": "2.0", "id": 4, "method": "ping"}, headers=session.headers()
        )
        assert pong.json() == {"jsonrpc": "2.0", "id": 4, "result": {}}  # the session lives on


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
        body = {
            "jsonrpc": "2.0",
            "id": 0,
            "method": "initialize",
            "params": {
                "protocolVersion": "2025-11-25",
                "capabilities": {},
                "clientInfo": {"name": "t", "version": "1"},
            },
        }
        opened = await http.post(running.url, json=body, headers=accept)
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
    served: tuple[Server, InProcess], wire_2025: WireChecker, named: Any
) -> None:
    """``notifications/cancelled`` whose requestId is not a string or an integer (true,
    1.0, a list) names no request: the tool call with id 1 waiting on the person goes on,
    and the answer reaches it (true is not the id 1, though Python holds True == 1)."""
    _, running = served
    async with httpx.AsyncClient(timeout=10) as http:
        session = Session(http, running.url, wire_2025)
        await session.open()
        async with session.asked() as (_, events, question):
            cancel = {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": named}}
            assert (await http.post(running.url, json=cancel, headers=session.headers())).status_code == 202
            answer = {
                "jsonrpc": "2.0",
                "id": question["id"],
                "result": {"action": "accept", "content": {"name": "Ada"}},
            }
            assert (await http.post(running.url, json=answer, headers=session.headers())).status_code == 202
            final = await asyncio.wait_for(anext(events), 10)
            wire_2025.response("tools/call", final)
            assert final["result"]["content"][0]["text"] == "hello Ada"


async def test_a_session_before_2025_11_25_is_asked_forms_and_never_url_mode(
    served: tuple[Server, InProcess], wire_2025: WireChecker
) -> None:
    """2025-06-18 has one kind of elicitation, a form, and declaring ``elicitation`` at all
    (whatever is inside) says the client takes it; URL mode, its -32042 and elicitationId
    came with 2025-11-25. A 2025-06-18 session whose capabilities read
    ``{"elicitation": {"url": {}}}`` is asked its form, and a URL step is refused as a
    capability the session does not have, never sent as mode url or as -32042."""
    _, running = served
    caps = {"elicitation": {"url": {}}}
    async with httpx.AsyncClient(timeout=10) as http:
        headers = await open_session(http, running.url, wire_2025, version="2025-06-18", capabilities=caps)
        call = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "ask_name"}}
        async with http.stream("POST", running.url, json=call, headers=headers) as stream:
            events = _events(stream)
            question = await asyncio.wait_for(anext(events), 10)
            assert question.get("method") == "elicitation/create", question
            assert question["params"]["requestedSchema"]["properties"] == {"name": {"type": "string"}}
            answer = {
                "jsonrpc": "2.0",
                "id": question["id"],
                "result": {"action": "accept", "content": {"name": "Ada"}},
            }
            assert (await http.post(running.url, json=answer, headers=headers)).status_code == 202
            final = await asyncio.wait_for(anext(events), 10)
            assert final["result"]["content"][0]["text"] == "hello Ada"
        step = {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "connect"}}
        refused = (await http.post(running.url, json=step, headers=headers)).json()
        assert refused["error"]["code"] == -32021, refused
        assert refused["error"]["data"] == {"requiredCapabilities": {"elicitation": {"url": {}}}}


async def test_a_cancelled_request_asks_the_person_nothing_more(
    served: tuple[Server, InProcess], wire_2025: WireChecker
) -> None:
    """The client cancels a tool call while the person is asked; its handler catches the
    cancellation and asks again. The client has given the request up: nothing more is
    asked for it (the second question reads as cancel at once, unsent), and its stream
    ends with the first question withdrawn, not held open for the ask timeout."""
    _, running = served
    async with httpx.AsyncClient(timeout=10) as http:
        session = Session(http, running.url, wire_2025)
        await session.open()
        async with http.stream(
            "POST", running.url, json=session.call("stubborn"), headers=session.headers()
        ) as stream:
            events = _events(stream)
            question = await anext(events)
            assert question["params"]["message"] == "Name?"
            cancel = {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 1}}
            assert (await http.post(running.url, json=cancel, headers=session.headers())).status_code == 202
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
