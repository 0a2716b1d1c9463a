"""Sampling and roots asked from a handler on a 2025-11-25 session (server-to-client
requests), with clients that answer badly, refuse, answer late or not at all: the
handler always gets an answer or a ``ToolError`` saying what went wrong, never a hang.
Every message is checked against the official 2025-11-25 schema."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import orjson
import pytest

from mcp_elicit import Context, Server
from mcp_elicit.errors import ToolError
from mcp_elicit.wire import jsonrpc

from support.memory import SessionClient
from support.wire import WireChecker

pytestmark = pytest.mark.anyio
CAPABILITIES = {"sampling": {}, "roots": {}}
SAMPLED = {"role": "assistant", "content": {"type": "text", "text": "hi"}, "model": "m"}


def build(**options: Any) -> Server:
    app = Server("asks-the-client", **options)

    @app.tool()
    async def both(ctx: Context) -> str:
        """Asks the model and the roots together; says what went wrong if anything did."""
        try:
            reply, roots = await ctx.gather(ctx.sample("Say hi", max_tokens=5), ctx.list_roots())
        except ToolError as exc:
            return f"failed: {exc}"
        return f"{getattr(reply.content, 'text', '?')} {[r.uri for r in roots]}"

    @app.tool()
    async def sample_only(ctx: Context) -> str:
        try:
            reply = await ctx.sample("Say hi", max_tokens=5)
        except ToolError as exc:
            return f"failed: {exc}"
        return getattr(reply.content, "text", "?")

    return app


class Replying(SessionClient):
    """Answers each server request with ``reply(method)``: a result, or an ``error``
    object (a JSON-RPC error response), or None for no answer at all."""

    def __init__(self, *args: Any, reply: Callable[[str], dict[str, Any] | None], **kw: Any) -> None:
        super().__init__(*args, **kw)
        self.reply = reply

    async def send(self, data: bytes) -> None:
        message = orjson.loads(data)
        assert self.checker is not None
        self.checker.outgoing(message)
        self.asked.append(message)
        if "id" not in message:
            return
        reply = self.reply(message["method"])
        if reply is None:
            return
        response = {"jsonrpc": "2.0", "id": message["id"], **reply}
        self.checker.response(message["method"], response)
        decoded = jsonrpc.decode(orjson.dumps(response))
        assert isinstance(decoded, jsonrpc.Response | jsonrpc.ErrorResponse)
        assert self.session.resolve(decoded)


async def test_questions_asked_together_that_fail_raise_one_clear_tool_error(wire_2025: WireChecker) -> None:
    """The model's answer is refused by the person (a JSON-RPC error), the roots come back:
    the handler's ``except ToolError`` sees why, not an exception group."""

    def reply(method: str) -> dict[str, Any] | None:
        if method == "sampling/createMessage":
            return {"error": {"code": -1, "message": "User rejected sampling request"}}
        return {"result": {"roots": [{"uri": "file:///work"}]}}

    client = Replying(build(), capabilities=CAPABILITIES, checker=wire_2025, reply=reply)
    await client.open()
    result = await client.result("tools/call", {"name": "both"})
    assert result["content"][0]["text"] == (
        "failed: The client refused sampling/createMessage: User rejected sampling request"
    )
    # neither answered in time: the handler hears of the first, and both are withdrawn
    client = Replying(
        build(ask_timeout=0.05), capabilities=CAPABILITIES, checker=wire_2025, reply=lambda _m: None
    )
    await client.open()
    result = await client.result("tools/call", {"name": "both"})
    assert result["content"][0]["text"].startswith("failed: No answer to ")
    withdrawn = [m for m in client.asked if m.get("method") == "notifications/cancelled"]
    assert sorted(m["params"]["requestId"] for m in withdrawn) == sorted(
        m["id"] for m in client.asked if "id" in m
    )
    assert client.session.pending == {}


async def test_no_answer_in_time_names_the_time_waited(wire_2025: WireChecker) -> None:
    """``ask_timeout`` below a second is said as it was set, not rounded to 0 s."""
    client = Replying(
        build(ask_timeout=0.25), capabilities={"sampling": {}}, checker=wire_2025, reply=lambda _m: None
    )
    await client.open()
    result = await client.result("tools/call", {"name": "sample_only"})
    assert result["content"][0]["text"] == "failed: No answer to sampling/createMessage within 0.25 s"
