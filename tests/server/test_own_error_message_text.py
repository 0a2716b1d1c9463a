"""A handler that raises a protocol error of its own (``InvalidParams(None)``,
``MethodNotFound(404)``) gave a message that is no string: it was sent as it was
(``"message": null``), an error response neither revision's schema takes (JSON-RPC's
message is a string), which a client then blames on the server. The code is the
handler's to choose and is kept; the message goes as text. At 2025-11-25 over stdio, and
at 2026-07-28 in memory, each answer checked against its revision's schema."""

from __future__ import annotations

from typing import Any

import pytest

from mcp_elicit import Context, Server
from mcp_elicit.errors import InvalidParams

from support.memory import MemoryClient
from support.stdio_pipes import stdio_session
from support.wire import WireChecker

pytestmark = pytest.mark.anyio

MESSAGES = [(None, "None"), (404, "404"), (["bad", "date"], "['bad', 'date']")]


def build(message: Any) -> Server:
    app = Server("own-errors")

    @app.tool()
    async def book(ctx: Context) -> str:
        raise InvalidParams(message)

    return app


@pytest.mark.parametrize(("message", "sent"), MESSAGES, ids=["none", "int", "list"])
async def test_the_message_goes_as_text_at_2025(wire_2025: WireChecker, message: Any, sent: str) -> None:
    async with stdio_session(build(message)) as pipes:
        pipes.write({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "book"}})
        (answer,) = await pipes.until(1)
    wire_2025.response("tools/call", answer)
    assert answer["error"] == {"code": -32602, "message": sent}, answer


@pytest.mark.parametrize(("message", "sent"), MESSAGES, ids=["none", "int", "list"])
async def test_the_message_goes_as_text_at_2026(wire: WireChecker, message: Any, sent: str) -> None:
    client = MemoryClient(build(message), checker=wire)  # checks every message it sees
    answer = await client.request("tools/call", {"name": "book"})
    wire.response("tools/call", answer)
    assert answer["error"]["code"] == -32602, answer
    assert answer["error"]["message"] == sent, answer


def test_a_string_message_is_kept_as_it_is() -> None:
    assert InvalidParams("Invalid params: no date").to_error() == {
        "code": -32602,
        "message": "Invalid params: no date",
    }
