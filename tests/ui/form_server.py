"""A server that asks what a test hands it, for the terminal answerer's tests in a real
terminal. ``form`` asks its ``message`` with the JSON schema ``schema`` (``ctx.elicit``) and
returns the action and content as JSON; ``ask`` sends its ``params`` argument (JSON) as the
``elicitation/create`` params, as they are, and returns the action; ``ask_big`` does
the same with every ``<big>`` in them made ``big`` characters of words, and every
``<path>`` the same with slashes for spaces (a command line cannot carry megabytes). ``ctx.elicit`` refuses some of what a test
sends (a title holding an escape, a message that moves the cursor): this server sends it
anyway, as a hostile one would, so that the tests see what the terminal makes of it.
"""

from __future__ import annotations

import json
from typing import Any

from mcp_elicit import Context, Server
from mcp_elicit.core.mrtr import ELICIT, Ask
from mcp_elicit.server.questions import Question

app = Server("forms", "1.0.0", title="Form tests")


@app.tool()
async def form(ctx: Context, message: str, schema: str) -> str:
    """Asks ``message`` with the form ``schema`` (JSON) and returns the answer as JSON."""
    answer = await ctx.elicit(message, json.loads(schema))
    return json.dumps({"action": answer.action, "content": answer.content}, sort_keys=True)


@app.tool()
async def ask(ctx: Context, params: str) -> str:
    """Asks the elicitation ``params`` (JSON) as they are and returns the answer as JSON."""
    question: Question[dict[str, Any]] = Question(ctx, Ask("q", ELICIT, json.loads(params)), dict)
    return json.dumps(await question, sort_keys=True)


@app.tool()
async def ask_big(ctx: Context, params: str, big: int) -> str:
    """``ask``, with every ``<big>`` in ``params`` made ``big`` characters of words, and
    every ``<path>`` the same with slashes for spaces."""
    words = ("many words " * (big // 11 + 1))[:big]
    return await ask(ctx, params.replace("<big>", words).replace("<path>", words.replace(" ", "/")))
