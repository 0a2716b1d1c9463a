"""The client against a hostile server process (``hostile_server.py`` over stdio, raw JSON):
what it refuses, how it stops, and that what it sent still fits the revision's schema."""

from __future__ import annotations

import os
import sys
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from pathlib import Path

import pytest

from client.recorder import Recorder
from mcp_elicit.client import Client, Scripted
from mcp_elicit.client.answerers import Answerer
from mcp_elicit.errors import ProtocolViolation
from mcp_elicit.transports.stdio_client import StdioTransport

from support.wire import WireChecker

pytestmark = pytest.mark.anyio

SERVER = Path(__file__).with_name("hostile_server.py")
NAME = [{"fields": ["name"], "content": {"name": "Ann"}}]


@asynccontextmanager
async def hostile(
    scenario: Sequence[str], revision: str, answerer: Answerer | None = None
) -> AsyncIterator[tuple[Client, Recorder]]:
    """A client at ``revision`` connected to the hostile server playing ``scenario``; on the
    way out, every message the client sent must fit the revision's schema."""
    recorder = Recorder()
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    transport = StdioTransport([sys.executable, str(SERVER), *scenario], env=env, trace=recorder)
    answerer = answerer if answerer is not None else Scripted.from_script(NAME)
    async with Client(transport, answerer=answerer, versions=[revision], timeout=10) as client:
        assert client.revision == revision
        yield client, recorder
    assert recorder.check(WireChecker.load(revision)) > 0


def sizes(recorder: Recorder, method: str) -> list[int]:
    return [len(str(m)) for m in recorder.sent if m.get("method") == method]


async def test_a_huge_request_state_is_refused_not_echoed() -> None:
    async with hostile(["huge-state"], "2026-07-28") as (client, recorder):
        with pytest.raises(ProtocolViolation, match=r"requestState of 8000000 bytes.*at most 1048576"):
            await client.call_tool("t")
    assert len(sizes(recorder, "tools/call")) == 1  # never sent back


async def test_a_request_state_within_the_limit_is_echoed() -> None:
    async with hostile(["huge-state", "100000"], "2026-07-28") as (client, _):
        out = await client.call_tool("t")
    assert out["content"][0]["text"] == "100000"
