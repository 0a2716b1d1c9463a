"""An answerer's own exception reaches the caller of ``call_tool`` at 2025-11-25 over HTTP
whichever comes first: the server's response to the call, or the end of the POST that
tells the server -32603. A server told -32603 may end its tool at once and answer the
call before it answers that POST; the call then had its result while the answer's failure
was still on its way. A question on the session's event stream (as some SDKs ask), which
a call that completes does not wait for, had the call return the server's result, the
answerer's exception only logged ("answering the server's question failed"): the caller
took the person's unparsable input for an answer.

The server here is raw HTTP on 127.0.0.1 in the test's own event loop: it answers the
-32603's POST (202) only once the client's transport has read the call's result, so that
order is certain, not a race."""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
from collections.abc import Mapping
from typing import Any, Literal

import pytest

from client.fakes import result
from client.recorder import Recorder
from client.test_answer_failures import TYPED, Parsing
from mcp_elicit.client import Client
from mcp_elicit.client.answerers import ElicitAnswer
from mcp_elicit.core.client_inputs import ElicitationRequest
from mcp_elicit.transports.http_client import HttpTransport

from support.handshake import elicit, init
from support.raw_http import Seen, raw_server, response
from support.waiting import hang_guard

pytestmark = pytest.mark.anyio

FORM = {
    "mode": "form",
    "message": "Your age?",
    "requestedSchema": {"type": "object", "properties": {"age": {"type": "string"}}},
}
SSE = "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nCache-Control: no-cache\r\nConnection: close\r\n\r\n"


def opened(seen: Seen, writer: asyncio.StreamWriter) -> dict[str, Any] | None:
    """A 2025-11-25 session's DELETE and ``initialize`` answered (None); any other POST's message."""
    if seen.method == "DELETE":
        writer.write(response("200 OK", {}))
        return None
    message: dict[str, Any] = json.loads(seen.body)
    if message.get("method") == "initialize":
        body = json.dumps(init(message)).encode()
        writer.write(response("200 OK", {"Content-Type": "application/json", "Mcp-Session-Id": "s-1"}, body))
        return None
    return message


class AnswersFirst:
    """A 2025-11-25 server that asks its question on the event stream (``asks_on``
    "events") or on the call's own stream ("call"), answers the call as soon as the answer
    comes, and answers the answer's POST only once the client has read the call's result.
    ``drops_answers``: it drops the answer's connection instead, unanswered, and the call
    waits for ever; ``holds_answers``: it never answers the answer's POST (keeps it open);
    ``at_once``: it answers the call right after asking, without waiting for the answer."""

    def __init__(
        self,
        asks_on: Literal["events", "call"],
        *,
        drops_answers: bool = False,
        holds_answers: bool = False,
        at_once: bool = False,
    ) -> None:
        self.asks_on = asks_on
        self.at_once = at_once
        self.drops_answers = drops_answers
        self.holds_answers = holds_answers
        self.events: asyncio.Queue[bytes] = asyncio.Queue()  # for the GET stream
        self.call_id: Any = None
        self.answer: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        self.result_read = asyncio.Event()  # the client's transport read the call's result
        self.acknowledged = False  # the answer's POST was answered

    def trace(self, recorder: Recorder) -> Any:
        def traced(direction: Literal["send", "receive"], message: Mapping[str, Any]) -> None:
            recorder(direction, message)
            if direction == "receive" and "method" not in message and message.get("id") == self.call_id:
                self.result_read.set()

        return traced

    async def __call__(self, seen: Seen, writer: asyncio.StreamWriter) -> None:
        if seen.method == "GET":
            writer.write(SSE.encode())
            while True:
                writer.write(await self.events.get())
                await writer.drain()
        message = opened(seen, writer)
        if message is None:
            return
        method = message.get("method")
        if method == "tools/list":
            tools = {"tools": [{"name": "ask", "inputSchema": {"type": "object"}}]}
            writer.write(
                response("200 OK", {"Content-Type": "application/json"}, _json(result(message, tools)))
            )
        elif method == "tools/call":
            await self._call(message, writer)
        elif method is None and self.drops_answers:
            return  # the connection closes, with no response
        elif method is None:  # the client's answer to the question
            self.answer.set_result(message)
            await self.result_read.wait()
            if self.holds_answers:
                await asyncio.Event().wait()
            self.acknowledged = True
            writer.write(response("202 Accepted", {}))
        else:  # a notification
            writer.write(response("202 Accepted", {}))
        await writer.drain()

    async def _call(self, message: dict[str, Any], writer: asyncio.StreamWriter) -> None:
        self.call_id = message["id"]
        question = b"data: " + _json(elicit("q-1", FORM)) + b"\n\n"
        if self.asks_on == "events":
            self.events.put_nowait(question)
        else:
            writer.write(SSE.encode() + question)
            await writer.drain()
        text = "not waited for" if self.at_once else str((await self.answer).get("error"))
        done = _json(result(message, {"content": [{"type": "text", "text": text}]}))  # the tool ends
        if self.asks_on == "events":
            writer.write(response("200 OK", {"Content-Type": "application/json"}, done))
        else:
            writer.write(b"data: " + done + b"\n\n")


