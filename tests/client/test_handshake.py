"""The client against a scripted server function at a handshake revision (2025-11-25):
sessions, the server's own requests, stream resumption, URL elicitation required."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Mapping
from typing import Any

import pytest

from client.fakes import FakeExchange, FakeTransport, error, result
from mcp_elicit.client import Client, ElicitAnswer, Scripted
from mcp_elicit.client.transport import Ended
from mcp_elicit.core.client_inputs import ElicitationRequest
from mcp_elicit.errors import (
    ProtocolViolation,
    RequestTimeout,
    TransportError,
    UnsupportedProtocolVersion,
    URLElicitationRequired,
)
from mcp_elicit.wire.versions import SUPPORTED

from support.waiting import eventually
from support.wire import WireChecker

pytestmark = pytest.mark.anyio

V2025 = ["2025-11-25"]
FORM = {
    "type": "object",
    "properties": {"name": {"type": "string", "default": "Ann"}, "age": {"type": "integer"}},
}
URL_ELICITATION = {
    "mode": "url",
    "message": "Sign in to Example",
    "url": "https://example.com/connect?e=e-1",
    "elicitationId": "e-1",
}


def init(message: dict[str, Any], version: str = "2025-11-25") -> dict[str, Any]:
    return result(
        message,
        {
            "protocolVersion": version,
            "capabilities": {"tools": {}},
            "serverInfo": {"name": "old", "version": "2"},
        },
    )


def elicit(rid: str, params: dict[str, Any]) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": rid, "method": "elicitation/create", "params": params}


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


async def test_the_servers_requests_on_a_response_stream_are_answered_in_place(
    wire_2025: WireChecker,
) -> None:
    def serve(message: dict[str, Any], headers: dict[str, str]) -> list[Any]:
        if message["method"] == "initialize":
            return [init(message)]
        return [
            elicit("s-1", {"message": "Who?", "requestedSchema": FORM}),
            {"jsonrpc": "2.0", "id": "s-2", "method": "ping"},
            {
                "jsonrpc": "2.0",
                "id": "s-3",
                "method": "sampling/createMessage",
                "params": {"messages": [], "maxTokens": 1},
            },
            elicit("s-4", URL_ELICITATION),
            {"jsonrpc": "2.0", "id": "s-5", "method": "tasks/list"},
            result(message, {"content": []}),
        ]

    answerer = Scripted.from_script([{"content": {"age": 7}}], modes=["form"])
    transport = FakeTransport(serve)
    async with Client(transport, versions=V2025, answerer=answerer) as client:
        await client.call_tool("t")
    answers = {m["id"]: m for m, _ in transport.sent if "id" in m}
    assert answers["s-1"]["result"] == {"action": "accept", "content": {"name": "Ann", "age": 7}}
    assert answers["s-2"]["result"] == {}
    assert answers["s-3"]["error"]["code"] == -32601
    assert "sampling" in answers["s-3"]["error"]["message"]
    assert answers["s-4"]["error"]["code"] == -32602
    assert answers["s-5"]["error"]["code"] == -32601
    wire_2025.response("elicitation/create", answers["s-1"])
    wire_2025.response("ping", answers["s-2"])
    for rid in ("s-3", "s-4", "s-5"):
        wire_2025.response("elicitation/create", answers[rid])


@pytest.mark.parametrize(
    ("method", "params", "capability"),
    [
        ("sampling/createMessage", {"messages": [], "maxTokens": 1}, "sampling"),
        ("roots/list", None, "roots"),
        ("elicitation/create", {"mode": "form", "message": "Who?", "requestedSchema": FORM}, "elicitation"),
    ],
)
async def test_a_request_for_a_capability_the_client_did_not_declare_is_method_not_found(
    method: str, params: dict[str, Any] | None, capability: str, wire_2025: WireChecker
) -> None:
    """A client with no sampling callback, no roots callback or no answerer declares no such
    capability: the server's request for it is a method this client does not offer (-32601,
    naming the capability, as a server says of its own undeclared ones), not a request with
    bad params (-32602, which it was answered)."""

    def serve(message: dict[str, Any], headers: dict[str, str]) -> list[Any]:
        if message["method"] == "initialize":
            return [init(message)]
        asked: dict[str, Any] = {"jsonrpc": "2.0", "id": "s-1", "method": method}
        if params is not None:
            asked["params"] = params
        return [asked, result(message, {"content": []})]

    transport = FakeTransport(serve)
    async with Client(transport, versions=V2025) as client:
        assert capability not in client.capabilities
        await client.call_tool("t")
    (answer,) = [m for m, _ in transport.sent if m.get("id") == "s-1"]
    assert answer["error"]["code"] == -32601
    assert answer["error"]["message"] == (
        f"Method not found: {method} is not offered (this client declares no {capability} capability)"
    )
    wire_2025.response(method, answer)


async def test_think_time_on_a_request_from_another_stream_does_not_count() -> None:
    """Over stdio (or the event stream) the server's question arrives outside the request's
    exchange; the person answering it takes longer than the whole timeout."""
    answered = asyncio.Event()

    class Thinker:
        modes = frozenset({"form"})

        async def elicit(self, request: ElicitationRequest) -> ElicitAnswer:
            await asyncio.sleep(0.5)
            return ElicitAnswer.accept(age=3)

        async def url_done(self, request: ElicitationRequest) -> None:
            return None

    transport: FakeTransport

    async def serve(message: dict[str, Any], headers: dict[str, str]) -> list[Any]:
        if message["method"] == "initialize":
            return [init(message)]
        asyncio.get_running_loop().call_soon(
            lambda: asyncio.ensure_future(
                transport.push(elicit("s-1", {"message": "Age?", "requestedSchema": FORM}))
            )
        )
        return []

    async def on_send(message: dict[str, Any]) -> None:
        if message.get("id") == "s-1":
            answered.set()

    class Delayed(FakeTransport):
        async def exchange(self, message: Mapping[str, Any], headers: Mapping[str, str]) -> Any:
            exchange = await super().exchange(message, headers)
            if message["method"] == "tools/call":
                reply = result(message, {"content": []})

                async def receive() -> Any:
                    await answered.wait()
                    from mcp_elicit.wire import jsonrpc

                    return jsonrpc.decode_value(reply)

                exchange.receive = receive  # type: ignore[method-assign]
            return exchange

    transport = Delayed(serve, http=False, on_send=on_send)
    async with Client(transport, versions=V2025, answerer=Thinker(), timeout=0.25) as client:
        assert await client.call_tool("t") == {"content": []}


async def test_without_an_answer_the_timeout_still_applies() -> None:
    def serve(message: dict[str, Any], headers: dict[str, str]) -> list[Any]:
        return [init(message)]

    class Hanging(FakeTransport):
        async def exchange(self, message: Mapping[str, Any], headers: Mapping[str, str]) -> Any:
            exchange = await super().exchange(message, headers)
            exchange.hang = message["method"] != "initialize"
            return exchange

    async with Client(Hanging(serve, http=False), versions=V2025, timeout=0.2) as client:
        with pytest.raises(RequestTimeout):
            await client.list_tools()


async def test_a_stream_closed_before_the_response_is_resumed_after_retry() -> None:
    def serve(message: dict[str, Any], headers: dict[str, str]) -> list[Any]:
        if message["method"] == "initialize":
            return [init(message)]
        serve.rid = message["id"]  # type: ignore[attr-defined]
        return [Ended(200, last_event_id="ev-1", retry_ms=150)]

    def listen(headers: dict[str, str], last: str | None) -> FakeExchange | None:
        if last is None:
            return None  # no standalone stream
        return FakeExchange([result({"id": serve.rid}, {"content": [{"type": "text", "text": "resumed"}]})])  # type: ignore[attr-defined]

    transport = FakeTransport(serve, listen=listen)
    loop = asyncio.get_running_loop()
    async with Client(transport, versions=V2025) as client:
        start = loop.time()
        out = await client.call_tool("t")
    assert out["content"][0]["text"] == "resumed"
    resumes = [(h, last, at) for h, last, at in transport.listens if last is not None]
    assert len(resumes) == 1
    headers, last, at = resumes[0]
    assert last == "ev-1"
    assert at - start >= 0.15
    assert headers["MCP-Protocol-Version"] == "2025-11-25"


@pytest.mark.parametrize("how", ["timed out", "cancelled by the caller"])
async def test_a_request_abandoned_while_its_stream_is_resumed_is_cancelled(how: str) -> None:
    """basic/lifecycle.mdx, Timeouts: a request given up is followed by
    notifications/cancelled, also once its stream was resumed (a dropped connection is no
    cancellation on 2025-11-25: transports.mdx). A request that timed out, or that its
    caller cancelled, on a resumed stream was closed silently, so the server worked on."""

    def serve(message: dict[str, Any], headers: dict[str, str]) -> list[Any]:
        if message["method"] == "initialize":
            return [init(message)]
        return [Ended(200, last_event_id="ev-1", retry_ms=10)]

    def listen(headers: dict[str, str], last: str | None) -> FakeExchange | None:
        if last is None:
            return None
        quiet = FakeExchange([])
        quiet.hang = True  # the resumed stream brings nothing
        return quiet

    transport = FakeTransport(serve, listen=listen, headers={"mcp-session-id": "S"})
    async with Client(transport, versions=V2025, timeout=0.3) as client:
        if how == "timed out":
            with pytest.raises(RequestTimeout):
                await client.call_tool("t")
        else:
            call = asyncio.ensure_future(client.call_tool("t"))
            await eventually(lambda: any(last is not None for _, last, _ in transport.listens), "a resume")
            call.cancel()
            with pytest.raises(asyncio.CancelledError):
                await call
        await eventually(
            lambda: [m for m, _ in transport.sent if m.get("method") == "notifications/cancelled"],
            "notifications/cancelled",
            within=1.0,
        )
    (called,) = [m for m, _ in transport.requests if m["method"] == "tools/call"]
    (cancelled,) = [(m, h) for m, h in transport.sent if m.get("method") == "notifications/cancelled"]
    assert cancelled[0]["params"] == {"requestId": called["id"], "reason": how}
    assert cancelled[1]["Mcp-Session-Id"] == "S" and cancelled[1]["MCP-Protocol-Version"] == "2025-11-25"


async def test_resuming_is_bounded() -> None:
    def serve(message: dict[str, Any], headers: dict[str, str]) -> list[Any]:
        if message["method"] == "initialize":
            return [init(message)]
        return [Ended(200, last_event_id="ev", retry_ms=1)]

    def listen(headers: dict[str, str], last: str | None) -> FakeExchange | None:
        return None if last is None else FakeExchange([Ended(200, last_event_id="ev", retry_ms=1)])

    transport = FakeTransport(serve, listen=listen)
    async with Client(transport, versions=V2025) as client:
        with pytest.raises(TransportError, match="no JSON-RPC response"):
            await client.call_tool("t")
    assert len([x for x in transport.listens if x[1] is not None]) == 5


@pytest.mark.parametrize("status", [400, 404])
async def test_a_resume_the_server_refuses_fails_the_call_saying_so(status: int) -> None:
    """A response stream that ended before the response is resumed with GET; a server that
    refuses that GET (400, or 404 without a session) fails the call with an error that says
    the resume was refused, where it repeated the first stream's end ('got HTTP 200 and no
    JSON-RPC response'), as though the server had answered nothing at all."""

    def serve(message: dict[str, Any], headers: dict[str, str]) -> list[Any]:
        if message["method"] == "initialize":
            return [init(message)]
        return [Ended(200, last_event_id="ev-1", retry_ms=10)]

    def listen(headers: dict[str, str], last: str | None) -> Ended | None:
        return None if last is None else Ended(status, body="unknown event id")

    async with Client(FakeTransport(serve, listen=listen), versions=V2025) as client:
        with pytest.raises(TransportError) as raised:
            await client.call_tool("t")
    text = str(raised.value)
    assert f"resuming it was refused (GET with Last-Event-ID 'ev-1': HTTP {status}: unknown event id)" in text
    assert "got HTTP 200" not in text


