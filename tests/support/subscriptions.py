"""What the tests of ``subscriptions/listen`` on the server share: a server with prompts and
resources to change, and a listener that collects what it hears."""

from __future__ import annotations

import asyncio
from typing import Any

from mcp_elicit import Context, Form, Server
from mcp_elicit.forms import Boolean

from support.memory import MemoryClient
from support.waiting import eventually


def build() -> Server:
    app = Server("listen")

    @app.tool(task="optional")
    async def approve(ctx: Context) -> str:
        """Asks for an approval inside a task."""
        await ctx.start_task("waiting for approval")
        answer = await ctx.elicit("Approve?", Form(ok=Boolean()), key="ok")
        return f"approved: {answer.action}"

    @app.resource("file:///notes.txt")
    def notes() -> str:
        return "notes"

    return app


class Listener:
    """One listen request running in the background, its notifications collected."""

    def __init__(self, client: MemoryClient, notifications: dict[str, Any], rid: int = 100) -> None:
        self.client = client
        self.rid = rid
        message = {
            "jsonrpc": "2.0",
            "id": rid,
            "method": "subscriptions/listen",
            "params": {"notifications": notifications, "_meta": client.meta()},
        }
        self.answer = asyncio.ensure_future(client.raw(message))

    async def until(self, count: int) -> list[dict[str, Any]]:
        await eventually(
            lambda: len(self.client.notifications) >= count or self.answer.done(), f"{count} notifications"
        )
        return self.client.notifications