def _json(message: Mapping[str, Any]) -> bytes:
    return json.dumps(message).encode()


@pytest.mark.parametrize("asks_on", ["events", "call"])
async def test_the_answerers_exception_reaches_the_caller_though_the_result_came_first(
    asks_on: Literal["events", "call"], caplog: pytest.LogCaptureFixture
) -> None:
    server = AnswersFirst(asks_on)
    recorder = Recorder()
    async with raw_server(server) as raw:
        transport = HttpTransport(raw.url, trace=server.trace(recorder))
        with caplog.at_level(logging.INFO, "mcp_elicit"):
            async with Client(transport, answerer=Parsing(), versions=["2025-11-25"], timeout=30) as client:
                async with hang_guard("the call to fail with the answerer's exception"):
                    with pytest.raises(ValueError, match="invalid literal for int"):
                        await client.call_tool("ask")
                assert server.result_read.is_set()  # the result came first
                assert server.acknowledged  # the server was told -32603 before the call raised
                assert [t["name"] for t in await client.list_tools()] == ["ask"]  # the session goes on
    (error,) = [m["error"] for m in recorder.sent if "error" in m]
    assert error["code"] == -32603
    assert TYPED not in str(recorder.sent)
    # the call had its response: nothing to cancel
    assert [m for m in recorder.sent if m.get("method") == "notifications/cancelled"] == []
    assert "answering the server's question failed" not in caplog.text  # not taken for lost
    assert "never retrieved" not in caplog.text