async def test_the_event_stream_is_opened_after_the_handshake_and_its_requests_answered() -> None:
    def serve(message: dict[str, Any], headers: dict[str, str]) -> list[Any]:
        if message["method"] == "initialize":
            return [init(message)]
        return [result(message, {"tools": []})]

    def listen(headers: dict[str, str], last: str | None) -> FakeExchange | None:
        return FakeExchange([elicit("g-1", {"message": "Name?", "requestedSchema": FORM}), Ended(200)])

    transport = FakeTransport(serve, listen=listen, headers={"mcp-session-id": "S"})
    answerer = Scripted.from_script([{"action": "accept"}])
    async with Client(transport, versions=V2025, answerer=answerer):
        for _ in range(50):
            if transport.sent[1:]:
                break
            await asyncio.sleep(0.01)
    assert transport.listens[0][0]["Mcp-Session-Id"] == "S"
    assert transport.listens[0][1] is None
    reply = next(m for m, _ in transport.sent if m.get("id") == "g-1")
    assert reply["result"] == {"action": "accept", "content": {"name": "Ann"}}


async def test_a_response_that_arrives_on_the_event_stream_still_answers_its_request() -> None:
    def serve(message: dict[str, Any], headers: dict[str, str]) -> list[Any]:
        if message["method"] == "initialize":
            return [init(message)]
        asyncio.get_running_loop().call_soon(
            lambda: asyncio.ensure_future(
                transport.push(result(message, {"content": [{"type": "text", "text": "late"}]}))
            )
        )
        return [Ended(200)]

    class Lagging(FakeTransport):
        async def exchange(self, message: Mapping[str, Any], headers: Mapping[str, str]) -> Any:
            exchange = await super().exchange(message, headers)
            if message["method"] == "tools/call":
                original = exchange.receive

                async def receive() -> Any:
                    await asyncio.sleep(0.05)
                    return await original()

                exchange.receive = receive  # type: ignore[method-assign]
            return exchange

    transport = Lagging(serve, http=False)
    async with Client(transport, versions=V2025) as client:
        out = await client.call_tool("t")
    assert out["content"][0]["text"] == "late"


