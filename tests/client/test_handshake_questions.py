"""The client against a scripted server function at a handshake revision (2025-11-25): the server's questions withdrawn, reusing
ids, arriving together, asked in forms a client did not declare, sampling requests, and
questions on the stream of ``initialize``."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Mapping
from typing import Any

import pytest

from client.answerers import NeverAnswering
from client.fakes import FakeTransport, result
from mcp_elicit.client import Client, ElicitAnswer, Scripted
from mcp_elicit.client.transport import Ended
from mcp_elicit.core.client_inputs import ElicitationRequest

from support.handshake import FORM, V2025, elicit, init
from support.waiting import eventually
from support.wire import WireChecker

pytestmark = pytest.mark.anyio


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
    person, transport = NeverAnswering(), asks_then_answers("went on without you")
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
    person, transport = NeverAnswering(), asks_then_answers("done")
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
