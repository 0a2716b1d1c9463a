"""A tool's own ``raise URLElicitationRequired(...)`` whose step the server will not send
(a URL with credentials, one too long to be shown whole, a scheme other than http(s), a
step of another mode, no step at all) is the tool's fault at 2025-11-25 as at 2026-07-28
and as the same URL given to ``ctx.require_url`` is: the tool's ``isError`` result saying
what is wrong (logged), not an opaque -32603 "Internal error". A prompt's stays -32603,
as at 2026-07-28. Over stdio, in this process, on a real 2025-11-25 session."""

from __future__ import annotations

import logging
from typing import Any

import pytest

from mcp_elicit import Context, Server
from mcp_elicit.errors import URLElicitationRequired

from support.stdio_pipes import Pipes, stdio_session

pytestmark = pytest.mark.anyio

URL_CAPS = {"elicitation": {"url": {}}}
GOOD = {
    "mode": "url",
    "message": "Pay the deposit",
    "url": "https://pay.example.com/d/7",
    "elicitationId": "d-7",
}
BAD = {
    "credentials": ({**GOOD, "url": "https://user:pw@pay.example.com/d/7"}, "user name or password"),
    "overlong": ({**GOOD, "url": "https://pay.example.com/" + "a" * 3000}, "at most 2048"),
    "scheme": ({**GOOD, "url": "javascript:alert(1)"}, "http(s) URL"),
    "mode": ({**GOOD, "mode": "form"}, "mode must be 'url'"),
}


def build(step: dict[str, Any] | None) -> Server:
    app = Server("raises-bad")
    steps = [] if step is None else [step]

    @app.tool()
    async def pay(ctx: Context) -> str:
        raise URLElicitationRequired("Pay first", {"elicitations": steps})

    @app.tool()
    async def pay_asked(ctx: Context) -> str:  # the same step through ctx.require_url
        assert step is not None
        await ctx.require_url(step["message"], step["url"], elicitation_id=step["elicitationId"])
        return "paid"

    @app.prompt()
    async def deposit(ctx: Context) -> str:
        raise URLElicitationRequired("Pay first", {"elicitations": steps})

    return app


async def ask(pipes: Pipes, rid: int, method: str, name: str) -> dict[str, Any]:
    pipes.write({"jsonrpc": "2.0", "id": rid, "method": method, "params": {"name": name}})
    (answer,) = await pipes.until(rid)
    return answer


@pytest.mark.parametrize("bad", ["credentials", "overlong", "scheme", "mode"])
async def test_a_tools_raised_step_it_cannot_send_is_its_is_error(
    bad: str, caplog: pytest.LogCaptureFixture
) -> None:
    step, said = BAD[bad]
    caplog.set_level(logging.ERROR, "mcp_elicit")
    app = build(step)
    async with stdio_session(app, URL_CAPS) as pipes:
        answer = await ask(pipes, 1, "tools/call", "pay")
        assert "result" in answer, answer
        result = answer["result"]
        assert result.get("isError") is True, result
        assert said in result["content"][0]["text"], result
        assert "pay" in result["content"][0]["text"], "the tool is named"
        assert any(r.levelno >= logging.ERROR for r in caplog.records), "the handler's fault is logged"
        assert not app.complete_elicitation("d-7"), "no step was sent, none is waited on"
        if bad != "mode":  # ctx.require_url of the same URL: the same kind of answer
            asked = await ask(pipes, 2, "tools/call", "pay_asked")
            assert asked["result"].get("isError") is True, asked
            assert said in asked["result"]["content"][0]["text"], asked


async def test_a_tools_raise_naming_no_step_is_its_is_error() -> None:
    app = build(None)
    async with stdio_session(app, URL_CAPS) as pipes:
        answer = await ask(pipes, 1, "tools/call", "pay")
        result = answer["result"]
        assert result.get("isError") is True, result
        assert "elicitations" in result["content"][0]["text"], result


async def test_a_prompts_raised_step_it_cannot_send_stays_32603() -> None:
    app = build(BAD["credentials"][0])
    async with stdio_session(app, URL_CAPS) as pipes:
        answer = await ask(pipes, 1, "prompts/get", "deposit")
        assert answer["error"]["code"] == -32603, answer


async def test_a_good_raised_step_is_still_the_32042() -> None:
    app = build(GOOD)
    async with stdio_session(app, URL_CAPS) as pipes:
        answer = await ask(pipes, 1, "tools/call", "pay")
        assert answer["error"]["code"] == -32042, answer
        assert answer["error"]["data"]["elicitations"] == [GOOD], answer
