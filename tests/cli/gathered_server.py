"""A server for test_call_capability_hints.py: a multi-select (which came with 2025-11-25)
asked together with sampling (which ``mcp-elicit call`` never declares)."""

from __future__ import annotations

from mcp_elicit import Context, Form, MultiChoice, Server

app = Server("gathered")


@app.tool(description="Asks the model and for toppings together")
async def sample_and_pick(ctx: Context) -> str:
    _reply, answer = await ctx.gather(
        ctx.sample("Say hi"), ctx.elicit("Toppings?", Form(toppings=MultiChoice(["ham"])))
    )
    return answer.action
