"""A server for the relayed-errors tests over stdio: a tool that raises the error member it
is given, as a handler relaying an upstream server's answer does."""

from __future__ import annotations

from typing import Any

from mcp_elicit import Server
from mcp_elicit.errors import ProtocolError

app = Server("relaying")


@app.tool(description="Raises the JSON-RPC error member it is given")
async def relay_error(error: dict[str, Any]) -> str:
    raise ProtocolError.from_error(error)
