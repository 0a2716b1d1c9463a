"""A server whose every answer is text beyond ASCII (German, Chinese, a dash, a check mark),
for the CLI on a terminal that can only show ASCII: a tool's text, its structured content and
its error, a question, a protocol error, a prompt and a resource."""

from __future__ import annotations

from mcp_elicit import Context, Form, Server, String, ToolError
from mcp_elicit.errors import InvalidParams

app = Server("天気", "1.0.0", title="Wetter — 天気")

#: What every answer says.
GREETING = "Grüße — 天気 ✓"


@app.tool()
async def hello(name: str) -> str:
    """Says hello."""
    return f"{GREETING}, {name}"


@app.tool()
async def forecast(city: str) -> dict[str, str]:
    """The weather, as structured content."""
    return {"city": city, "天気": "☀ sonnig"}


@app.tool()
async def fails() -> str:
    """Always fails."""
    raise ToolError(f"{GREETING}: kaputt")


@app.tool()
async def ask(ctx: Context) -> str:
    """Asks a question first."""
    answer = await ctx.elicit(f"{GREETING}: wie heißt du?", Form(name=String()), key="名前")
    return f"{GREETING}, {answer.content['name'] if answer.content else '?'}"


@app.prompt(description=f"{GREETING} prompt")
async def greet(name: str) -> str:
    return f"{GREETING}, {name}"


@app.resource("wetter://heute", description="Heute", mime_type="text/plain")
def heute() -> str:
    return f"{GREETING}: heute"


@app.tool()
async def measure(größe: int) -> str:
    """Takes an argument whose name is not ASCII."""
    return f"{größe} cm"


@app.tool()
async def refuse() -> str:
    """Answers with a protocol error instead of a result."""
    raise InvalidParams(f"{GREETING}: nein")
