"""A handler's own ``raise URLElicitationRequired(message, data)`` at 2025-11-25 is sent as
a -32042 whose ``error.message`` is the one it gave. JSON-RPC's error message is a string:
one that is not (``None``, a number, a dict) was sent as it was, a response the schema
refuses (a client then blames the server). It is the handler's fault, as a step that
cannot be sent is: a tool's ``isError`` naming what to give, a resource's -32603, and the
step it named is not waited on. A string, even one a person might find odd, is sent as
given. Over stdio, in this process, on a real 2025-11-25 session; every answer checked
against the revision's schema."""

from __future__ import annotations

from typing import Any

import pytest

from mcp_elicit import Context, Server
from mcp_elicit.errors import URLElicitationRequired

from support.stdio_pipes import Pipes, stdio_session
from support.wire import WireChecker

pytestmark = pytest.mark.anyio

URL_CAPS = {"elicitation": {"url": {}}}
STEP = {
    "mode": "url",
    "message": "Pay the deposit",
    "url": "https://pay.example.com/d/7",
    "elicitationId": "d-7",
}


def build(message: Any) -> Server:
    app = Server("raises")

    @app.tool()
    async def pay(ctx: Context) -> str:
        raise URLElicitationRequired(message, {"elicitations": [STEP]})

    @app.resource("deposit://7")
    async def deposit(ctx: Context) -> str:
        raise URLElicitationRequired(message, {"elicitations": [STEP]})

    return app


async def call(pipes: Pipes, method: str, params: dict[str, Any]) -> dict[str, Any]:
    pipes.write({"jsonrpc": "2.0", "id": 1, "method": method, "params": params})
    (answer,) = await pipes.until(1)
    return answer


@pytest.mark.parametrize("message", [None, 42, {"text": "Pay first"}], ids=["none", "int", "dict"])
async def test_a_tools_raise_whose_message_is_no_string_is_its_is_error(
    wire_2025: WireChecker, message: Any
) -> None:
    app = build(message)
    async with stdio_session(app, URL_CAPS) as pipes:
        answer = await call(pipes, "tools/call", {"name": "pay"})
    wire_2025.response("tools/call", answer)
    assert "result" in answer, f"sent as it was: {answer}"
    result = answer["result"]
    assert result.get("isError") is True, result
    assert "message must be a string" in result["content"][0]["text"], result
    assert not app.complete_elicitation("d-7"), "no step was sent, none is waited on"


async def test_a_resources_raise_whose_message_is_no_string_is_32603(wire_2025: WireChecker) -> None:
    async with stdio_session(build(None), URL_CAPS) as pipes:
        answer = await call(pipes, "resources/read", {"uri": "deposit://7"})
    wire_2025.response("resources/read", answer)
    assert answer["error"]["code"] == -32603, answer


@pytest.mark.parametrize("message", ["Pay first", ""], ids=["words", "empty"])
async def test_a_string_message_is_sent_as_given(wire_2025: WireChecker, message: str) -> None:
    async with stdio_session(build(message), URL_CAPS) as pipes:
        answer = await call(pipes, "tools/call", {"name": "pay"})
    wire_2025.response("tools/call", answer)
    assert answer["error"] == {"code": -32042, "message": message, "data": {"elicitations": [STEP]}}, answer
