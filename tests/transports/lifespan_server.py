"""A server with a ``lifespan=``, for tests/transports/test_lifespan_transports.py: what
happens is written to the file named by ``$LIFESPAN_EVENTS``, a line each (its entry, each
round of a call, the call, its exit), and the entry fails when ``$LIFESPAN_FAIL`` is set,
as a database that refuses the connection would (saying its value too, unless it is
``1``), or never ends when ``$LIFESPAN_HANG`` is (a database that does not answer)."""

from __future__ import annotations

import asyncio
import contextlib
import os
from collections.abc import AsyncIterator

from mcp_elicit import Context, Form, Integer, Server


def said(event: str) -> None:
    with open(os.environ["LIFESPAN_EVENTS"], "a", encoding="utf-8") as events:
        events.write(event + "\n")


@contextlib.asynccontextmanager
async def pool(server: Server) -> AsyncIterator[dict[str, str]]:
    failure = os.environ.get("LIFESPAN_FAIL")
    if failure:  # "1", or what the database adds (which may be anything)
        detail = "" if failure == "1" else f": {failure}"
        raise ConnectionRefusedError(f"the database at db.invalid:5432 refused the connection{detail}")
    if os.environ.get("LIFESPAN_HANG"):
        said("opening")
        try:
            await asyncio.Event().wait()
        finally:
            said("opening given up")
    token = f"pool-{os.getpid()}"
    said(f"enter {token}")
    try:
        yield {"pool": token}
    finally:
        said("exit")


app = Server("pooled", lifespan=pool)


@app.tool
async def use_pool(ctx: Context) -> str:
    """Read the pool, ask a number, read it again."""
    first = ctx.lifespan_context["pool"]
    said(f"round {first}")
    answer = await ctx.elicit("How many?", Form(value=Integer()))
    said(f"call {ctx.lifespan_context['pool']}")
    return f"{first} {answer.data['value'] if answer.data else answer.action}"
