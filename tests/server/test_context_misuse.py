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
from support.waiting import eventually
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


# ---- a Context kept after its request ended -----------------------------------------------

TASKS = "io.modelcontextprotocol/tasks"
LOG_LEVEL = "io.modelcontextprotocol/logLevel"


def after_end(what: str, tool: str = "keep") -> str:
    return (
        f"ctx.{what}() was called after the request of tool {tool!r} ended: a Context works only "
        "while its handler runs (was it kept in a global, or used by a background task?). Ask "
        "from the handler itself, before it returns"
    )


def build_keeper(kept: list[Any]) -> Server:
    app = Server("keeper")

    @app.tool()
    async def keep(ctx: Context) -> str:
        kept.append(ctx)
        kept.append(ctx.elicit("Made in time, asked too late?", NAME))
        return "kept"

    @app.tool(task="optional", name="keep_task")
    async def keep_task(ctx: Context) -> str:
        await ctx.start_task("working")
        kept.append(ctx)
        return "kept"

    return app


async def late_uses(ctx: Context, question: Any) -> list[tuple[str, Any]]:
    """What each use of ``ctx`` after its request ended did: the error, or what it returned."""
    uses = {
        "elicit": lambda: ctx.elicit("Your name?", NAME),
        "elicit_url": lambda: ctx.elicit_url("Sign in", "https://example.com/in"),
        "require_url": lambda: ctx.require_url("Sign in", "https://example.com/in"),
        "report_progress": lambda: ctx.report_progress(1),
        "log": lambda: ctx.log("error", "too late"),
        "pause": lambda: ctx.pause(),
    }
    seen: list[tuple[str, Any]] = []
    for name, use in uses.items():
        try:
            seen.append((name, await asyncio.wait_for(use(), BOUND)))
        except BaseException as exc:
            seen.append((name, f"{type(exc).__name__}: {exc}"))
    if question is not None:
        try:
            seen.append(("elicit", await asyncio.wait_for(question, BOUND)))
        except BaseException as exc:
            seen.append(("elicit", f"{type(exc).__name__}: {exc}"))
    return seen


def refused(tool: str, *, question: bool) -> list[tuple[str, Any]]:
    names = ["elicit", "elicit_url", "require_url", "report_progress", "log", "pause"]
    names += ["elicit"] if question else []
    dropped = {"report_progress", "log"}  # nothing is sent for a request once it is answered
    return [(name, None if name in dropped else f"RuntimeError: {after_end(name, tool)}") for name in names]


CAPS = {"elicitation": {"form": {}, "url": {}}}


async def test_a_context_kept_after_its_request_ended_refuses_saying_so_on_2026_07_28(
    wire: WireChecker,
) -> None:
    kept: list[Any] = []
    client = MemoryClient(build_keeper(kept), capabilities=CAPS, checker=wire)
    meta = client.meta(progressToken="p", **{LOG_LEVEL: "debug"})
    assert text(await client.result("tools/call", {"name": "keep"}, meta=meta)) == "kept"
    assert await late_uses(*kept) == refused("keep", question=True)
    assert client.notifications == []


async def test_a_context_kept_after_its_request_ended_refuses_saying_so_on_2025_11_25(
    wire_2025: WireChecker,
) -> None:
    kept: list[Any] = []
    client = SessionClient(build_keeper(kept), capabilities=CAPS, checker=wire_2025)
    await client.open()
    await client.result("logging/setLevel", {"level": "debug"})
    params = {"name": "keep", "arguments": {}, "_meta": {"progressToken": "p"}}
    assert text(await client.result("tools/call", params)) == "kept"
    assert await late_uses(*kept) == refused("keep", question=True)
    assert client.notifications == [] and client.asked == []


async def test_a_context_kept_after_its_task_ended_refuses_saying_so(wire: WireChecker) -> None:
    kept: list[Any] = []
    client = MemoryClient(build_keeper(kept), capabilities={**CAPS, "extensions": {TASKS: {}}}, checker=wire)
    created = await client.result("tools/call", {"name": "keep_task"})
    task_id = created["taskId"]

    async def completed() -> bool:
        return bool((await client.result("tasks/get", {"taskId": task_id}))["status"] == "completed")

    await eventually(completed, "the task to complete")
    assert await late_uses(kept[0], None) == refused("keep_task", question=False)
    done = await client.result("tasks/get", {"taskId": task_id})
    assert "statusMessage" not in done and "inputRequests" not in done  # a late progress sets none
