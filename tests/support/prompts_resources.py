"""What the tests of prompts, resources, templates and completion on the server share: a
server with a prompt and resources that ask, and a 2025-11-25 session of it in memory."""

from __future__ import annotations

from mcp_elicit import Context, Form, Server, String
from mcp_elicit.sealing import KeyRing

from support.memory import SessionClient
from support.wire import WireChecker


def build() -> Server:
    app = Server("catalog", state_keys=KeyRing([bytes(range(3, 35))]), page_size=1)

    @app.prompt()
    async def guided(ctx: Context, who: str) -> str:
        answer = await ctx.elicit("Topic?", Form(topic=String()))
        return f"{who}: {answer.content['topic'] if answer.content else answer.action}"

    @app.resource("test://notes/{note_id}")
    async def note(ctx: Context, note_id: str) -> str:
        answer = await ctx.elicit("Format?", Form(fmt=String()))
        return f"note {note_id} as {answer.content['fmt'] if answer.content else answer.action}"

    @app.resource("test://fixed")
    def fixed() -> str:
        return "fixed"

    return app


async def session(wire_2025: WireChecker, app: Server | None = None) -> SessionClient:
    client = SessionClient(app or build(), checker=wire_2025)
    await client.open()
    return client
