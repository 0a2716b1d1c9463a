"""The client connected to the hostile server process (``hostile_server.py`` over stdio,
raw JSON) playing one scenario, for the tests of what the client refuses."""

from __future__ import annotations

import os
import sys
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from pathlib import Path

from client.recorder import Recorder
from mcp_elicit.client import Client, Scripted
from mcp_elicit.client.answerers import Answerer
from mcp_elicit.core.rounds import RoundLimits
from mcp_elicit.transports.stdio_client import StdioTransport

from support.wire import WireChecker

__all__ = ["NAME", "SERVER", "hostile"]

SERVER = Path(__file__).with_name("hostile_server.py")
NAME = [{"fields": ["name"], "content": {"name": "Ann"}}]


@asynccontextmanager
async def hostile(
    scenario: Sequence[str],
    revision: str,
    answerer: Answerer | None = None,
    limits: RoundLimits | None = None,
) -> AsyncIterator[tuple[Client, Recorder]]:
    """A client at ``revision`` connected to the hostile server playing ``scenario``; on the
    way out, every message the client sent must fit the revision's schema."""
    recorder = Recorder()
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    transport = StdioTransport([sys.executable, str(SERVER), *scenario], env=env, trace=recorder)
    answerer = answerer if answerer is not None else Scripted.from_script(NAME)
    async with Client(transport, answerer=answerer, versions=[revision], timeout=10, limits=limits) as client:
        assert client.revision == revision
        yield client, recorder
    assert recorder.check(WireChecker.load(revision)) > 0
