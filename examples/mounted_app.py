"""mcp-elicit inside a web application of your own: mounted at ``/tools``, next to the
application's own routes, started and stopped with it.

    uvicorn examples.mounted_app:app --port 8000
    mcp-elicit call http://127.0.0.1:8000/tools/mcp provision name=web-1

FastAPI works the same way (``app.mount("/tools", mcp)``, ``FastAPI(lifespan=...)``).
The MCP endpoint is ``/tools/mcp``; URL-mode pages, the OAuth metadata and DPoP checks
follow the mount point by themselves. Behind a proxy that shows the application under
another address, give the server that address: ``Server(public_url=...)``, mount point
included.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import PlainTextResponse
from starlette.routing import Mount, Route

from mcp_elicit import Choice, Context, Form, Server
from mcp_elicit.transports.http_server import StreamableHTTP

server = Server("inventory", instructions="Provision machines; asks where to put them.")


@server.tool()
async def provision(ctx: Context, name: str) -> str:
    """Provision the machine ``name`` in the region the user picks."""
    answer = await ctx.elicit(
        f"Where should {name} run?", Form(region=Choice(["eu-west-1", "us-east-1"], title="Region"))
    )
    if answer.data is None:
        return f"Did not provision {name} ({answer.action})"
    return f"Provisioned {name} in {answer.data['region']}"


mcp = StreamableHTTP(server)


async def home(request: Request) -> PlainTextResponse:
    return PlainTextResponse("Inventory. The MCP endpoint is /tools/mcp\n")


@contextlib.asynccontextmanager
async def lifespan(parent: Starlette) -> AsyncIterator[None]:
    # A mounted app gets no lifespan events of its own: start and stop it with this one.
    async with mcp.lifespan(parent):
        yield


app = Starlette(routes=[Route("/", home), Mount("/tools", app=mcp)], lifespan=lifespan)
