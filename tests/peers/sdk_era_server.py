"""A server built with the official Python SDK (``mcp`` 2.3.0) that asks in 2025-11-25's
ways whatever the revision, for the CLI's hints about them. Over stdio:

    tests/.peers/mcp/bin/python tests/peers/sdk_era_server.py

* ``link(provider, url)``: raises the SDK's ``UrlElicitationRequiredError`` (-32042), one
  step to ``url``, even at 2026-07-28, which has no -32042 (the SDK's violation).
* ``confirm(name)``, prompt ``greeting(name)``, resource ``notes://{topic}``: ask through
  ``ctx.elicit``, a server-initiated ``elicitation/create`` that 2026-07-28 cannot carry.
"""

from __future__ import annotations

from mcp.server.mcpserver import Context, MCPServer
from mcp.shared.exceptions import UrlElicitationRequiredError
from mcp.types import ElicitRequestURLParams
from pydantic import BaseModel

mcp = MCPServer("sdk-era-peer", log_level="WARNING")


class Confirmation(BaseModel):
    ok: bool


@mcp.tool()
async def link(provider: str, url: str = "https://example.com/oauth/start") -> str:
    """Needs the person to sign in at a page first."""
    step = ElicitRequestURLParams(
        mode="url", message=f"Sign in to {provider}", url=url, elicitation_id=f"link-{provider}"
    )
    raise UrlElicitationRequiredError([step])


async def _ask(ctx: Context, what: str) -> str:
    answer = await ctx.elicit(f"Is {what} right?", Confirmation)
    return f"{what}: {answer.action}"


@mcp.tool()
async def confirm(name: str, ctx: Context) -> str:
    """Asks the person to confirm a name."""
    return await _ask(ctx, name)


@mcp.prompt()
async def greeting(name: str, ctx: Context) -> str:
    """Asks the person first."""
    return await _ask(ctx, name)


@mcp.resource("notes://{topic}")
async def notes(topic: str, ctx: Context) -> str:
    """Asks the person first."""
    return await _ask(ctx, topic)


if __name__ == "__main__":
    mcp.run()
