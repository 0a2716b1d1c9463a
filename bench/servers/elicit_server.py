"""The benchmark workload written with mcp-elicit: ``provision(name)`` asks for a region.

Served by uvicorn as ``elicit_server:app``. The state key is fixed (a constant test key,
never a real secret) so that every run seals with the same key material.
"""

from __future__ import annotations

from mcp_elicit import Context, Form, KeyRing, Server, String
from mcp_elicit.transports.http_server import StreamableHTTP

#: A fixed, obviously-not-secret key: 32 distinct bytes.
BENCH_KEY = bytes(range(32))

server = Server("bench", state_keys=KeyRing([BENCH_KEY]))


@server.tool()
async def provision(ctx: Context, name: str) -> str:
    """Provision ``name``, asking the user which region to put it in."""
    answer = await ctx.elicit("Which region?", Form(region=String()))
    if not answer.accepted or answer.data is None:
        return f"Did not provision {name}"
    return f"Provisioned {name} in {answer.data['region']}"


app = StreamableHTTP(server)
