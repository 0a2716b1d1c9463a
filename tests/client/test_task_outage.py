"""2026-07-28 tasks over real HTTP: a ``tasks/get`` answered by a server's passing outage
(-32603 with HTTP 503, its store down; or a proxy's 502/503/504 with no JSON-RPC in it) is
polled again after a growing backoff, for ``RoundLimits.outage_wait`` seconds in all: the
call completes once the server is back. So is a ``tasks/update`` carrying the person's
answers. A longer outage fails the call as before, naming
the outage; any other error fails it at once."""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import pytest

from mcp_elicit import Boolean, Context, Form, Server
from mcp_elicit.client import Client, ElicitAnswer, RoundLimits
from mcp_elicit.core.client_inputs import ElicitationRequest
from mcp_elicit.errors import InternalError, MCPElicitError, ProtocolError, StoreUnavailable, TransportError
from mcp_elicit.transports.http_client import connect_http
from mcp_elicit.transports.http_server import StreamableHTTP

from support.procs import uvicorn_server

pytestmark = pytest.mark.anyio

#: What the failing ``tasks/get`` is answered with: (HTTP status, content type, body).
ANSWERS = {
    "store": (503, "application/json", None),  # our server with its store down
    "proxy": (502, "text/html", b"<html><body><h1>502 Bad Gateway</h1></body></html>"),
    "broken": (500, "application/json", None),  # -32603, but no outage: not polled again
    # what our bearer check answers while its token verifier is unreachable
    "busy": (503, "text/plain", b"Service Unavailable: the token verifier is unreachable"),
}


class Outage:
    """The next ``left`` ``method`` requests are answered as ``kind`` says; ``hits``
    counts them."""

    def __init__(self, kind: str, left: int, method: str = "tasks/get") -> None:
        self.kind = kind
        self.left = left
        self.method = method.encode()
        self.hits = 0

    def wrap(self, app: Any) -> Any:
        async def asgi(scope: dict[str, Any], receive: Any, send: Any) -> None:
            headers = dict(scope.get("headers", ()))
            if scope["type"] != "http" or headers.get(b"mcp-method") != self.method or self.left <= 0:
                await app(scope, receive, send)
                return
            self.left -= 1
            self.hits += 1
            body, more = b"", True
            while more:
                message = await receive()
                body += message.get("body", b"")
                more = message.get("more_body", False)
            status, kind, text = ANSWERS[self.kind]
            if text is None:
                error = (
                    StoreUnavailable().to_error()
                    if self.kind == "store"
                    else {"code": -32603, "message": "boom"}
                )
                text = json.dumps({"jsonrpc": "2.0", "id": json.loads(body)["id"], "error": error}).encode()
            await send(
                {
                    "type": "http.response.start",
                    "status": status,
                    "headers": [(b"content-type", kind.encode())]
                    + ([(b"retry-after", b"1")] if self.kind == "busy" else []),
                }
            )
            await send({"type": "http.response.body", "body": text})

        return asgi


def build() -> Server:
    app = Server("outage", task_poll=0.02)

    @app.tool(task="optional")
    async def deploy(ctx: Context) -> str:
        """Deploys, as a task."""
        await ctx.start_task("deploying")
        return "deployed"

    @app.tool(task="optional")
    async def confirm(ctx: Context) -> str:
        """Asks, as a task, whether to deploy."""
        await ctx.start_task("asking")
        answer = await ctx.elicit("Deploy?", Form(go=Boolean()), key="go")
        return "deployed" if answer.accepted else "kept"

    return app


@asynccontextmanager
async def serving(outage: Outage, limits: RoundLimits, answerer: Any = None) -> AsyncIterator[Client]:
    async with (
        uvicorn_server(outage.wrap(StreamableHTTP(build()))) as running,
        connect_http(
            running.url, answerer=answerer, tasks=True, limits=limits, versions=["2026-07-28"]
        ) as client,
    ):
        yield client


@pytest.mark.parametrize("kind", ["store", "proxy"])
async def test_a_task_polled_through_a_brief_outage_completes(
    kind: str, caplog: pytest.LogCaptureFixture
) -> None:
    outage = Outage(kind, 3)
    caplog.set_level(logging.INFO, "mcp_elicit.client")
    async with serving(outage, RoundLimits()) as client:
        out = await asyncio.wait_for(client.call_tool("deploy"), 30)
    assert out["content"][0]["text"] == "deployed"
    assert outage.hits == 3 and outage.left == 0
    retries = [r for r in caplog.records if "sent again" in r.getMessage()]
    assert len(retries) == 3 and all(r.levelno == logging.INFO for r in retries)


@pytest.mark.parametrize("kind", ["store", "proxy"])
async def test_an_outage_past_the_bound_fails_the_call_naming_it(kind: str) -> None:
    outage = Outage(kind, 10**6)
    async with serving(outage, RoundLimits(outage_wait=1.0)) as client:
        with pytest.raises(MCPElicitError) as raised:
            await asyncio.wait_for(client.call_tool("deploy"), 30)
    assert outage.hits >= 2  # polled again before it gave up
    message = str(raised.value)
    assert "unavailable for" in message and "given up" in message, message
    if kind == "store":
        assert isinstance(raised.value, InternalError) and raised.value.code == -32603
        assert "cannot reach its storage" in message
    else:
        assert isinstance(raised.value, TransportError) and "HTTP 502" in message


async def test_another_error_fails_the_call_at_once() -> None:
    outage = Outage("broken", 10**6)
    async with serving(outage, RoundLimits()) as client:
        with pytest.raises(ProtocolError, match="boom") as raised:
            await asyncio.wait_for(client.call_tool("deploy"), 30)
    assert outage.hits == 1 and raised.value.code == -32603


class Yes:
    """Says yes, once."""

    modes = frozenset({"form"})

    def __init__(self) -> None:
        self.asked = 0

    async def elicit(self, request: ElicitationRequest) -> ElicitAnswer:
        self.asked += 1
        return ElicitAnswer.accept(go=True)

    async def url_done(self, request: ElicitationRequest) -> None:
        raise AssertionError("no URL step here")


@pytest.mark.parametrize("kind", ["store", "proxy"])
async def test_the_answers_of_a_task_are_sent_again_through_a_brief_outage(kind: str) -> None:
    """``tasks/update`` answered by the passing outage: the person's answers are not lost
    (nor the task cancelled); they go again once the server is back."""
    outage = Outage(kind, 2, "tasks/update")
    person = Yes()
    async with serving(outage, RoundLimits(), person) as client:
        out = await asyncio.wait_for(client.call_tool("confirm"), 30)
    assert out["content"][0]["text"] == "deployed"
    assert outage.hits == 2 and person.asked == 1


async def test_a_retry_after_is_not_said_to_stop_the_polls_it_does_not_stop(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """A 503 with ``Retry-After`` (no JSON-RPC in it) is a passing outage: the poll goes
    again, and what is said of it does not claim that nothing is retried."""
    outage = Outage("busy", 2)
    caplog.set_level(logging.INFO, "mcp_elicit.client")
    async with serving(outage, RoundLimits()) as client:
        out = await asyncio.wait_for(client.call_tool("deploy"), 30)
    assert out["content"][0]["text"] == "deployed"
    retries = [r.getMessage() for r in caplog.records if "sent again" in r.getMessage()]
    assert len(retries) == 2 and all("Retry-After: 1" in m for m in retries), retries
    assert not any("not retried" in m for m in retries), retries
