"""Errors a handler relays from another server, over stdio, in both eras of one process. At
2026-07-28 the codes that revision forbids or that are not about the client's request go
out in its own (``core.server.modern_error``); a 2025-11-25 session, whose revision defines
-32002 and -32042 and reserves no range, gets what the handler raised: its code, message
and data. Every message is checked against its revision's official schema."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from support.procs import StdioProcess, stdio_process
from support.wire import WireChecker

pytestmark = pytest.mark.anyio
RELAYING = Path(__file__).with_name("relaying_server.py")
META = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {},
}
ERRORS = [
    {"code": -32002, "message": "upstream: not found", "data": {"uri": "up://x", "server": "up"}},
    {"code": -32050, "message": "upstream: something of its own"},
    {"code": -32022, "message": "upstream: unsupported", "data": {"supported": ["a"], "requested": "b"}},
    {"code": -32001, "message": "upstream: legacy range"},
]


async def _relayed(
    server: StdioProcess, wire: WireChecker, rid: int, error: dict[str, Any], meta: Any
) -> Any:
    params: dict[str, Any] = {"name": "relay_error", "arguments": {"error": error}}
    if meta is not None:
        params["_meta"] = meta
    request = {"jsonrpc": "2.0", "id": rid, "method": "tools/call", "params": params}
    wire.request(request)
    await server.send(request)
    reply, _ = await server.until(rid)
    wire.response("tools/call", reply)
    return reply["error"]


@pytest.mark.parametrize("error", ERRORS, ids=[str(e["code"]) for e in ERRORS])
async def test_a_session_of_2025_11_25_gets_the_error_as_raised(
    tmp_path: Path, wire_2025: WireChecker, error: dict[str, Any]
) -> None:
    async with stdio_process(RELAYING, log_dir=tmp_path) as server:
        init = {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "initialize",
            "params": {
                "protocolVersion": "2025-11-25",
                "capabilities": {},
                "clientInfo": {"name": "old", "version": "1"},
            },
        }
        await server.send(init)
        await server.until(1)
        await server.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        assert await _relayed(server, wire_2025, 2, error, None) == error


async def test_the_same_process_answers_2026_07_28_in_its_codes(tmp_path: Path, wire: WireChecker) -> None:
    async with stdio_process(RELAYING, log_dir=tmp_path) as server:
        sent = [await _relayed(server, wire, rid, error, META) for rid, error in enumerate(ERRORS, start=1)]
        assert sent == [
            {**ERRORS[0], "code": -32602},
            {**ERRORS[1], "code": -32603},
            {**ERRORS[2], "code": -32603},
            ERRORS[3],
        ]
