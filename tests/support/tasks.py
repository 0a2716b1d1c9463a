"""What the server's task tests share: the server under test, with its tools that can be tasks,
and a client's steps of a task (its status, waiting for a status, starting one)."""

from __future__ import annotations

import asyncio
from typing import Any

from mcp_elicit import Context, Form, Server, String, ToolError
from mcp_elicit.errors import InternalError, URLElicitationRequired
from mcp_elicit.forms import Boolean
from mcp_elicit.sealing import KeyRing

from support.memory import MemoryClient
from support.waiting import eventually

TASKS = "io.modelcontextprotocol/tasks"
WITH_TASKS = {"elicitation": {}, "extensions": {TASKS: {}}}


def build(**options: Any) -> Server:
    app = Server("tasks", state_keys=KeyRing([b"t" * 16 + b"k" * 16]), **options)
    gate = asyncio.Event()
    app.gate = gate  # type: ignore[attr-defined]

    @app.tool(task="optional")
    async def deploy(ctx: Context, service: str) -> str:
        """Deploys after the user confirms."""
        became = await ctx.start_task(f"deploying {service}")
        answer = await ctx.elicit(f"Deploy {service} now?", Form(go=Boolean()), key="go")
        if not (answer.accepted and answer.content and answer.content["go"]):
            return f"{service}: not deployed ({answer.action})"
        await ctx.report_progress(1, 2, "half way")
        await gate.wait()
        return f"{service}: deployed ({'task' if became else 'in place'})"

    @app.tool(task="required")
    async def named(ctx: Context) -> str:
        """Asks a name first, then works as a task."""
        answer = await ctx.elicit("Your name?", Form(name=String()), key="name")
        await ctx.start_task()
        await gate.wait()
        return f"done for {answer.content['name'] if answer.content else '?'}"

    @app.tool(task="optional")
    async def broken(ctx: Context, how: str) -> str:
        """Fails, one way or another."""
        await ctx.start_task("breaking")
        if how == "tool":
            raise ToolError("the disk is full")
        if how == "protocol":
            raise InternalError("Internal error: the worker went away")
        if how == "url":  # the handshake era's -32042, which a task (2026-07-28) cannot answer
            raise URLElicitationRequired(
                "Sign in first",
                data={
                    "elicitations": [{"mode": "url", "message": "Sign in", "url": "https://example.com/a"}]
                },
            )
        if how == "schema":  # a programming error: forms are flat
            await ctx.elicit("Nested?", {"type": "object", "properties": {"a": {"type": "object"}}})
        raise RuntimeError("a bug")

    @app.tool()
    async def plain(ctx: Context) -> str:
        """Not a task tool: start_task is refused."""
        return f"plain: {await ctx.start_task()}"

    return app


async def status(client: MemoryClient, task_id: str) -> dict[str, Any]:
    return await client.result("tasks/get", {"taskId": task_id})


async def settle(client: MemoryClient, task_id: str, wanted: str) -> dict[str, Any]:
    seen: dict[str, Any] = {}

    async def reached() -> bool:
        seen.update(await status(client, task_id))
        return seen["status"] == wanted

    await eventually(reached, f"task {task_id} to be {wanted}")
    return seen
