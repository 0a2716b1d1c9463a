"""What the tests of handshake sessions (2025-11-25) on the server share: the server they ask
through, and a session client that never answers."""

from __future__ import annotations

from typing import Any

import orjson

from mcp_elicit import Context, Form, Server, String

from support.memory import SessionClient


def build(**options: Any) -> Server:
    app = Server("sessions", **options)

    @app.tool()
    async def ask_name(ctx: Context) -> str:
        answer = await ctx.elicit("Name?", Form(name=String()))
        return f"answer: {answer.action}"

    @app.tool()
    async def connect(ctx: Context) -> str:
        answer = await ctx.require_url(
            "Connect your account", "https://example.com/connect", elicitation_id="e-1"
        )
        return f"connected: {answer.action}"

    @app.tool()
    async def open_page(ctx: Context, n: int) -> str:
        answer = await ctx.elicit_url("Open the page", "https://example.com/step", elicitation_id=f"step-{n}")
        return f"page: {answer.action}"

    return app


class Silent(SessionClient):
    """A client that never answers the server's questions."""

    async def send(self, data: bytes) -> None:
        self.asked.append(orjson.loads(data))
