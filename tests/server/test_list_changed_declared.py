"""A 2025-11-25 session hears ``notifications/<kind>/list_changed`` only for the kinds
its ``initialize`` result declared: a client may only rely on what was negotiated, and a
server sends nothing for a capability it never declared to it. A tool registered on a
server that offered a session no tools is not announced to that session; a prompt
registered on the same server is.

Real servers over stdio (``mcp-elicit serve``), each message checked against the schema.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from support.procs import stdio_process
from support.wire import WireChecker

pytestmark = pytest.mark.anyio
SERVER = Path(__file__).with_name("list_growing_server.py")


def initialize(rid: int) -> dict[str, Any]:
    return {
        "jsonrpc": "2.0",
        "id": rid,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-11-25",
            "capabilities": {},
            "clientInfo": {"name": "t", "version": "1"},
        },
    }


async def test_a_kind_never_declared_to_the_session_is_not_announced(
    tmp_path: Path, wire_2025: WireChecker
) -> None:
    async with stdio_process(SERVER, log_dir=tmp_path) as stdio:
        await stdio.send(initialize(0))
        opened, _ = await stdio.until(0)
        assert set(opened["result"]["capabilities"]) == {"logging", "prompts", "completions"}
        await stdio.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        await stdio.send({"jsonrpc": "2.0", "id": 1, "method": "prompts/get", "params": {"name": "grow"}})
        await stdio.until(1)
        heard: list[str] = []
        while "notifications/prompts/list_changed" not in heard:  # queued after the tool's, if any
            message = await stdio.recv()
            wire_2025.notification(message)
            heard.append(message["method"])
        assert heard == ["notifications/prompts/list_changed"]
        await stdio.send(
            {"jsonrpc": "2.0", "id": 2, "method": "tools/list"}
        )  # the tool is served all the same
        listed, _ = await stdio.until(2)
        assert [t["name"] for t in listed["result"]["tools"]] == ["added"]
