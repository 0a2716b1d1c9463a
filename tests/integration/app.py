"""The server the integration tests run as real processes:
``mcp-elicit serve tests/integration/app.py --http 127.0.0.1:PORT --state-key-file K --store URL``.

Every run of a handler logs one line on stderr naming the tool, the flow and the process
(``run survey flow=f1 pid=123``), so a test can tell which instance served which round
(a handler runs once per round on 2026-07-28). Nothing here holds state between requests:
whatever a flow needs travels in ``requestState`` or lives in the store.
"""

from __future__ import annotations

import hashlib
import logging
import os

from mcp_elicit import Boolean, Choice, Context, Form, Integer, Server, String

log = logging.getLogger("integration.app")

app = Server("integration", flow_wait=float(os.environ.get("INTEGRATION_FLOW_WAIT", "5")))
# Waits look at the store only this often besides being woken by an event: the several-
# instances test sets it long, so only a Redis event can wake a retry quickly.
app.url_mode.flow_recheck = float(os.environ.get("INTEGRATION_FLOW_RECHECK", "1"))


def _ran(tool: str, flow: str) -> None:
    log.info("run %s flow=%s pid=%d", tool, flow, os.getpid())


@app.tool()
async def survey(ctx: Context, flow: str) -> str:
    """Three questions, one per round."""
    _ran("survey", flow)
    name = await ctx.elicit("Your name?", Form(name=String(max_length=40)), key="name")
    size = await ctx.elicit("How many?", Form(guests=Integer(minimum=1, maximum=20)), key="guests")
    seat = await ctx.elicit("Where?", Form(seat=Choice(["inside", "terrace"])), key="seat")
    if not (name.accepted and size.accepted and seat.accepted):
        return f"{flow}: not finished"
    assert name.content is not None and size.content is not None and seat.content is not None
    return f"{flow}: {name.content['name']}, {size.content['guests']}, {seat.content['seat']}"


@app.tool()
async def use_key(ctx: Context, flow: str) -> str:
    """Needs an API key, typed into the server's own page (URL mode)."""
    _ran("use_key", flow)
    answer = await ctx.secret("example_api_key", message="Enter your Example API key")
    if answer.secret is None:
        return f"{flow}: no key ({answer.action})"
    value = await answer.secret.reveal()
    return f"{flow}: key sha256 {hashlib.sha256(value.encode()).hexdigest()[:16]}"


@app.tool(single_use_state=True)
async def pay(ctx: Context, flow: str, amount: int) -> str:
    """A one-time action: its requestState is redeemed once, on any instance."""
    _ran("pay", flow)
    ok = await ctx.elicit(f"Pay {amount} EUR?", Form(ok=Boolean()), key="confirm")
    if not (ok.accepted and ok.content and ok.content["ok"]):
        return f"{flow}: not paid"
    log.info("paid flow=%s amount=%d pid=%d", flow, amount, os.getpid())  # the side effect, last
    return f"{flow}: paid {amount}"


@app.tool(task="optional")
async def migrate(ctx: Context, flow: str) -> str:
    """Goes on as a task, then asks before it migrates: followed through any instance."""
    _ran("migrate", flow)
    await ctx.start_task(f"migrating {flow}")
    go = await ctx.elicit("Migrate now?", Form(go=Boolean()), key="go")
    return f"{flow}: migrated" if go.accepted and go.content and go.content["go"] else f"{flow}: not migrated"


@app.resource("test://board", name="board")
def board() -> str:
    return "the board"


@app.tool()
def post(note: str) -> str:
    """Changes test://board: its subscribers hear it on every instance sharing the store."""
    log.info("post note=%s pid=%d", note, os.getpid())
    return f"told {app.notify_resource_updated('test://board')} listener(s) here"
