"""A handler's ``Context`` used where it cannot work fails at once, saying what to do
instead: from a thread other than the event loop's (a ``threading.Thread`` the handler
starts, a helper run with ``asyncio.to_thread``). Driven in memory on both revisions
(every message checked against the schema)."""

from __future__ import annotations

import asyncio
import threading
from typing import Any

import pytest

from mcp_elicit import Context, Form, Server, String

from support.memory import MemoryClient, SessionClient
from support.wire import WireChecker

pytestmark = pytest.mark.anyio

BOUND = 5.0
NAME = Form(name=String())


def text(result: dict[str, Any]) -> str:
    return str(result["content"][0]["text"])


def off_loop(what: str) -> str:
    return (
        f"ctx.{what}() was called from thread 'helper', not the event loop's thread where tool "
        f"'{{tool}}' runs: a Context works only there. Await it in the handler (or a task it "
        "starts on the same loop) and hand the thread the answer, not the Context"
    )


def build_threads() -> Server:
    app = Server("threads")

    @app.tool()
    async def in_thread(ctx: Context) -> str:
        failed: list[BaseException] = []

        def helper() -> None:
            try:
                ctx.elicit("Your name?", NAME)
            except RuntimeError as exc:
                failed.append(exc)

        worker = threading.Thread(target=helper, name="helper")
        worker.start()
        await asyncio.to_thread(worker.join, BOUND)
        return str(failed[0]) if failed else "asked nothing, failed nothing"

    @app.tool()
    async def to_thread(ctx: Context) -> str:
        def helper() -> Any:
            threading.current_thread().name = "helper"
            return ctx.sample("Hello?")

        await asyncio.to_thread(helper)
        return "returned a question"

    @app.tool()
    async def progress_in_thread(ctx: Context) -> str:
        def helper() -> None:
            threading.current_thread().name = "helper"
            asyncio.run(ctx.report_progress(1))

        await asyncio.to_thread(helper)
        return "reported"

    return app


async def test_elicit_from_a_thread_the_handler_starts_fails_at_once_saying_what_to_do(
    wire: WireChecker,
) -> None:
    client = MemoryClient(build_threads(), checker=wire)
    result = await client.result("tools/call", {"name": "in_thread"})
    assert text(result) == off_loop("elicit").format(tool="in_thread")
    assert client.notifications == []


@pytest.mark.parametrize(
    ("tool", "method"), [("to_thread", "sample"), ("progress_in_thread", "report_progress")]
)
async def test_a_helper_run_with_to_thread_that_uses_the_context_fails_the_tool_saying_so(
    wire_2025: WireChecker, tool: str, method: str
) -> None:
    client = SessionClient(build_threads(), capabilities={"sampling": {}}, checker=wire_2025)
    await client.open()
    result = await client.result("tools/call", {"name": tool, "arguments": {}})
    assert result["isError"] is True
    assert text(result) == f"Error executing tool {tool}: " + off_loop(method).format(tool=tool)
    assert client.asked == []
