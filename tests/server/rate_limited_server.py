"""A server for the tests of rate limits (test_rate_limits.py): two tool calls at once per
caller, then one a minute; a tool that asks a question (its answer is a later round, never
refused), one that logs more than a request may send; a prompt whose argument is
completed (completions have a budget of their own) and a resource template (prompts and
reads have a budget of their own)."""

from __future__ import annotations

import asyncio
from typing import Any

from mcp_elicit import Context, Form, Server, String

app = Server("rate-limited", max_calls_per_minute=1, call_burst=2)


@app.tool(description="Says hello")
async def hello() -> str:
    return "hello"


@app.tool(description="Asks for a name")
async def ask_name(ctx: Context) -> str:
    answer = await ctx.elicit("Name?", Form(name=String()))
    return f"hello {answer.content['name'] if answer.content else answer.action}"


@app.tool(description="Logs COUNT lines at once, then, after a pause, one more")
async def chatty(ctx: Context, count: int) -> str:
    for n in range(count):
        await ctx.info(f"line {n}")
    await asyncio.sleep(1.1)  # the budget is whole again: the last line goes, and the count with it
    await ctx.info("last")
    return "done"


@app.prompt(description="Greets WHO")
def greet(who: str) -> str:
    return f"Say hello to {who}"


@app.completion()
def suggest(ref: dict[str, Any], argument: dict[str, Any], context: Any) -> list[str]:
    return [f"{argument['value']}a"]


@app.resource("notes://{name}", description="The note NAME")
def note(name: str) -> str:
    return f"note {name}"
