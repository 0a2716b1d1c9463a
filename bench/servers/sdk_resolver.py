"""The benchmark workload on the official SDK (``mcp`` 2.3.0), high-level ``MCPServer``.

Written the way the SDK's docs recommend for asking the user on any protocol era: a
resolver (``Resolve``) that returns ``Elicit(...)``. On a 2026-07-28 request the SDK
turns that into an ``input_required`` result with a ``requestState`` sealed under its
default protection (``MCPServer`` seals by default under a process-local AES-GCM key),
and injects the validated answer on the retry. Served by uvicorn as ``sdk_resolver:app``.
"""

from __future__ import annotations

from typing import Annotated

from mcp.server.mcpserver import Elicit, MCPServer, Resolve
from pydantic import BaseModel


class Region(BaseModel):
    region: str


# log_level: the same "warning" every server in the benchmark runs at (the default is INFO).
mcp = MCPServer("bench", log_level="WARNING")


async def ask_region(name: str) -> Elicit[Region]:
    """Resolver: always ask which region."""
    return Elicit("Which region?", Region)


@mcp.tool()
async def provision(name: str, answer: Annotated[Region, Resolve(ask_region)]) -> str:
    """Provision ``name``, asking the user which region to put it in."""
    return f"Provisioned {name} in {answer.region}"


app = mcp.streamable_http_app(stateless_http=True)