async def test_the_answerers_exception_reaches_the_caller_though_the_server_could_not_be_told(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """The -32603's POST fails: that is logged, and the call (which the server would
    answer only once told) still ends with the answerer's exception. It waited for its
    timeout and raised RequestTimeout, the answerer's exception lost."""
    server = AnswersFirst("call", drops_answers=True)
    recorder = Recorder()
    async with raw_server(server) as raw:
        transport = HttpTransport(raw.url, trace=server.trace(recorder))
        with caplog.at_level(logging.WARNING, "mcp_elicit"):
            async with Client(transport, answerer=Parsing(), versions=["2025-11-25"], timeout=30) as client:
                async with hang_guard("the call to fail with the answerer's exception"):
                    with pytest.raises(ValueError, match="invalid literal for int"):
                        await client.call_tool("ask")
                assert [t["name"] for t in await client.list_tools()] == ["ask"]  # the session goes on
    assert "could not be told -32603" in caplog.text
    (call,) = [m for m in recorder.sent if m.get("method") == "tools/call"]
    cancelled = [
        m["params"]["requestId"] for m in recorder.sent if m.get("method") == "notifications/cancelled"
    ]
    assert cancelled == [call["id"]]  # the call is abandoned
    assert TYPED not in str(recorder.sent)
    assert "answering the server's question failed" not in caplog.text


@pytest.mark.parametrize("asks_on", ["events", "call"])
async def test_a_call_with_its_result_is_not_held_by_a_post_the_server_keeps_open(
    asks_on: Literal["events", "call"], caplog: pytest.LogCaptureFixture
) -> None:
    """The server answers the call but never the -32603's POST: the call, its result in
    hand, raises the answerer's exception after ``TELLING`` seconds, not at the end of the
    POST's own time limit (30 s: "could not be told -32603"), which a question on the
    call's own stream waited for."""
    server = AnswersFirst(asks_on, holds_answers=True)
    recorder = Recorder()
    async with raw_server(server) as raw:
        transport = HttpTransport(raw.url, trace=server.trace(recorder))
        with caplog.at_level(logging.WARNING, "mcp_elicit"):
            async with Client(transport, answerer=Parsing(), versions=["2025-11-25"], timeout=30) as client:
                async with hang_guard("the call to fail with the answerer's exception"):
                    with pytest.raises(ValueError, match="invalid literal for int"):
                        await client.call_tool("ask")
                assert server.result_read.is_set()
                assert "has not taken, within 5 s, the -32603" in caplog.text
                assert "could not be told -32603" not in caplog.text
    assert not server.acknowledged
    assert [m["error"]["code"] for m in recorder.sent if "error" in m] == [-32603]


class StillThinking:
    """An answerer whose person is still typing when the call's result comes: it fails
    parsing what they typed only once ``typed`` is set."""

    modes = frozenset({"form"})

    def __init__(self) -> None:
        self.typed = asyncio.Event()

    async def elicit(self, request: ElicitationRequest) -> ElicitAnswer:
        await self.typed.wait()
        return ElicitAnswer.accept({"age": int(TYPED)})  # ValueError quoting the text

    async def url_done(self, request: ElicitationRequest) -> None:
        return None


async def test_an_answer_failing_after_the_result_came_is_not_waited_for_past_the_bound(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """The server answers the call while the person is still answering its question on
    the call's own stream; the answer then fails, and the server never answers the
    -32603's POST. The call waited for that answer whole, its -32603's POST included (up
    to the POST's 30 s limit), not ``TELLING`` seconds: it now raises the answerer's
    exception once that bound has passed."""
    server = AnswersFirst("call", holds_answers=True, at_once=True)
    answerer = StillThinking()
    recorder = Recorder()

    async def type_once_the_result_is_in() -> None:
        await server.result_read.wait()
        await asyncio.sleep(0.2)  # the call reaches its end (an order, not a time measured)
        answerer.typed.set()

    async with raw_server(server) as raw:
        transport = HttpTransport(raw.url, trace=server.trace(recorder))
        typing = asyncio.ensure_future(type_once_the_result_is_in())
        try:
            with caplog.at_level(logging.WARNING, "mcp_elicit"):
                async with Client(
                    transport, answerer=answerer, versions=["2025-11-25"], timeout=30
                ) as client:
                    async with hang_guard("the call to fail with the answerer's exception", 15.0):
                        with pytest.raises(ValueError, match="invalid literal for int"):
                            await client.call_tool("ask")
                    assert answerer.typed.is_set()  # it failed after the result came
                    assert "has not taken, within 5 s, the -32603" in caplog.text
                    assert "could not be told -32603" not in caplog.text
        finally:
            typing.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await typing
    assert not server.acknowledged
    assert [m["error"]["code"] for m in recorder.sent if "error" in m] == [-32603]
    assert TYPED not in str(recorder.sent)
    assert "never retrieved" not in caplog.text


class NeverTyping:
    """An answerer whose person never answers; whether their prompt was taken away."""

    modes = frozenset({"form"})

    def __init__(self) -> None:
        self.asked = asyncio.Event()
        self.withdrawn = False

    async def elicit(self, request: ElicitationRequest) -> ElicitAnswer:
        self.asked.set()
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            self.withdrawn = True
            raise
        raise AssertionError("unreachable")

    async def url_done(self, request: ElicitationRequest) -> None:
        return None


async def test_a_call_cancelled_while_its_result_waits_for_an_answer_takes_the_prompt_away(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """A call that has its result waits for the answers still being made on its own
    stream; its caller cancelling it then cancels those prompts, and the call ends only
    once they have ended: none is left running behind it."""
    server = AnswersFirst("call", at_once=True)
    answerer = NeverTyping()
    async with raw_server(server) as raw:
        with caplog.at_level(logging.WARNING, "mcp_elicit"):
            async with Client(
                HttpTransport(raw.url, trace=server.trace(Recorder())),
                answerer=answerer,
                versions=["2025-11-25"],
                timeout=30,
            ) as client:
                call = asyncio.ensure_future(client.call_tool("ask"))
                async with hang_guard("the call to end once cancelled"):
                    await answerer.asked.wait()
                    await server.result_read.wait()
                    await asyncio.sleep(0.2)  # the call reaches its end (an order, not a time measured)
                    assert not call.done()  # still waiting for the answer
                    call.cancel()
                    with pytest.raises(asyncio.CancelledError):
                        await call
                assert answerer.withdrawn  # its prompt was cancelled before the call ended
                assert [t["name"] for t in await client.list_tools()] == ["ask"]  # the session goes on
    assert "never retrieved" not in caplog.text
    assert "answering the server's question failed" not in caplog.text


class HoldsTheError:
    """A 2025-11-25 server that asks two questions at once on the call's stream and never
    answers the POST of an error response (it holds it open): the client's -32603 is
    still being sent while the next question is asked."""

    async def __call__(self, seen: Seen, writer: asyncio.StreamWriter) -> None:
        if seen.method == "GET":
            writer.write(response("405 Method Not Allowed", {}))
            return
        message = opened(seen, writer)
        if message is None:
            return
        method = message.get("method")
        if method == "tools/call":
            asked = [b"data: " + _json(elicit(f"q-{n}", FORM)) + b"\n\n" for n in (1, 2)]
            writer.write(SSE.encode() + b"".join(asked))
            await writer.drain()
            await asyncio.Event().wait()  # the call is never answered
        elif method is None and "error" in message:
            await asyncio.Event().wait()  # the -32603's POST is never answered
        else:  # a notification, or an answer
            writer.write(response("202 Accepted", {}))
        await writer.drain()


class FailsThenInterrupted:
    """The first answer fails parsing what the person typed; at the second question the
    person presses Ctrl-C."""

    modes = frozenset({"form"})

    def __init__(self) -> None:
        self.asked = 0

    async def elicit(self, request: ElicitationRequest) -> ElicitAnswer:
        self.asked += 1
        if self.asked == 1:
            return ElicitAnswer.accept({"age": int(TYPED)})  # ValueError quoting the text
        raise KeyboardInterrupt

    async def url_done(self, request: ElicitationRequest) -> None:
        return None


async def test_a_ctrl_c_while_an_earlier_failure_is_being_told_is_not_lost(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """The first answer's ValueError is held for the call as it fails, before its -32603
    goes out; the person's Ctrl-C at the next question, while that -32603 is still being
    sent, ended the call, which raised the ValueError: the Ctrl-C was neither raised nor
    logged. A Ctrl-C is never swallowed: the call raises it, and the ValueError is logged."""
    answerer = FailsThenInterrupted()
    async with raw_server(HoldsTheError()) as raw:
        with caplog.at_level(logging.ERROR, "mcp_elicit"):
            async with Client(
                HttpTransport(raw.url), answerer=answerer, versions=["2025-11-25"], timeout=30
            ) as client:
                async with hang_guard("the call to end with the person's Ctrl-C"):
                    with pytest.raises(KeyboardInterrupt):
                        await client.call_tool("ask")
    assert answerer.asked == 2
    assert "invalid literal for int" in caplog.text  # the answer that failed first, logged
    assert "never retrieved" not in caplog.text
