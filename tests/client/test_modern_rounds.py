"""The client against a scripted server function at revision 2026-07-28: multi round-trip. Input required is answered and
retried with the state echoed, rounds never share state, and the round limit and backoff
bound them; results it did not ask for are violations."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from client.fakes import FakeTransport, error, result
from mcp_elicit.client import Client, RoundLimits
from mcp_elicit.errors import (
    InvalidParams,
    ProtocolViolation,
    RoundsExceeded,
)

from support.modern_server import Asking, Server, ask, yes
from support.wire import WireChecker

pytestmark = pytest.mark.anyio


async def test_input_required_is_answered_and_retried_with_a_new_id_and_the_state_echoed(
    wire: WireChecker,
) -> None:
    server = Asking()
    transport = FakeTransport(server)
    async with Client(transport, answerer=yes()) as client:
        out = await client.call_tool("t", {"a": 1})
    assert out["content"][0]["text"] == "{'confirm': {'action': 'accept', 'content': {'confirmed': True}}}"
    first, retry = server.calls
    assert "requestState" not in first
    assert retry["requestState"] is not None
    assert retry["requestState"] == Asking.STATE
    assert retry["arguments"] == {"a": 1}
    calls = [m for m, _ in transport.requests if m["method"] == "tools/call"]
    assert calls[0]["id"] != calls[1]["id"]
    for message in calls:
        wire.request(message)


class WrittenBeforeGone:
    """A transport of someone else's written before ``Transport.gone`` existed: every
    other method, by delegation."""

    def __init__(self, inner: FakeTransport) -> None:
        self._inner = inner

    def __getattr__(self, name: str) -> Any:
        if name == "gone":
            raise AttributeError(name)
        return getattr(self._inner, name)


async def test_a_transport_without_gone_still_answers_rounds() -> None:
    server = Asking()
    async with Client(WrittenBeforeGone(FakeTransport(server)), answerer=yes()) as client:  # type: ignore[arg-type]
        out = await client.call_tool("t", {"a": 1})
    assert out["content"][0]["text"] == "{'confirm': {'action': 'accept', 'content': {'confirmed': True}}}"
    assert len(server.calls) == 2


class NoState(Server):
    def call(self, message: dict[str, Any], params: dict[str, Any]) -> list[Any]:
        if "inputResponses" not in params:
            return [result(message, {"resultType": "input_required", "inputRequests": {"confirm": ask()}})]
        return [result(message, {"content": []})]


async def test_no_state_means_none_in_the_retry() -> None:
    server = NoState()
    async with Client(FakeTransport(server), answerer=yes()) as client:
        await client.call_tool("t")
    assert "requestState" not in server.calls[1]
    assert server.calls[1]["inputResponses"] == {
        "confirm": {"action": "accept", "content": {"confirmed": True}}
    }


class RefusesTheAnswers(NoState):
    """Answers the retry (which carries no requestState) with -32602."""

    def call(self, message: dict[str, Any], params: dict[str, Any]) -> list[Any]:
        if "inputResponses" in params:
            return [error(message, -32602, "confirm: not a boolean")]
        return super().call(message, params)


async def test_a_refused_retry_without_state_is_not_started_again() -> None:
    """-32602 to a retry with no requestState is about something else than a lapsed
    state: the call fails with the server's words, and is not sent again."""
    server = RefusesTheAnswers()
    async with Client(FakeTransport(server), answerer=yes()) as client:
        with pytest.raises(InvalidParams) as caught:
            await client.call_tool("t")
    assert caught.value.message == "confirm: not a boolean"
    assert len(server.calls) == 2


class Slow(Server):
    """Two tools whose rounds interleave: a state must never reach the other tool."""

    async def slow_call(self, message: dict[str, Any], params: dict[str, Any]) -> list[Any]:
        await asyncio.sleep(0.01)
        name = params["name"]
        rounds = int(params.get("requestState", f"{name}:0").split(":")[1])
        if rounds < 3:
            return [
                result(
                    message,
                    {
                        "resultType": "input_required",
                        "inputRequests": {f"{name}-{rounds}": ask()},
                        "requestState": f"{name}:{rounds + 1}",
                    },
                )
            ]
        return [result(message, {"content": [{"type": "text", "text": name}]})]

    def __call__(self, message: dict[str, Any], headers: dict[str, str]) -> Any:
        if message["method"] == "tools/call":
            self.calls.append(message["params"])
            return self.slow_call(message, message["params"])
        return super().__call__(message, headers)