# ---- URL elicitation required (-32042) ---------------------------------------------------


class Connector:
    """A server whose tool needs a URL step first (-32042), then works."""

    def __init__(self) -> None:
        self.done = False
        self.calls = 0

    def __call__(self, message: dict[str, Any], headers: dict[str, str]) -> list[Any]:
        if message["method"] == "initialize":
            return [init(message)]
        self.calls += 1
        if not self.done:
            return [error(message, -32042, "Authorization required", {"elicitations": [URL_ELICITATION]})]
        return [result(message, {"content": [{"type": "text", "text": "connected"}]})]


class UrlUser:
    modes = frozenset({"form", "url"})

    def __init__(self, server: Connector, action: str = "accept", *, says_done: bool = True) -> None:
        self.server = server
        self.action = action
        self.says_done = says_done
        self.shown: list[ElicitationRequest] = []
        self.asked = asyncio.Event()

    async def elicit(self, request: ElicitationRequest) -> ElicitAnswer:
        self.shown.append(request)
        self.asked.set()
        return ElicitAnswer(self.action)  # type: ignore[arg-type]

    async def url_done(self, request: ElicitationRequest) -> None:
        if not self.says_done:
            await asyncio.Event().wait()
        self.server.done = True


async def test_url_required_shows_the_url_then_retries_when_the_user_is_done() -> None:
    server = Connector()
    user = UrlUser(server)
    async with Client(FakeTransport(server), versions=V2025, answerer=user) as client:
        out = await client.call_tool("connect")
    assert out["content"][0]["text"] == "connected"
    assert server.calls == 2
    (shown,) = user.shown
    assert (shown.mode, shown.url, shown.elicitation_id) == ("url", URL_ELICITATION["url"], "e-1")
    assert shown.origin.target == "connect"


