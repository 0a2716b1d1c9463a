"""A 2025-11-25 session that ends (the client's DELETE, the server shutting down) under a
handler that catches the cancellation and goes on: returns a result, asks again (a form,
sampling, roots, a secret's page), or asks a URL step (-32042). The request answers what
the session's end says (-32600 for the client's DELETE, -32603 for the server's shutdown),
not what its handler made after it, as it does when the handler lets the cancellation go. Real uvicorn on 127.0.0.1;
messages checked against the 2025-11-25 schema."""

from __future__ import annotations

import asyncio
import logging
import re
from typing import Any

import httpx
import pytest

from mcp_elicit import Context, Form, Server, String
from mcp_elicit.transports.http_server import StreamableHTTP

from support.http_sessions import Session, build
from support.procs import uvicorn_server
from support.waiting import hang_guard
from support.wire import WireChecker

pytestmark = pytest.mark.anyio

DELETED = (
    "Invalid request: the client ended this session (HTTP DELETE) before the request "
    "finished; it was stopped, and any question it was waiting on withdrawn"
)
SHUT_DOWN = "Internal error: the session ended before the request finished (the server is shutting down)"


def server() -> Server:
    app = build()  # with stubborn (asks again when cancelled) and stubborn_step (a -32042)

    @app.tool()
    async def returns_anyway(ctx: Context) -> str:
        try:
            await ctx.elicit("Name?", Form(name=String()))
        except asyncio.CancelledError:
            return "went on all the same"
        return "answered"

    @app.tool()
    async def then_samples(ctx: Context) -> str:
        try:
            await ctx.elicit("Name?", Form(name=String()))
        except asyncio.CancelledError:
            await ctx.sample("Go on?")
        return "answered"

    @app.tool()
    async def then_lists_roots(ctx: Context) -> str:
        try:
            await ctx.elicit("Name?", Form(name=String()))
        except asyncio.CancelledError:
            await ctx.list_roots()
        return "answered"

    @app.tool()
    async def then_asks_a_secret(ctx: Context) -> str:
        try:
            await ctx.elicit("Name?", Form(name=String()))
        except asyncio.CancelledError:
            return f"secret: {(await ctx.secret('api_key')).action}"
        return "answered"

    return app


async def _ended_under(
    wire: WireChecker, tool: str, ended_by: str, capabilities: dict[str, Any] | None = None
) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """Call ``tool`` in a new session, end the session (``ended_by``: the client's DELETE or
    the server's shutdown) while its first question waits: that question, and what the
    request's stream carried after it."""
    transport = StreamableHTTP(server())
    async with uvicorn_server(transport, lifespan="on") as running, httpx.AsyncClient(timeout=10) as http:
        client = Session(http, running.url, wire)
        await client.open(capabilities)
        async with client.asked(tool) as (_, events, question):
            if ended_by == "delete":
                assert (await http.delete(running.url, headers=client.headers())).status_code == 200
            else:
                transport.begin_shutdown()
            async with hang_guard("the request's stream ending with its session"):
                rest = [message async for message in events]
    return question, rest


@pytest.mark.parametrize("tool", ["then_samples", "then_lists_roots", "then_asks_a_secret"])
@pytest.mark.parametrize("ended_by", ["delete", "shutdown"])
async def test_sampling_roots_or_a_page_asked_after_the_session_ended_are_not_sent(
    wire_2025: WireChecker, tool: str, ended_by: str, caplog: pytest.LogCaptureFixture
) -> None:
    """What the handler asks once its session ended (sampling, roots, a secret's page) is not
    sent: the stream carries the withdrawn question and the session's end, and the log has
    no error and no traceback."""
    caplog.set_level(logging.INFO, logger="mcp_elicit")
    everything = {"elicitation": {"form": {}, "url": {}}, "sampling": {}, "roots": {}}
    question, rest = await _ended_under(wire_2025, tool, ended_by, everything)
    withdrawn, answer = rest
    assert (
        withdrawn["method"] == "notifications/cancelled"
        and withdrawn["params"]["requestId"] == question["id"]
    )
    assert answer["error"]["code"] == (-32600 if ended_by == "delete" else -32603), rest
    loud = [(r.levelname, r.getMessage()) for r in caplog.records if r.levelno > logging.INFO or r.exc_info]
    assert loud == []


@pytest.mark.parametrize("tool", ["returns_anyway", "stubborn", "stubborn_step"])
@pytest.mark.parametrize("ended_by", ["delete", "shutdown"])
async def test_a_handler_that_goes_on_after_its_session_ended_is_answered_as_the_end_says(
    wire_2025: WireChecker, tool: str, ended_by: str
) -> None:
    question, rest = await _ended_under(wire_2025, tool, ended_by)
    withdrawn, answer = rest
    assert withdrawn["method"] == "notifications/cancelled", rest
    assert withdrawn["params"]["requestId"] == question["id"]
    wire_2025.notification(withdrawn)
    wire_2025.response("tools/call", answer)
    code, message = (-32600, DELETED) if ended_by == "delete" else (-32603, SHUT_DOWN)
    assert answer["id"] == 1 and answer["error"] == {"code": code, "message": message}, answer


@pytest.mark.parametrize("ended_by", ["delete", "shutdown"])
async def test_a_question_asked_after_the_session_ended_is_no_tool_failure_in_the_log(
    wire_2025: WireChecker, ended_by: str, caplog: pytest.LogCaptureFixture
) -> None:
    """``stubborn`` asks again once its session ended: that question is not sent, and it is
    answered ``cancel``, as one asked after the client cancelled the request is. The
    session's end was the client's DELETE or the server's shutdown, not a failure of the
    tool: the log says so at INFO, with no error and no traceback."""
    caplog.set_level(logging.INFO, logger="mcp_elicit")
    _, rest = await _ended_under(wire_2025, "stubborn", ended_by)
    assert rest[-1]["error"]["code"] == (-32600 if ended_by == "delete" else -32603), rest
    loud = [(r.levelname, r.getMessage()) for r in caplog.records if r.levelno > logging.INFO or r.exc_info]
    assert loud == []
    said = [r.getMessage() for r in caplog.records if "was not sent" in r.getMessage()]
    by = "the client ended it (HTTP DELETE)" if ended_by == "delete" else "the server is shutting down"
    (line,) = said  # named: the tool, the request and its session, then why
    assert re.fullmatch(
        rf"tools/call 'stubborn' \(request 1, session \S{{8}}\): the session ended \({re.escape(by)}\); "
        "elicitation/create was not sent; treating it as cancel",
        line,
    ), line
