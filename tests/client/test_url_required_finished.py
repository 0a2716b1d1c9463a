"""2025-11-25: a -32042's URL step, as the answerer sees it, carries ``request.finished``
as a step asked by the server's own ``elicitation/create`` does (``ElicitationRequest``:
"for a URL-mode request of a 2025-11-25 session that carries an elicitationId"). An
answerer that waits in ``url_done`` for the server's word (``await request.finished()``)
is then released by the server's ``notifications/elicitation/complete`` and the call
retried once, rather than said done at once and retried until the round limit. Against
a real server, served over HTTP on 127.0.0.1 in this process."""

from __future__ import annotations

import asyncio

import pytest

from mcp_elicit import Context, Server
from mcp_elicit.client import ElicitAnswer
from mcp_elicit.core.client_inputs import ElicitationRequest
from mcp_elicit.transports.http_client import connect_http
from mcp_elicit.transports.http_server import StreamableHTTP

from support.procs import uvicorn_server

pytestmark = pytest.mark.anyio


def deposit_server(paid: set[str]) -> tuple[Server, list[int]]:
    """A tool that needs the deposit paid on the payment provider's page first."""
    app = Server("deposits")
    runs: list[int] = []

    @app.tool()
    async def pay_deposit(ctx: Context, booking: int) -> str:
        runs.append(booking)
        if str(booking) in paid:
            return f"deposit {booking} paid"
        await ctx.require_url(
            "Pay the deposit", f"https://pay.example.com/d/{booking}", elicitation_id=f"deposit-{booking}"
        )
        return f"deposit {booking} not paid"

    return app, runs


class WaitsForTheServer:
    """Accepts each page, and says it is done once the server says so (``request.finished``)."""

    modes = frozenset({"url"})

    def __init__(self) -> None:
        self.asked: list[ElicitationRequest] = []
        self.shown = asyncio.Event()
        self.heard: list[str] = []

    async def elicit(self, request: ElicitationRequest) -> ElicitAnswer:
        self.asked.append(request)
        self.shown.set()
        return ElicitAnswer.accept()

    async def url_done(self, request: ElicitationRequest) -> None:
        assert request.finished is not None, "a -32042 step of a 2025-11-25 session has no request.finished"
        await request.finished()
        self.heard.append(request.elicitation_id or "")


async def test_a_32042_step_is_finished_by_the_servers_notice() -> None:
    paid: set[str] = set()
    app, runs = deposit_server(paid)
    person = WaitsForTheServer()
    async with (
        uvicorn_server(StreamableHTTP(app)) as running,
        connect_http(
            f"http://127.0.0.1:{running.port}/mcp", answerer=person, versions=("2025-11-25",)
        ) as client,
    ):
        call = asyncio.ensure_future(client.call_tool("pay_deposit", {"booking": 7}))
        await asyncio.wait_for(person.shown.wait(), 10)
        (step,) = person.asked
        assert step.elicitation_id == "deposit-7"
        paid.add("7")  # the payment page's backend records the work, then completes the step
        app.complete_elicitation("deposit-7")
        result = await asyncio.wait_for(call, 10)
    assert result["content"][0]["text"] == "deposit 7 paid", result
    assert person.heard == ["deposit-7"]
    assert runs == [7, 7], "asked once, retried once after the notice"
