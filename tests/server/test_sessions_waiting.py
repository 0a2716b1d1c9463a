"""Handshake sessions (2025-11-25) waiting for people: no answer in time counts as cancel, and
no question goes out before the client says initialized."""

from __future__ import annotations

import asyncio
import logging

import pytest

from mcp_elicit import Context
from mcp_elicit.log_labels import session_label
from mcp_elicit.server.sessions import INITIALIZED_WAIT

from support.memory import SessionClient
from support.server_sessions import Silent, build
from support.wire import WireChecker

pytestmark = pytest.mark.anyio


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
    with caplog.at_level("WARNING", logger="mcp_elicit.server"):
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
    with caplog.at_level("WARNING", logger="mcp_elicit.server"):
        result = await asyncio.wait_for(client.result("tools/call", {"name": "ask_name"}), 5)
    assert result["content"][0]["text"] == "answer: cancel"
    assert client.asked == []
    assert "sent no notifications/initialized within 0.1 s; elicitation/create was not sent" in caplog.text


@pytest.mark.parametrize("method", ["elicitation/create", "roots/list"])
async def test_a_client_that_never_says_initialized_is_one_warning_naming_the_request(
    method: str, wire_2025: WireChecker, caplog: pytest.LogCaptureFixture
) -> None:
    """One event, one line: a warning (the client is at fault) naming the request whose
    question was never sent and why; nothing else in the log says it again, at any level.
    An elicitation counts as cancel; roots/list fails the tool."""
    server = build()

    @server.tool()
    async def roots(ctx: Context) -> str:
        return f"roots: {len(await ctx.list_roots())}"

    client = Silent(server, checker=wire_2025, capabilities={"elicitation": {}, "roots": {}})
    await client.open(initialized=False)
    client.session.initialized_wait = 0.05
    name = "ask_name" if method == "elicitation/create" else "roots"
    with caplog.at_level(logging.DEBUG):
        result = await asyncio.wait_for(client.result("tools/call", {"name": name}), 5)
    said = f"the client sent no notifications/initialized within 0.05 s; {method} was not sent"
    if method == "elicitation/create":
        assert result["content"][0]["text"] == "answer: cancel"
    else:
        assert result["isError"] is True and result["content"][0]["text"] == said[0].upper() + said[1:]
    lines = [r for r in caplog.records if "notifications/initialized" in r.getMessage()]
    assert len(lines) == 1, [r.getMessage() for r in lines]
    (line,) = lines
    assert line.levelno == logging.WARNING
    where = f"tools/call {name!r} (request 2, session {session_label(client.session.id)})"
    assert line.getMessage().startswith(f"{where}: {said}"), line.getMessage()
    assert client.asked == []
