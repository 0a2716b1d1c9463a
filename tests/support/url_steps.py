"""A shop whose ``pay`` tool sends the person to a payment page of its own
(``ctx.require_url`` with an ``elicitation_id``), whose ``checkout`` tool asks for the
same page by raising ``URLElicitationRequired`` itself (the official SDK's pattern), and
that page's backend: visiting ``/pay/<order>?who=<name>`` records the payment and calls
``complete_elicitation``, as a payment provider's webhook would. One handler for every
revision."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import PlainTextResponse
from starlette.routing import Mount, Route

from mcp_elicit import Context, KeyRing, Server
from mcp_elicit.errors import URLElicitationRequired
from mcp_elicit.stores import Store
from mcp_elicit.transports.http_server import StreamableHTTP

from support.principals import Tokens
from support.procs import InProcess, uvicorn_server

__all__ = ["KEYS", "Shop", "served", "shop"]

KEYS = KeyRing([bytes(range(40, 72))])


class Shop:
    """What the shop's instances share, as a database would: the orders paid, by payer."""

    def __init__(self) -> None:
        self.paid: set[tuple[str, str]] = set()
        self.base = ""  # where the payment pages are (set once served)


def shop(store: str | Store | None, paid: Shop, **options: Any) -> Server:
    """An instance of the shop server (the same name and keys for every instance)."""
    app = Server("shop", state_keys=KEYS, store=store, auth=Tokens(), **options)

    @app.tool()
    async def pay(ctx: Context, order: str) -> str:
        who = ctx.principal.subject if ctx.principal else "nobody"
        if (who, order) not in paid.paid:  # done already: the retry passes
            url = f"{paid.base}/pay/{order}?who={who}"
            answer = await ctx.require_url("Pay for your order", url, elicitation_id=f"pay-{order}")
            if answer.action != "accept":
                return f"order {order}: not paid ({answer.action})"
        return f"order {order}: paid" if (who, order) in paid.paid else f"order {order}: not paid yet"

    @app.tool()
    async def checkout(ctx: Context, order: str) -> str:
        who = ctx.principal.subject if ctx.principal else "nobody"
        if (who, order) not in paid.paid:  # its own record of the work: raise until it is there
            step = {
                "mode": "url",
                "message": "Pay for your order",
                "url": f"{paid.base}/pay/{order}?who={who}",
            }
            raise URLElicitationRequired(
                "Pay first", {"elicitations": [{**step, "elicitationId": f"pay-{order}"}]}
            )
        return f"order {order}: paid"

    return app


def pages(app: Server, paid: Shop) -> Starlette:
    """The MCP endpoint at ``/mcp`` and the payment page beside it."""

    async def page(request: Request) -> PlainTextResponse:
        order, who = request.path_params["order"], request.query_params["who"]
        paid.paid.add((who, order))
        app.complete_elicitation(f"pay-{order}", who)
        return PlainTextResponse("paid")

    mcp = StreamableHTTP(app)
    return Starlette(
        routes=[Route("/pay/{order}", page, methods=["GET"]), Mount("/", app=mcp)], lifespan=mcp.lifespan
    )


@asynccontextmanager
async def served(app: Server, paid: Shop) -> AsyncIterator[InProcess]:
    """``app`` and its payment page on 127.0.0.1 (the first served names the pages' base)."""
    async with uvicorn_server(pages(app, paid), lifespan="on") as running:
        if not paid.base:
            paid.base = f"http://127.0.0.1:{running.port}"
        yield running
    await asyncio.sleep(0)
