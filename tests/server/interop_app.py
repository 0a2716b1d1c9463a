"""The mcp-elicit server the official SDKs' clients talk to (tests/server/test_interop_clients.py):
``mcp-elicit serve tests/server/interop_app.py`` (stdio) or ``--http 127.0.0.1:PORT``.

Every tool answers accept, decline and cancel with different texts, so a test can tell
which answer the server received.
"""

from __future__ import annotations

import asyncio
import json

from mcp_elicit import Context, Form, Server
from mcp_elicit.errors import URLElicitationRequired
from mcp_elicit.forms import Boolean, Choice, Integer, MultiChoice, Number, String

app = Server("interop", "1.0.0")

PROFILE = Form(
    email=String(title="Email", format="email"),
    born=String(title="Birthday", format="date"),
    guests=Integer(title="Guests", minimum=1, maximum=12),
    budget=Number(title="Budget", minimum=0, required=False),
    newsletter=Boolean(title="Newsletter", default=False),
    seat=Choice({"in": "Inside", "out": "Terrace"}, title="Seat"),
    size=Choice(["S", "M", "L"], title="Size", default="M"),
    diet=MultiChoice({"veg": "Vegetarian", "gf": "Gluten-free"}, title="Diet", required=False),
)


def _outcome(name: str, action: str) -> str:
    return {"decline": f"{name}: declined, try another way", "cancel": f"{name}: cancelled, ask later"}[
        action
    ]


@app.tool()
async def profile(ctx: Context) -> str:
    """One form with every kind of field; returns the accepted content as JSON."""
    answer = await ctx.elicit("Tell us about your visit", PROFILE)
    if not answer.accepted:
        return _outcome("profile", answer.action)
    return json.dumps(answer.content, sort_keys=True)


@app.tool()
async def plan_trip(ctx: Context, traveller: str) -> str:
    """Two questions, the second built from the first answer."""
    where = await ctx.elicit(f"Where does {traveller} go?", Form(city=String()), key="city")
    if not where.accepted or where.content is None:
        return _outcome("trip", where.action)
    city = where.content["city"]
    nights = await ctx.elicit(f"How many nights in {city}?", Form(nights=Integer(minimum=1)), key="nights")
    if not nights.accepted or nights.content is None:
        return _outcome("trip", nights.action)
    return f"{traveller}: {nights.content['nights']} nights in {city}"


@app.tool()
async def open_docs(ctx: Context, topic: str) -> str:
    """Sends the user to a page (URL mode)."""
    answer = await ctx.elicit_url(f"Read about {topic}", f"https://example.com/docs/{topic}", key="docs")
    if not answer.accepted:
        return _outcome("docs", answer.action)
    return f"docs: opened {topic}"


@app.tool()
async def link_account(ctx: Context, provider: str) -> str:
    """A step the request cannot go on without (2025-11-25: error -32042; 2026-07-28: the
    accepted retry is held until the step is completed). The sign-in page's backend is
    played here: it completes the step half a second after it was first asked."""
    step, slot = f"link-{provider}", ctx.slot("link")
    if not slot.get("completing"):  # once per request, not once per round
        slot["completing"] = True
        asyncio.get_running_loop().call_later(0.5, app.complete_elicitation, step, ctx.principal)
    answer = await ctx.require_url(
        f"Sign in to {provider}", f"https://example.com/link/{provider}", elicitation_id=step
    )
    return f"link: {answer.action}"


#: The accounts ``link_raised``'s sign-in page linked, as its backend records them.
LINKED: set[str] = set()


@app.tool()
async def link_raised(ctx: Context, provider: str) -> str:
    """The step of ``link_account`` asked the official SDK's way: the handler raises
    ``URLElicitationRequired`` until its own record says the account is linked
    (2025-11-25: error -32042; 2026-07-28: the accepted retry is held until the step is
    completed, then the handler runs again). The sign-in page's backend is played here:
    half a second after the step was first asked, it records the link and completes it."""
    if provider in LINKED:
        return f"linked {provider}"
    step, who, slot = f"raised-{provider}", ctx.principal, ctx.slot("link")
    if not slot.get("completing"):  # once per request, not once per round

        def signed_in() -> None:
            LINKED.add(provider)
            app.complete_elicitation(step, who)

        slot["completing"] = True
        asyncio.get_running_loop().call_later(0.5, signed_in)
    page = {"mode": "url", "message": f"Sign in to {provider}", "url": f"https://example.com/link/{provider}"}
    raise URLElicitationRequired("Sign in first", {"elicitations": [{**page, "elicitationId": step}]})


@app.tool()
async def what_can_you_do(ctx: Context) -> str:
    """What the client declared, as this server understood it. Asks nothing."""
    return f"form={ctx.can_elicit('form')} url={ctx.can_elicit('url')}"


@app.prompt(description="A greeting that asks for the name first")
async def greeting(ctx: Context) -> str:
    answer = await ctx.elicit("Whom should I greet?", Form(name=String()), key="name")
    if not answer.accepted or answer.content is None:
        return _outcome("greeting", answer.action)
    return f"Say hello to {answer.content['name']}"


@app.resource("note://today", name="today", mime_type="text/plain")
async def today(ctx: Context) -> str:
    answer = await ctx.elicit(
        "Which mood is today's note in?", Form(mood=Choice(["calm", "busy"])), key="mood"
    )
    if not answer.accepted or answer.content is None:
        return _outcome("note", answer.action)
    return f"A {answer.content['mood']} day"


@app.tool()
async def use_key(ctx: Context, service: str) -> str:
    """Needs an API key, typed into the server's own page (URL mode); kept for later calls."""
    answer = await ctx.secret(f"{service}_api_key", message=f"Enter your {service} API key")
    if answer.secret is None:
        return _outcome("key", answer.action)
    value = await answer.secret.reveal()
    return f"key: {len(value)} characters, ends {value[-2:]}"


@app.tool()
async def mull(seconds: float) -> str:
    """Says nothing for ``seconds`` (at most 30), then answers: a call a client may give up."""
    await asyncio.sleep(min(seconds, 30))
    return "mulled"


@app.tool()
def grow(tool: str) -> str:
    """Registers one more tool: clients listening for list changes are told."""
    app.tool(name=tool, description="Grown while clients listen")(lambda: tool)
    return f"grew {tool}"
