"""``cat`` as the server: it writes back every message it is sent. The client reads back its
own request (same id, same method) and says the program echoes its input and is not an
MCP server; it does not take the request for the server's own, refuse it, and read its
refusal, echoed, as the server's answer ("initialize came before the session was
initialized")."""

from __future__ import annotations

import asyncio
import shutil
import sys
from collections.abc import Awaitable, Callable
from typing import Any

import pytest
from cli.helpers import run

from mcp_elicit.errors import MCPElicitError
from mcp_elicit.transports.stdio_client import StdioTransport, connect_stdio
from mcp_elicit.wire import jsonrpc

pytestmark = pytest.mark.skipif(shutil.which("cat") is None, reason="needs cat")


@pytest.mark.anyio
@pytest.mark.parametrize("versions", [["2025-11-25"], ["2026-07-28"], ["2026-07-28", "2025-11-25"]])
async def test_a_program_that_echoes_its_input_is_said_not_to_be_a_server(versions: list[str]) -> None:
    with pytest.raises(MCPElicitError) as caught:
        async with connect_stdio(["cat"], versions=versions, timeout=5, probe_timeout=5):
            pass
    said = str(caught.value)
    assert "echoes what it is sent" in said and "not an MCP server" in said, said
    assert "before the session was initialized" not in said, said


@pytest.mark.parametrize("protocol", ["2025-11-25", "2026-07-28"])
def test_check_says_cat_is_not_a_server(capsys: pytest.CaptureFixture[str], protocol: str) -> None:
    result = run(capsys, "check", "--protocol", protocol, "--timeout", "5", "--", "cat")
    assert result.code == 3, result.err  # it never answered
    assert "echoes what it is sent" in result.err and "not an MCP server" in result.err, result.err
    assert "before the session was initialized" not in result.err, result.err


# A server that, asked ``ping`` (id 1), first pings the client with an id of its own that is
# 1 as well (each side numbers its own requests), waits for the client's answer, then answers.
PINGS_BACK = r"""
import json, sys
request = json.loads(sys.stdin.readline())
print(json.dumps({"jsonrpc": "2.0", "id": request["id"], "method": "ping"}), flush=True)
sys.stdin.readline()
print(json.dumps({"jsonrpc": "2.0", "id": request["id"], "result": {}}), flush=True)
sys.stdin.read()
"""


@pytest.mark.anyio
async def test_a_servers_own_ping_with_the_id_and_method_of_ours_is_no_echo() -> None:
    """Either side may send ``ping`` (and the tasks methods), each numbering its own ids: a
    server's ping that reads exactly like ours is the server's, answered, and ours still
    gets its answer."""
    asked: list[jsonrpc.Message] = []
    transport = StdioTransport([sys.executable, "-c", PINGS_BACK])

    async def unsolicited(message: jsonrpc.Message) -> None:
        asked.append(message)
        assert isinstance(message, jsonrpc.Request)
        await transport.send({"jsonrpc": "2.0", "id": message.id, "result": {}}, {})

    answer = await _answer_to(transport, {"jsonrpc": "2.0", "id": 1, "method": "ping"}, unsolicited)
    assert isinstance(answer, jsonrpc.Response), answer
    assert [(m.method, m.id) for m in asked if isinstance(m, jsonrpc.Request)] == [("ping", 1)]


@pytest.mark.anyio
async def test_a_servers_request_with_our_id_and_method_but_other_params_is_no_echo() -> None:
    """Only our own message read back whole is an echo: a request of the same id and
    method whose params differ is not ours (here a server that sends ``tools/call`` back,
    which no server should; it is handed on as the server's request, not called an echo)."""
    asked: list[jsonrpc.Message] = []
    script = PINGS_BACK.replace(
        '"method": "ping"', '"method": request["method"], "params": {"name": "other"}'
    )
    transport = StdioTransport([sys.executable, "-c", script])

    async def unsolicited(message: jsonrpc.Message) -> None:
        asked.append(message)
        await transport.send({"jsonrpc": "2.0", "id": 1, "error": {"code": -32601, "message": "no"}}, {})

    request = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "mine"}}
    answer = await _answer_to(transport, request, unsolicited)
    assert isinstance(answer, jsonrpc.Response), answer
    assert len(asked) == 1


async def _answer_to(
    transport: StdioTransport,
    request: dict[str, Any],
    unsolicited: Callable[[jsonrpc.Message], Awaitable[None]],
) -> object:
    """What the server (opened here, closed after) answers ``request``, its own messages
    meanwhile handed to ``unsolicited``."""
    await transport.open(unsolicited)
    try:
        exchange = await transport.exchange(request, {})
        async with asyncio.timeout(20):
            answer = await exchange.receive()
        await exchange.aclose()
    finally:
        await transport.aclose()
    return answer
