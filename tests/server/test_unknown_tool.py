"""A ``tools/call`` naming a tool the server does not have is a protocol error, -32602
"Unknown tool: NAME", at every revision (the specifications of 2025-11-25 and 2026-07-28,
"Error Handling": unknown tools are protocol errors, not tool execution errors), over
stdio and over HTTP. It names a few of the tools the server has (bounded), and a name
too long to repeat is cut.

Real servers (``mcp-elicit serve`` over stdio and over HTTP on 127.0.0.1), the exact
messages, each checked against the revision's schema (2025-06-18 has none here: its
error is one as 2025-11-25 defines it).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx
import pytest

from mcp_elicit import Server

from support.http import McpHttp, meta
from support.memory import MemoryClient
from support.procs import http_process, stdio_process
from support.sessions import open_session
from support.wire import WireChecker

pytestmark = pytest.mark.anyio
SERVER = Path(__file__).with_name("old_revisions_server.py")
UNKNOWN = {"code": -32602, "message": "Unknown tool: nope (its tools: can_ask, order, pay, toppings)"}


def call(rid: int, name: str, *, modern: bool = False) -> dict[str, Any]:
    params: dict[str, Any] = {"name": name, "arguments": {}}
    if modern:
        params["_meta"] = meta()
    return {"jsonrpc": "2.0", "id": rid, "method": "tools/call", "params": params}


def initialize(rid: int, version: str) -> dict[str, Any]:
    return {
        "jsonrpc": "2.0",
        "id": rid,
        "method": "initialize",
        "params": {
            "protocolVersion": version,
            "capabilities": {},
            "clientInfo": {"name": "t", "version": "1"},
        },
    }


async def test_over_stdio_at_every_revision(
    tmp_path: Path, wire: WireChecker, wire_2025: WireChecker
) -> None:
    async with stdio_process(SERVER, log_dir=tmp_path) as stdio:
        # 2026-07-28 needs no session: the request carries its revision
        await stdio.send(call(1, "nope", modern=True))
        modern, before = await stdio.until(1)
        assert before == []
        assert modern == {"jsonrpc": "2.0", "id": 1, "error": UNKNOWN}
        wire.response("tools/call", modern)
        await stdio.send(call(2, "can_ask", modern=True))
        assert "isError" not in (await stdio.until(2))[0]["result"]
    for version in ("2025-11-25", "2025-06-18"):
        async with stdio_process(SERVER, log_dir=tmp_path) as stdio:
            await stdio.send(initialize(0, version))
            await stdio.until(0)
            await stdio.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
            await stdio.send(call(1, "nope"))
            refused, before = await stdio.until(1)
            assert before == []
            assert refused == {"jsonrpc": "2.0", "id": 1, "error": UNKNOWN}, version
            wire_2025.response("tools/call", refused)
            await stdio.send(call(2, "can_ask"))  # the session goes on
            assert (await stdio.until(2))[0]["result"]["content"][0]["text"] == "form=False url=False"


async def test_over_http_at_every_revision(tmp_path: Path, wire: WireChecker, wire_2025: WireChecker) -> None:
    with http_process(SERVER, log_dir=tmp_path) as running:
        async with httpx.AsyncClient(timeout=10) as http:
            reply = await McpHttp(http, running.url, wire).call("nope", {})
            assert reply.status == 200
            assert reply.message == {"jsonrpc": "2.0", "id": reply.message["id"], "error": UNKNOWN}
            for version in ("2025-11-25", "2025-06-18"):
                headers = await open_session(http, running.url, wire_2025, version=version, capabilities={})
                answer = await http.post(running.url, json=call(1, "nope"), headers=headers)
                assert answer.status_code == 200
                refused = answer.json()
                assert refused == {"jsonrpc": "2.0", "id": 1, "error": UNKNOWN}, version
                wire_2025.response("tools/call", refused)
        assert "Traceback" not in running.stderr(), running.stderr()


async def test_the_message_is_bounded(wire: WireChecker) -> None:
    """Many tools: five named and how many more; a huge name: its start and its length."""
    app = Server("many")
    for n in range(30):
        app.tool(name=f"tool_{n:02d}")(lambda: "x")
    client = MemoryClient(app, checker=wire)
    error = (await client.request("tools/call", {"name": "x" * 100_000}))["error"]
    assert error["code"] == -32602
    assert error["message"] == (
        f"Unknown tool: {'x' * 200}… (100000 characters) "
        "(its tools: tool_00, tool_01, tool_02, tool_03, tool_04 and 25 more)"
    )


async def test_the_name_is_repeated_inert(wire: WireChecker) -> None:
    """The caller's name goes back in a message a client prints: a control character, an
    escape or a line break in it is written as Python writes it (``\\x1b``), never as is."""
    app = Server("inert")
    app.tool(name="order")(lambda: "x")
    client = MemoryClient(app, checker=wire)
    error = (await client.request("tools/call", {"name": "pay\x1b[2J\r\nforged line\u202e"}))["error"]
    assert error == {
        "code": -32602,
        "message": "Unknown tool: pay\\x1b[2J\\r\\nforged line\\u202e (its tools: order)",
    }