async def test_url_required_retries_when_the_completion_notice_arrives() -> None:
    server = Connector()
    user = UrlUser(server, says_done=False)
    transport = FakeTransport(server, http=False)
    async with Client(transport, versions=V2025, answerer=user) as client:
        task = asyncio.ensure_future(client.call_tool("connect"))
        await asyncio.wait_for(user.asked.wait(), 2)
        await transport.push(
            {
                "jsonrpc": "2.0",
                "method": "notifications/elicitation/complete",
                "params": {"elicitationId": "other"},
            }
        )
        await asyncio.sleep(0.05)
        assert not task.done()
        server.done = True
        await transport.push(
            {
                "jsonrpc": "2.0",
                "method": "notifications/elicitation/complete",
                "params": {"elicitationId": "e-1"},
            }
        )
        out = await asyncio.wait_for(task, 2)
    assert out["content"][0]["text"] == "connected"


@pytest.mark.parametrize("action", ["decline", "cancel"])
async def test_a_refused_url_ends_the_request_with_the_error(action: str) -> None:
    server = Connector()
    async with Client(FakeTransport(server), versions=V2025, answerer=UrlUser(server, action)) as client:
        with pytest.raises(URLElicitationRequired, match=f"the user answered {action}"):
            await client.call_tool("connect")
    assert server.calls == 1


