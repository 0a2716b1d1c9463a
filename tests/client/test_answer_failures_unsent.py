"""A call whose response has come does not wait without end to tell the server -32603.

At 2025-11-25 a call that has its response waits for the -32603 of an answer that failed
during it to be sent before it raises the answerer's exception, so that the server is told
first. Over stdio that send waits until the server has taken what is queued on its stdin:
a server that has stopped reading it (busy with something else, while it still writes)
held the call, its result in hand, for as long as it did not read. The wait is now
bounded; the -32603 stays queued and reaches the server once it reads again.

The server here is a real process over stdio that stops reading its stdin once asked the
call; a second call's arguments (1 MiB) fill the pipe, so that the -32603 cannot be taken.
It answers the call only once the answerer has failed (SIGUSR1), so that order is certain.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import signal
import sys
import textwrap
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal

import pytest

from client.recorder import Recorder
from client.test_answer_failures import TYPED
from mcp_elicit.client import Client
from mcp_elicit.client.answerers import ElicitAnswer
from mcp_elicit.core.client_inputs import ElicitationRequest
from mcp_elicit.transports.stdio_client import StdioTransport

from support.waiting import hang_guard

pytestmark = [
    pytest.mark.anyio,
    pytest.mark.skipif(sys.platform == "win32", reason="the server waits for SIGUSR1"),
]


#: Answers initialize; asked the call, it asks its question (its pid in the message),
#: then reads nothing more: it answers the call at the first SIGUSR1 and waits for ever.
SERVER = textwrap.dedent(
    """
    import json, os, signal, sys

    signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGUSR1})

    def send(message):
        sys.stdout.write(json.dumps(message) + "\\n")
        sys.stdout.flush()

    for line in sys.stdin:
        message = json.loads(line)
        method = message.get("method")
        if method == "initialize":
            send({"jsonrpc": "2.0", "id": message["id"], "result": {
                "protocolVersion": "2025-11-25",
                "capabilities": {"tools": {}},
                "serverInfo": {"name": "stops-reading", "version": "1"},
            }})
        elif method == "tools/call":
            send({"jsonrpc": "2.0", "id": "q-1", "method": "elicitation/create", "params": {
                "mode": "form",
                "message": f"Your age? {os.getpid()}",
                "requestedSchema": {"type": "object", "properties": {"age": {"type": "string"}}},
            }})
            signal.sigwait({signal.SIGUSR1})
            send({"jsonrpc": "2.0", "id": message["id"], "result": {
                "content": [{"type": "text", "text": "done"}],
            }})
            while True:
                signal.sigwait({signal.SIGUSR1})
    """
)


class FillsThenFails:
    """Asked, it starts a second call whose arguments fill the server's stdin, lets the
    server answer the first call, and fails parsing what the person typed."""

    modes = frozenset({"form"})

    def __init__(self) -> None:
        self.client: Client | None = None
        self.filled = asyncio.Event()  # the second call is queued on the server's stdin
        self.filling: asyncio.Task[Any] | None = None

    def trace(self, recorder: Recorder) -> Any:
        def traced(direction: Literal["send", "receive"], message: Mapping[str, Any]) -> None:
            recorder(direction, message)
            params = message.get("params") or {}
            if direction == "send" and "pad" in (params.get("arguments") or {}):
                self.filled.set()  # written right after it is traced, in the same step

        return traced

    async def elicit(self, request: ElicitationRequest) -> ElicitAnswer:
        assert self.client is not None
        pid = int(request.message.rsplit(" ", 1)[1])
        self.filling = asyncio.ensure_future(self.client.call_tool("ask", {"pad": "x" * (1 << 20)}))
        await self.filled.wait()
        os.kill(pid, signal.SIGUSR1)  # the server answers the call: the result comes first
        return ElicitAnswer.accept({"age": int(TYPED)})  # ValueError quoting the text

    async def url_done(self, request: ElicitationRequest) -> None:
        return None


async def test_a_call_with_its_result_is_not_held_by_a_server_that_stopped_reading(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    script = tmp_path / "stops_reading.py"
    script.write_text(SERVER, encoding="utf-8")
    answerer = FillsThenFails()
    recorder = Recorder()
    transport = StdioTransport(
        [sys.executable, str(script)], stop_timeout=0.5, trace=answerer.trace(recorder)
    )
    async with Client(transport, answerer=answerer, versions=["2025-11-25"], timeout=30) as client:
        answerer.client = client
        try:
            async with hang_guard("the call to raise the answerer's exception", 20.0):
                with (
                    caplog.at_level(logging.WARNING, "mcp_elicit"),
                    pytest.raises(ValueError, match="invalid literal for int"),
                ):
                    await client.call_tool("ask")
        finally:
            if answerer.filling is not None:
                answerer.filling.cancel()
                with contextlib.suppress(BaseException):
                    await answerer.filling
    assert "has not taken, within 5 s, the -32603" in caplog.text
    # the -32603 was queued for the server all the same, without the text
    (error,) = [m["error"] for m in recorder.sent if "error" in m]
    assert error["code"] == -32603
    assert TYPED not in str(recorder.sent)
