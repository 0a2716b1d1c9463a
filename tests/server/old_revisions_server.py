"""A server for the tests of sessions at the revisions before 2025-11-25
(test_elicitation_old_revisions.py): a form using what 2025-11-25 added (titled
single-selects, defaults on every kind), a multi-select, a URL step, and a tool that says
what the session may be asked."""

from __future__ import annotations

import json

from mcp_elicit import Boolean, Choice, Context, Form, Integer, MultiChoice, Server, String

app = Server("old-revisions")

ORDER = Form(
    size=Choice({"s": "Small", "l": "Large"}, default="s"),
    note=String(default="none", required=False, max_length=40),
    count=Integer(default=1, minimum=1),
    gift=Boolean(default=False),
    color=Choice(["red", "blue"], default="red"),
)


@app.tool(description="Asks for an order")
async def order(ctx: Context) -> str:
    answer = await ctx.elicit("Your order?", ORDER)
    return f"{answer.action} {json.dumps(answer.content, sort_keys=True)}"


@app.tool(description="Asks for toppings, several at once")
async def toppings(ctx: Context) -> str:
    answer = await ctx.elicit("Toppings?", Form(toppings=MultiChoice(["ham", "olives"])))
    return f"{answer.action} {answer.content}"


@app.tool(description="Sends the user to a page")
async def pay(ctx: Context) -> str:
    answer = await ctx.elicit_url("Confirm the payment on our page", "https://pay.example.com/confirm/1")
    return answer.action


@app.tool(description="Says what this session may be asked")
async def can_ask(ctx: Context) -> str:
    return f"form={ctx.can_elicit('form')} url={ctx.can_elicit('url')}"
