"""A close or a call that its caller cancels (``asyncio.timeout``, a ``TaskGroup``) is
cancelled, though it was waiting for a task of its own to stop at that moment: the wait
swallows the task's own cancellation, never the caller's (``client/reaping.py``)."""

from __future__ import annotations

import asyncio
import sys
import textwrap
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

from client.fakes import FakeTransport, result
from mcp_elicit.client import Client, ElicitAnswer
from mcp_elicit.client.reaping import reap
from mcp_elicit.core.client_inputs import ElicitationRequest
from mcp_elicit.transports.http_client import HttpTransport
from mcp_elicit.transports.stdio_client import StdioTransport
from mcp_elicit.wire.jsonrpc import Message, Response

from support.handshake import FORM, V2025, elicit, init
from support.procs import uvicorn_server
from support.waiting import eventually

pytestmark = pytest.mark.anyio


async def _slow_to_stop() -> None:
    """A task that takes a while to stop once cancelled (a terminal put back in order)."""
    try:
        await asyncio.sleep(30)
    finally:
        await asyncio.sleep(0.5)


async def test_a_caller_cancelled_while_a_child_stops_is_cancelled() -> None:
    child = asyncio.ensure_future(_slow_to_stop())
    await asyncio.sleep(0)
    with pytest.raises(TimeoutError):
        async with asyncio.timeout(0.1):
            await reap(child)
    assert child.done()  # stopped before the cancellation went on


async def test_a_cancellation_already_under_way_lets_the_cleanup_go_on() -> None:
    """A close in the ``finally`` of a cancelled call reaps its children and goes on with
    the rest of the cleanup; the cancellation then goes on from where it was caught."""
    steps: list[str] = []

    async def call() -> None:
        child = asyncio.ensure_future(asyncio.sleep(30))
        try:
            await asyncio.sleep(30)
        finally:
            await reap(child)
            steps.append("cleaned up")

    task = asyncio.ensure_future(call())
    await asyncio.sleep(0.01)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert steps == ["cleaned up"]


async def test_a_childs_failure_is_swallowed_unless_asked_for() -> None:
    async def failing() -> None:
        raise ValueError("boom")

    child = asyncio.ensure_future(failing())
    await asyncio.sleep(0)
    await reap(child)
    child = asyncio.ensure_future(failing())
    await asyncio.sleep(0)
    with pytest.raises(ValueError, match="boom"):
        await reap(child, failures=True)


async def _nothing(message: Message) -> None:
    pass


class _SlowToStop:
    modes = frozenset({"form"})

    def __init__(self) -> None:
        self.asked = asyncio.Event()

    async def elicit(self, request: ElicitationRequest) -> ElicitAnswer:
        self.asked.set()
        await _slow_to_stop()
        return ElicitAnswer("decline")


async def test_a_close_cut_short_while_a_question_is_withdrawn_is_cancelled() -> None:
    """2025-11-25: closing withdraws the question the person is on; a close that its caller
    gives up meanwhile raises, where it completed once the answerer had stopped."""

    def serve(message: dict[str, Any], headers: dict[str, str]) -> list[Any]:
        return [init(message)] if message["method"] == "initialize" else [result(message, {})]

    transport = FakeTransport(serve, headers={"mcp-session-id": "S"})
    answerer = _SlowToStop()
    client = Client(transport, versions=V2025, answerer=answerer)
    await client.connect()
    pushing = asyncio.ensure_future(
        transport.push(elicit("q-1", {"message": "Name?", "requestedSchema": FORM}))
    )
    await asyncio.wait_for(answerer.asked.wait(), 5)
    with pytest.raises(TimeoutError):
        async with asyncio.timeout(0.1):
            await client.aclose()
    await pushing


async def test_a_close_cut_short_while_a_response_stream_drains_is_cancelled() -> None:
    """HTTP: an exchange whose response is in is given a moment to end on its own; a
    caller who gives up the close meanwhile sees it cancelled."""

    async def kept_open(scope: Any, receive: Any, send: Any) -> None:
        assert scope["type"] == "http"
        await send(
            {
                "type": "http.response.start",
                "status": 200,
                "headers": [(b"content-type", b"text/event-stream")],
            }
        )
        body = b'data: {"jsonrpc": "2.0", "id": 1, "result": {}}\n\n'
        await send({"type": "http.response.body", "body": body, "more_body": True})
        await asyncio.sleep(30)

    async with uvicorn_server(kept_open) as server:
        transport = HttpTransport(server.url)
        await transport.open(_nothing)
        try:
            exchange = await transport.exchange({"jsonrpc": "2.0", "id": 1, "method": "ping"}, {})
            assert isinstance(await exchange.receive(), Response)
            with pytest.raises(TimeoutError):
                async with asyncio.timeout(0.05):
                    await exchange.aclose()
        finally:
            await transport.aclose()


async def test_a_stdio_close_cut_short_while_its_reader_stops_is_cancelled(tmp_path: Path) -> None:
    """stdio: the reader is in the client's notification callback, which takes a while to
    stop; a close given up meanwhile is cancelled (the process is still stopped)."""
    script = tmp_path / "notifying.py"
    script.write_text(
        textwrap.dedent(
            """
            import json, sys
            for line in sys.stdin:
                msg = json.loads(line)
                if msg.get("method") == "initialize":
                    result = {"protocolVersion": "2025-11-25", "capabilities": {},
                              "serverInfo": {"name": "n", "version": "1"}}
                    print(json.dumps({"jsonrpc": "2.0", "id": msg["id"], "result": result}), flush=True)
                elif msg.get("method") == "notifications/initialized":
                    note = {"jsonrpc": "2.0", "method": "notifications/tools/list_changed"}
                    print(json.dumps(note), flush=True)
            """
        )
    )
    heard = asyncio.Event()

    async def on_notification(method: str, params: Mapping[str, Any]) -> None:
        heard.set()
        await _slow_to_stop()

    transport = StdioTransport([sys.executable, str(script)])
    client = Client(transport, versions=V2025, on_notification=on_notification)
    await client.connect()
    await asyncio.wait_for(heard.wait(), 10)
    with pytest.raises(TimeoutError):
        async with asyncio.timeout(0.3):
            await client.aclose()
    await eventually(lambda: transport._proc is not None and transport._proc.returncode is not None, "exit")
