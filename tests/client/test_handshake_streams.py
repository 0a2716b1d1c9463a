"""The client against a scripted server function at a handshake revision (2025-11-25): the server's own requests on response streams
and on the event stream, think time and timeouts, and stream resumption."""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from typing import Any

import pytest

from client.fakes import FakeExchange, FakeTransport, result
from mcp_elicit.client import Client, ElicitAnswer, Scripted
from mcp_elicit.client.transport import Ended
from mcp_elicit.core.client_inputs import ElicitationRequest
from mcp_elicit.errors import (
    RequestTimeout,
    TransportError,
)

from support.handshake import FORM, URL_ELICITATION, V2025, elicit, init
from support.waiting import eventually
from support.wire import WireChecker

pytestmark = pytest.mark.anyio


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


async def test_an_event_stream_that_breaks_after_each_message_is_always_opened_again() -> None:
    """A server that gives no event ids, whose stream breaks after each notice it brings:
    the limit on reopening counts breaks in a row that brought nothing, so a connection
    that brought a notice starts the count again and the session keeps listening."""
    heard: list[str] = []

    def serve(message: dict[str, Any], headers: dict[str, str]) -> list[Any]:
        if message["method"] == "initialize":
            return [init(message)]
        return [result(message, {"tools": []})]

    def listen(headers: dict[str, str], last: str | None) -> FakeExchange:
        notice = {"jsonrpc": "2.0", "method": "notifications/tools/list_changed"}
        return FakeExchange([notice, Ended(200, reason="the connection broke", retry_ms=10)])

    transport = FakeTransport(serve, listen=listen, headers={"mcp-session-id": "S"})
    client = Client(transport, versions=V2025, on_notification=lambda method, params: heard.append(method))
    async with client:
        await eventually(lambda: len(transport.listens) >= 5, "a fifth opening of the event stream")
    assert len(heard) >= 4, heard