async def test_concurrent_requests_never_share_state_or_answers() -> None:
    server = Slow()
    server.tools = [{"name": n, "inputSchema": {"type": "object"}} for n in ("a", "b", "c")]
    async with Client(FakeTransport(server), answerer=yes()) as client:
        outs = await asyncio.gather(*(client.call_tool(n) for n in ("a", "b", "c")))
    assert [o["content"][0]["text"] for o in outs] == ["a", "b", "c"]
    for params in server.calls:
        name = params["name"]
        state = params.get("requestState")
        assert state is None or state.startswith(f"{name}:")
        for key in params.get("inputResponses", {}):
            assert key.startswith(f"{name}-")


class Forever(Server):
    def call(self, message: dict[str, Any], params: dict[str, Any]) -> list[Any]:
        return [
            result(
                message,
                {"resultType": "input_required", "inputRequests": {"again": ask()}, "requestState": "s"},
            )
        ]


async def test_a_server_that_keeps_asking_is_stopped_by_the_round_limit() -> None:
    server = Forever()
    async with Client(FakeTransport(server), answerer=yes(), limits=RoundLimits(max_rounds=4)) as client:
        with pytest.raises(RoundsExceeded, match="after 4 rounds"):
            await client.call_tool("t")
    assert len(server.calls) == 4


class Polling(Server):
    def __init__(self, ready_after: int) -> None:
        super().__init__()
        self.ready_after = ready_after

    def call(self, message: dict[str, Any], params: dict[str, Any]) -> list[Any]:
        if len(self.calls) <= self.ready_after:
            return [
                result(message, {"resultType": "input_required", "requestState": f"poll-{len(self.calls)}"})
            ]
        return [result(message, {"content": [{"type": "text", "text": "done"}]})]


async def test_state_only_rounds_are_retried_after_the_backoff() -> None:
    server = Polling(ready_after=3)
    limits = RoundLimits(max_state_only=5, backoff=(0.0, 0.05, 0.1))
    loop = asyncio.get_running_loop()
    async with Client(FakeTransport(server), limits=limits) as client:
        start = loop.time()
        out = await client.call_tool("t")
        elapsed = loop.time() - start
    assert out["content"][0]["text"] == "done"
    assert elapsed >= 0.15
    assert [c.get("requestState") for c in server.calls] == [None, "poll-1", "poll-2", "poll-3"]
    assert all("inputResponses" not in c for c in server.calls)


async def test_state_only_rounds_are_bounded() -> None:
    limits = RoundLimits(max_rounds=50, max_state_only=2, backoff=(0.0,))
    async with Client(FakeTransport(Polling(ready_after=10)), limits=limits) as client:
        with pytest.raises(RoundsExceeded, match="only a requestState"):
            await client.call_tool("t")


async def test_an_unknown_result_type_is_a_violation() -> None:
    class Odd(Server):
        def call(self, message: dict[str, Any], params: dict[str, Any]) -> list[Any]:
            return [result(message, {"resultType": "deferred", "content": []})]

    async with Client(FakeTransport(Odd())) as client:
        with pytest.raises(ProtocolViolation, match="resultType 'deferred'"):
            await client.call_tool("t")


async def test_a_task_the_client_did_not_ask_for_is_a_violation() -> None:
    """A server may answer with a task only a request that declared the tasks extension."""

    class Eager(Server):
        def call(self, message: dict[str, Any], params: dict[str, Any]) -> list[Any]:
            task = {"taskId": "t-1", "status": "working", "ttlMs": None}
            return [result(message, {"resultType": "task", **task})]

    async with Client(FakeTransport(Eager())) as client:
        with pytest.raises(ProtocolViolation, match="did not declare the tasks extension"):
            await client.call_tool("t")
