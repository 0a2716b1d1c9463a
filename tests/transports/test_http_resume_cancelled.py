"""A 2025-11-25 request stream whose request the client cancelled (``notifications/cancelled``)
after the stream began, over real HTTP (uvicorn on 127.0.0.1): a client that comes back
with ``Last-Event-ID`` (the TypeScript SDK does so for any stream that ended with a primed
id and no response) is told there is nothing to resume."""

from __future__ import annotations

import asyncio
from typing import Any

import httpx
import pytest

from mcp_elicit import Context
from mcp_elicit.transports.http_server import StreamableHTTP
from mcp_elicit.wire.sse import EventDecoder

from support.procs import uvicorn_server
from support.sessions import ask_name_server, open_session
from support.wire import WireChecker

pytestmark = pytest.mark.anyio


async def test_a_stream_the_client_cancelled_is_not_resumed(
    wire_2025: WireChecker,
) -> None:
    """The server ended the stream (priming event only), the client cancelled the request,
    then came back with the priming event's id. Before: each resume was answered with a
    fresh priming event and nothing else, and put off forgetting the stream, so such a
    client came back every second for as long as it ran. Now the stream is forgotten as
    the request ends: the resume is refused (400), and the client stops after its retries."""
    app = ask_name_server("resume-cancelled")
    began = asyncio.Event()

    @app.tool()
    async def slow(ctx: Context) -> str:
        await ctx.close_stream()
        began.set()
        await asyncio.sleep(30)
        return "too late"

    call: dict[str, Any] = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "slow"}}
    async with uvicorn_server(StreamableHTTP(app, resume_within=5.0, keepalive=None)) as running:
        async with httpx.AsyncClient(timeout=10) as http:
            headers = await open_session(http, running.url, wire_2025)
            response = await http.post(running.url, json=call, headers=headers)
            assert EventDecoder().feed(response.content) == []  # the priming event only: no message
            assert _ids(response.content), response.content
            priming = _ids(response.content)[-1]
            async with asyncio.timeout(5):
                await began.wait()
            cancel = {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 1}}
            assert (await http.post(running.url, json=cancel, headers=headers)).status_code == 202
            for _ in range(50):  # until the cancellation has ended the stream (bounded)
                resumed = await http.get(running.url, headers={**headers, "last-event-id": priming})
                if resumed.status_code != 200 or resumed.content.count(b"id: ") != 1:
                    break  # refused, or a resume of the running request: what it got is checked below
                await asyncio.sleep(0.1)  # before: a fresh priming event each time, for ever
            pong = await http.post(
                running.url, json={"jsonrpc": "2.0", "id": 2, "method": "ping"}, headers=headers
            )
    assert pong.json()["result"] == {}  # the session goes on
    assert resumed.status_code == 400
    wire_2025.response("ping", resumed.json())
    assert "no stream of this session to resume" in resumed.json()["error"]["message"]


def _ids(raw: bytes) -> list[str]:
    """The event ids in an event stream's raw bytes (priming events have no data)."""
    return [line[4:].decode() for line in raw.split(b"\n") if line.startswith(b"id: ")]
