"""A server whose 2025-11-25 session gets messages of its own, not tied to a request:
``notifications/elicitation/complete`` and ``notifications/resources/updated``."""

from __future__ import annotations

import asyncio

from mcp_elicit import Context, Server

app = Server("pushing", "1.0.0")


@app.resource("test://watched", name="watched")
def watched() -> str:
    return "watched"


@app.tool()
def touch() -> str:
    """Tells every session subscribed to test://watched that it changed."""
    return f"told {app.notify_resource_updated('test://watched')} session(s)"


@app.tool()
async def sign_in(ctx: Context) -> str:
    """A URL step the server sees finished by itself, 0.2 s after asking."""
    asyncio.get_running_loop().call_later(0.2, app.complete_elicitation, "step-1")
    answer = await ctx.elicit_url("Sign in", "https://accounts.example.com/signin", elicitation_id="step-1")
    return f"sign-in: {answer.action}"