async def test_without_url_mode_the_error_is_raised_as_is() -> None:
    server = Connector()
    answerer = Scripted.from_script([], modes=["form"])
    async with Client(FakeTransport(server), versions=V2025, answerer=answerer) as client:
        with pytest.raises(URLElicitationRequired) as caught:
            await client.call_tool("connect")
    assert caught.value.data["elicitations"][0]["elicitationId"] == "e-1"


async def test_a_completion_notice_that_overtakes_the_error_is_kept() -> None:
    """The step was finished so fast that the server's notice came before its -32042 (on
    the same stream here; on the event stream it can overtake it too): the retry goes
    out at once, without waiting for the person to say they are done."""

    class Fast(Connector):
        def __call__(self, message: dict[str, Any], headers: dict[str, str]) -> list[Any]:
            out = super().__call__(message, headers)
            if self.calls == 1:
                self.done = True
                notice = {"jsonrpc": "2.0", "method": "notifications/elicitation/complete"}
                return [{**notice, "params": {"elicitationId": "e-1"}}, *out]
            return out

    server = Fast()
    user = UrlUser(server, says_done=False)
    async with Client(FakeTransport(server), versions=V2025, answerer=user) as client:
        out = await asyncio.wait_for(client.call_tool("connect"), 5)
    assert out["content"][0]["text"] == "connected"
    assert server.calls == 2 and len(user.shown) == 1


async def test_a_late_duplicate_notice_does_not_finish_the_next_step_of_the_same_id() -> None:
    """A server may use one elicitationId for every request that needs the same step
    ("github", say), and a notice can come twice (from two instances, or after a retry).
    One that comes after its step is over is not kept for the next step of that id: the
    next -32042 waits for the person again, rather than being taken as finished at once
    (a needless retry, and the URL shown twice)."""
    server = Connector()
    user = UrlUser(server, says_done=False)
    transport = FakeTransport(server, http=False)
    notice = {
        "jsonrpc": "2.0",
        "method": "notifications/elicitation/complete",
        "params": {"elicitationId": "e-1"},
    }
    async with Client(transport, versions=V2025, answerer=user) as client:
        first = asyncio.ensure_future(client.call_tool("connect"))
        await asyncio.wait_for(user.asked.wait(), 2)
        server.done = True
        await transport.push(notice)
        assert (await asyncio.wait_for(first, 2))["content"][0]["text"] == "connected"
        await transport.push(notice)  # the same notice again, late
        await asyncio.sleep(0.05)
        server.done, user.asked = False, asyncio.Event()  # the step is needed again
        second = asyncio.ensure_future(client.call_tool("connect"))
        await asyncio.wait_for(user.asked.wait(), 2)
        await asyncio.sleep(0.1)
        assert not second.done()
        assert (server.calls, len(user.shown)) == (3, 2)
        second.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await second


