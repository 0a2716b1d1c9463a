"""The stdio client and answers that come after their request was given up (Ctrl-C while
``initialize`` was in flight, a call abandoned): JSON-RPC says the side that gave a request
up ignores its answer, so it is dropped quietly; an answer to an id never sent is still
warned about."""

from __future__ import annotations

import asyncio
import logging
import sys
from typing import Any

import pytest

from mcp_elicit.log_labels import request_where
from mcp_elicit.transports import stdio_exchange
from mcp_elicit.transports.stdio_client import StdioTransport
from mcp_elicit.wire import jsonrpc

pytestmark = pytest.mark.anyio

# Reads two lines (a request, then a go-ahead), then answers the request's id, then an id
# nobody sent; then waits for its input to close.
LATE_SERVER = r"""
import json, sys
request = json.loads(sys.stdin.readline())
sys.stdin.readline()
for rid in (request["id"], 99):
    print(json.dumps({"jsonrpc": "2.0", "id": rid, "result": {}}), flush=True)
sys.stdin.read()
"""


async def test_an_answer_to_an_abandoned_request_is_dropped_without_a_warning(
    caplog: pytest.LogCaptureFixture,
) -> None:
    received: list[Any] = []
    last = asyncio.Event()

    def trace(direction: str, message: Any) -> None:
        if direction == "receive":
            received.append(message["id"])
            if message["id"] == 99:
                last.set()

    async def unsolicited(message: jsonrpc.Message) -> None:
        raise AssertionError(f"nothing unsolicited was expected: {message}")

    transport = StdioTransport([sys.executable, "-c", LATE_SERVER], trace=trace)
    caplog.set_level(logging.DEBUG, logger="mcp_elicit.stdio_client")
    await transport.open(unsolicited)
    try:
        exchange = await transport.exchange({"jsonrpc": "2.0", "id": 1, "method": "ping"}, {})
        await exchange.aclose()  # given up before its answer came
        await transport.send({"jsonrpc": "2.0", "method": "notifications/go"}, {})
        async with asyncio.timeout(20):
            await last.wait()
    finally:
        await transport.aclose()
    assert received == [1, 99]
    warnings = [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING]
    assert len(warnings) == 1, warnings
    assert "unknown request 99" in warnings[0]


@pytest.mark.parametrize("level", [logging.INFO, logging.DEBUG], ids=["info", "debug"])
async def test_the_dropped_answer_s_line_is_built_only_when_debug_is_on(
    level: int, caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The debug line of an answer dropped (its request given up) names the request
    (``request_where``); with debug off, nothing of it is built."""
    named: list[object] = []

    def where(rid: object, session: str | None = None) -> str:
        named.append(rid)
        return request_where(rid, session)

    monkeypatch.setattr(stdio_exchange, "request_where", where)
    last = asyncio.Event()

    def trace(direction: str, message: Any) -> None:
        if direction == "receive" and message["id"] == 99:
            last.set()

    async def unsolicited(message: jsonrpc.Message) -> None:
        raise AssertionError(f"nothing unsolicited was expected: {message}")

    transport = StdioTransport([sys.executable, "-c", LATE_SERVER], trace=trace)
    caplog.set_level(level, logger="mcp_elicit.stdio_client")
    await transport.open(unsolicited)
    try:
        exchange = await transport.exchange({"jsonrpc": "2.0", "id": 1, "method": "ping"}, {})
        await exchange.aclose()
        await transport.send({"jsonrpc": "2.0", "method": "notifications/go"}, {})
        async with asyncio.timeout(20):
            await last.wait()
    finally:
        await transport.aclose()
    dropped = [r.getMessage() for r in caplog.records if "given up before; dropped" in r.getMessage()]
    if level == logging.DEBUG:
        assert named == [1] and len(dropped) == 1 and "answered request 1," in dropped[0], (named, dropped)
    else:
        assert named == [] and dropped == [], (named, dropped)
