"""The in-memory transport and the server's last line of defence: a result that cannot be
encoded, or a failure the server lets escape, still ends the request with an answer
(a JSON-RPC error, or the end of the exchange), never a client waiting for ever."""

from __future__ import annotations

import asyncio
import logging
from typing import Any

import pytest

from mcp_elicit import Server
from mcp_elicit.errors import ProtocolError, TransportError
from mcp_elicit.log_labels import session_label
from mcp_elicit.transports.memory import MemoryTransport, connect_memory

pytestmark = pytest.mark.anyio


def build() -> Server:
    app = Server("breaks")

    @app.tool()
    async def hello() -> str:
        return "hello"

    return app


@pytest.mark.parametrize("version", ["2026-07-28", "2025-11-25"])
async def test_a_result_json_cannot_carry_is_an_internal_error(
    version: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    server = build()
    finish = server.core.finish

    def corrupt(method: str, result: dict[str, Any], **kw: Any) -> dict[str, Any]:
        out = finish(method, result, **kw)
        if method == "tools/call":
            out["_meta"] = {"not json": {1, 2}}
        return out

    async with connect_memory(server, versions=[version]) as client:
        monkeypatch.setattr(server.core, "finish", corrupt)
        with pytest.raises(ProtocolError) as caught:
            await asyncio.wait_for(client.call_tool("hello"), 10)
        assert caught.value.to_error() == {"code": -32603, "message": "Internal error"}
        monkeypatch.undo()
        assert (await client.call_tool("hello"))["content"][0]["text"] == "hello"


@pytest.mark.parametrize("http", [False, True], ids=["stdio-like", "http-like"])
async def test_a_failure_the_server_lets_escape_ends_the_exchange(
    http: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    server = build()

    async def escapes(*args: Any, **kw: Any) -> Any:
        raise RuntimeError("a bug in the server")

    async with connect_memory(server, versions=["2026-07-28"], http=http) as client:
        monkeypatch.setattr(server, "respond", escapes)
        with pytest.raises(TransportError) as caught:
            await asyncio.wait_for(client.call_tool("hello"), 10)
        said = str(caught.value)
        assert "the server failed: a bug in the server" in said if http else "got no response" in said


@pytest.mark.parametrize("version", ["2026-07-28", "2025-11-25"])
async def test_a_response_to_no_question_is_a_debug_line_as_on_the_other_transports(
    version: str, caplog: pytest.LogCaptureFixture
) -> None:
    """A response the client sends that answers no question of the server's is dropped, and
    the debug log says so as stdio's and HTTP's do (``log_labels.log_stray_response``):
    the transport, the session (2025-11-25), the request it names; never its content."""
    async with connect_memory(build(), versions=[version]) as client:
        transport = client.transport
        assert isinstance(transport, MemoryTransport)
        with caplog.at_level(logging.DEBUG, logger="mcp_elicit.transports.memory"):
            await transport.send(
                {"jsonrpc": "2.0", "id": "no-such-question", "result": {"t": "SECRET-1"}}, {}
            )
            await transport.send(
                {"jsonrpc": "2.0", "id": 7, "error": {"code": -1, "message": "SECRET-2"}}, {}
            )
        session = transport.session
    where = "memory" if session is None else f"memory, session {session_label(session.id)}"
    assert (version == "2025-11-25") == (session is not None)
    lines = [r.getMessage() for r in caplog.records if r.name == "mcp_elicit.transports.memory"]
    assert lines == [
        f"{where}: a response to request 'no-such-question', which no question of the server's waits for; dropped",
        f"{where}: an error response to request 7, which no question of the server's waits for; dropped",
    ]
    assert "SECRET" not in caplog.text