class Stalling:
    """A person who never answers: each question waits until it is withdrawn."""

    modes = frozenset({"form"})

    def __init__(self) -> None:
        self.asked, self.withdrawn = asyncio.Event(), asyncio.Event()
        self.shown: list[str] = []

    async def elicit(self, request: ElicitationRequest) -> ElicitAnswer:
        self.shown.append(request.message)
        self.asked.set()
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            self.withdrawn.set()
            raise
        raise AssertionError("unreachable")


def asks_then_answers(text: str) -> FakeTransport:
    """A server whose tools/call asks "Who?" (as request s-1), then answers ``text``."""

    def serve(message: dict[str, Any], headers: dict[str, str]) -> list[Any]:
        if message["method"] == "initialize":
            return [init(message)]
        return [
            elicit("s-1", {"message": "Who?", "requestedSchema": FORM}),
            result(message, {"content": [{"type": "text", "text": text}]}),
        ]

    return FakeTransport(serve)


async def test_the_server_withdraws_a_question_with_notifications_cancelled() -> None:
    """A question still with the person when its server cancels it is withdrawn: the
    answerer's wait is cancelled, no answer is sent, and the request returns."""
    person, transport = Stalling(), asks_then_answers("went on without you")
    async with Client(transport, versions=V2025, answerer=person) as client:
        call = asyncio.ensure_future(client.call_tool("t"))
        await asyncio.wait_for(person.asked.wait(), 5)
        await asyncio.sleep(0.05)
        assert not call.done()  # the request returns once its questions are settled
        for odd in ({"requestId": ["s-1"]}, {"requestId": {"id": "s-1"}}, {}, {"requestId": "s-9"}):
            await transport.push({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": odd})
        assert not call.done()  # none of those names the question
        cancel = {"requestId": "s-1", "reason": "the server stopped waiting"}
        await transport.push({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": cancel})
        out = await asyncio.wait_for(call, 5)
    assert out["content"][0]["text"] == "went on without you"
    assert person.withdrawn.is_set()
    assert all(m.get("id") != "s-1" for m, _ in transport.sent)


async def test_a_question_reusing_the_id_of_one_still_open_gets_no_response(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """Request ids are not reused within a session: a second question under the id of one
    the person still has gets no response (any would read as the first one's answer), a
    warning names the id, and the first keeps its id (a cancellation naming it still
    withdraws it)."""
    person, transport = Stalling(), asks_then_answers("done")
    async with Client(transport, versions=V2025, answerer=person) as client:
        call = asyncio.ensure_future(client.call_tool("t"))
        await asyncio.wait_for(person.asked.wait(), 5)
        with caplog.at_level(logging.WARNING, logger="mcp_elicit.client"):
            await transport.push(elicit("s-1", {"message": "Who else?", "requestedSchema": FORM}))
            await eventually(
                lambda: any("'s-1'" in r.getMessage() for r in caplog.records), "the warning naming s-1"
            )
        assert person.shown == ["Who?"]  # the duplicate never reached the person
        cancel = {"requestId": "s-1", "reason": "never mind"}
        await transport.push({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": cancel})
        out = await asyncio.wait_for(call, 5)
    assert out["content"][0]["text"] == "done"
    assert person.withdrawn.is_set()
    assert [m for m, _ in transport.sent if m.get("id") == "s-1"] == []


async def test_questions_that_arrive_together_reach_the_person_one_at_a_time() -> None:
    """A server's concurrent questions (here two on the call's stream, one on the event
    stream) are answered concurrently, but the answerer gets them one after the other: a
    terminal can show one prompt at a time."""
    active, most, seen = 0, 0, []

    class Person:
        modes = frozenset({"form"})

        async def elicit(self, request: ElicitationRequest) -> ElicitAnswer:
            nonlocal active, most
            active += 1
            most = max(most, active)
            await asyncio.sleep(0.05)
            seen.append(request.message)
            active -= 1
            return ElicitAnswer("accept", {"age": 3})

    form = {"type": "object", "properties": {"age": {"type": "integer"}}}
    transport: FakeTransport

    async def serve(message: dict[str, Any], headers: dict[str, str]) -> list[Any]:
        if message["method"] == "initialize":
            return [init(message)]
        await transport.push(elicit("s-3", {"message": "C?", "requestedSchema": form}))
        return [
            elicit("s-1", {"message": "A?", "requestedSchema": form}),
            elicit("s-2", {"message": "B?", "requestedSchema": form}),
            result(message, {"content": []}),
        ]

    transport = FakeTransport(serve)
    async with Client(transport, versions=V2025, answerer=Person()) as client:
        await asyncio.wait_for(client.call_tool("t"), 5)
        for _ in range(50):  # the event stream's question is not the call's: it may finish later
            if len(seen) == 3:
                break
            await asyncio.sleep(0.02)
    assert most == 1
    assert sorted(seen) == ["A?", "B?", "C?"]
    answered = {m["id"] for m, _ in transport.sent if "result" in m}
    assert {"s-1", "s-2", "s-3"} <= answered


async def test_responses_on_the_event_stream_are_kept_only_for_requests_in_flight() -> None:
    """A response that arrives outside its exchange is kept for its request, which finds it
    when its own stream ends; one for no request in flight (a stray, a duplicate, a hostile
    server's) is dropped, so a long session's memory does not grow with them."""
    transport: FakeTransport

    async def serve(message: dict[str, Any], headers: dict[str, str]) -> list[Any]:
        if message["method"] == "initialize":
            return [init(message)]
        await transport.push(result(message, {"content": [{"type": "text", "text": "late"}]}))
        return [Ended(200)]

    transport = FakeTransport(serve)
    async with Client(transport, versions=V2025) as client:
        for i in range(200):
            await transport.push(result({"id": f"stray-{i}"}, {"content": []}))
        out = await client.call_tool("t")
        await transport.push(result({"id": 2}, {"content": []}))  # the call's id again, now done
        assert out["content"][0]["text"] == "late"
        assert client.session._late == {}  # type: ignore[union-attr]


async def test_a_form_asked_of_a_client_that_declared_url_mode_only_is_invalid_params(
    wire_2025: WireChecker,
) -> None:
    """The other way round from a URL asked of a form-only client: a client whose answerer
    takes URLs only declares ``elicitation: {"url": {}}``; a form the server asks anyway is
    answered -32602 naming the mode, and nobody is asked."""

    def serve(message: dict[str, Any], headers: dict[str, str]) -> list[Any]:
        if message["method"] == "initialize":
            return [init(message)]
        return [elicit("s-1", {"message": "Who?", "requestedSchema": FORM}), result(message, {"content": []})]

    answerer = Scripted.from_script([{"mode": "url", "action": "accept"}], modes=["url"])
    transport = FakeTransport(serve)
    async with Client(transport, versions=V2025, answerer=answerer) as client:
        assert client.capabilities["elicitation"] == {"url": {}}
        await client.call_tool("t")
    (answer,) = [m for m, _ in transport.sent if m.get("id") == "s-1"]
    assert answer["error"]["code"] == -32602
    assert "declared no form-mode elicitation" in answer["error"]["message"]
    assert answerer.used == []
    wire_2025.response("elicitation/create", answer)
    wire_2025.request(transport.requests[0][0])


async def answer_to_sampling(params: dict[str, Any]) -> tuple[dict[str, Any], list[Mapping[str, Any]]]:
    """A 2025-11-25 client's answer to a server's ``sampling/createMessage`` with
    ``params`` (asked during a tool call), and what its sampling callback was handed."""
    seen: list[Mapping[str, Any]] = []

    async def sampling(asked: Mapping[str, Any]) -> dict[str, Any]:
        seen.append(asked)
        return {"role": "assistant", "content": {"type": "text", "text": "hi"}, "model": "m"}

    def serve(message: dict[str, Any], headers: dict[str, str]) -> list[Any]:
        if message["method"] == "initialize":
            return [init(message)]
        asked = {"jsonrpc": "2.0", "id": "s-1", "method": "sampling/createMessage", "params": params}
        return [asked, result(message, {"content": []})]

    transport = FakeTransport(serve)
    async with Client(transport, versions=V2025, sampling=sampling) as client:
        assert client.capabilities["sampling"] == {}  # no sampling.tools
        await client.call_tool("t")
    (answer,) = [m for m, _ in transport.sent if m.get("id") == "s-1"]
    return answer, seen


async def test_a_malformed_sampling_request_is_invalid_params(wire_2025: WireChecker) -> None:
    """A sampling request whose params are no CreateMessageRequestParams is answered -32602
    saying what is wrong, and the sampling callback never sees it (it was handed the
    garbage, and the server got -32603, "Internal error", when it failed)."""
    answer, seen = await answer_to_sampling({"messages": []})
    assert answer["error"]["code"] == -32602
    assert "maxTokens: Field required" in answer["error"]["message"]
    assert seen == []
    wire_2025.response("sampling/createMessage", answer)


async def test_a_tool_enabled_sampling_request_is_invalid_params(wire_2025: WireChecker) -> None:
    """A sampling request with ``tools`` to a client that declared no ``sampling.tools``
    (client/sampling.mdx) is answered -32602 naming the capability, as an elicitation in an
    undeclared mode is; the sampling callback never sees it."""
    tools = [{"name": "lookup", "inputSchema": {"type": "object"}}]
    answer, seen = await answer_to_sampling({"messages": [], "maxTokens": 5, "tools": tools})
    assert answer["error"]["code"] == -32602
    assert "no sampling.tools capability" in answer["error"]["message"]
    assert seen == []
    wire_2025.response("sampling/createMessage", answer)


async def test_questions_on_initializes_own_stream_are_refused_and_not_put_to_the_person(
    wire_2025: WireChecker,
) -> None:
    """Before the session exists (the InitializeResult not yet read: the client knows
    neither the server nor what it agreed to), only ``ping`` is answered. 500 questions
    there were each put to the person, past every limit, from "unknown server"; now each
    gets -32600 at once."""

    def serve(message: dict[str, Any], headers: dict[str, str]) -> list[Any]:
        if message["method"] == "initialize":
            asked = [elicit(f"s-{i}", {"message": "Who?", "requestedSchema": FORM}) for i in range(500)]
            return [*asked, {"jsonrpc": "2.0", "id": "p-1", "method": "ping"}, init(message)]
        return [result(message, {"content": []})]

    answerer = Scripted.from_script([{"content": {"age": 7}}])
    transport = FakeTransport(serve)
    async with Client(transport, versions=V2025, answerer=answerer) as client:
        await client.call_tool("t")
    answers = {m["id"]: m for m, _ in transport.sent if "id" in m}
    assert answerer.used == []
    assert answers.pop("p-1")["result"] == {}
    assert len(answers) == 500
    assert {a["error"]["code"] for a in answers.values()} == {-32600}
    assert "elicitation/create came before the session was initialized" in answers["s-0"]["error"]["message"]
    wire_2025.response("elicitation/create", answers["s-0"])


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
