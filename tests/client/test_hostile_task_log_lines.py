"""A server's error message about its task (a poll refused, a listen refused, a
cancellation refused) reaches the client's log lines cut, inert and with no URL's key: it
is the server's text, of any length and with any character."""

from __future__ import annotations

import asyncio
import logging
from typing import Any

import pytest

from client.fakes import FakeTransport, discover, error, result
from mcp_elicit.client import Client
from mcp_elicit.errors import ProtocolError

pytestmark = pytest.mark.anyio

SAID = "boom\r\nFAKE LINE \x1b[31m https://a.example/cb?token=SECRET " + "x" * 20_000


class RefusesAll:
    """A scripted 2026-07-28 server whose tool call becomes a task, and which then refuses
    every request about it with ``SAID``."""

    def __init__(self) -> None:
        self.methods: list[str] = []

    def __call__(self, message: dict[str, Any], headers: dict[str, str]) -> list[Any]:
        method = message["method"]
        self.methods.append(method)
        if method == "server/discover":
            return [discover(message)]
        if method == "tools/list":
            tools = [{"name": "t", "inputSchema": {"type": "object"}}]
            return [result(message, {"resultType": "complete", "tools": tools})]
        if method == "tools/call":
            task = {
                "taskId": "t-1",
                "createdAt": "2026-12-05T00:00:00Z",
                "lastUpdatedAt": "2026-12-05T00:00:00Z",
                "ttlMs": None,
                "pollIntervalMs": 0,
            }
            return [result(message, {"resultType": "task", "status": "working", **task})]
        return [error(message, -32000, SAID)]


async def test_a_servers_task_errors_are_cut_and_inert_in_the_log(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG, logger="mcp_elicit")
    server = RefusesAll()
    async with Client(FakeTransport(server), tasks=True, timeout=5) as client:
        with pytest.raises(ProtocolError):
            await asyncio.wait_for(client.call_tool("t"), 10)
    assert "tasks/cancel" in server.methods
    about = [r.getMessage() for r in caplog.records if "boom" in r.getMessage()]
    assert any("could not cancel task" in line for line in about), about
    for line in about:
        assert "\n" not in line and "\r" not in line and "\x1b" not in line, line
        assert len(line) < 2_000 and "SECRET" not in line, len(line)
