"""A server that asks for an API key on its own page and checks for the page every 50 ms
(``flow_wait``; 20 s by default), for the CLI test of a person slow to finish the page:
each check still pending answers a state-only round. ``far_page`` sends the person to a
page elsewhere (a host in punycode) and then waits, as a server waiting for that page would."""

from __future__ import annotations

import asyncio

from mcp_elicit import Context, Server

app = Server("slow-page", "1.0.0", title="Slow page", flow_wait=0.05)


@app.tool()
async def use_key(ctx: Context) -> str:
    """Needs an API key, typed on the server's page."""
    answer = await ctx.secret("example_api_key", message="Enter your Example API key")
    if answer.secret is None:
        return f"no key ({answer.action})"
    return f"key accepted ({len(await answer.secret.reveal())} characters)"


@app.tool()
async def far_page(ctx: Context) -> str:
    """Sends the person to a shop's page, then waits (ended by the client that gives up)."""
    answer = await ctx.elicit_url("Sign up at the shop", "https://xn--bcher-kva.example/signup")
    await asyncio.sleep(60)
    return answer.action
