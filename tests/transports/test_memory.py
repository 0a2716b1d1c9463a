"""The in-memory transport and the server's last line of defence: a result that cannot be
encoded, or a failure the server lets escape, still ends the request with an answer
(a JSON-RPC error, or the end of the exchange), never a client waiting for ever."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from mcp_elicit import Server
from mcp_elicit.errors import ProtocolError, TransportError
from mcp_elicit.transports.memory import connect_memory

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
