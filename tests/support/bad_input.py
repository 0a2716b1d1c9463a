"""What the bad-input tests of the Streamable HTTP server share: JSON headers, a ``tools/list``
message, and the conformance server as an ASGI app in memory with a schema-checked client."""

from __future__ import annotations

import functools
from typing import Any

import httpx

from mcp_elicit.cli.loader import load_server
from mcp_elicit.transports.http_server import StreamableHTTP

from support.http import (
    ACCEPT_BOTH,
    McpHttp,
    meta,
)
from support.procs import CONFORMANCE_SERVER
from support.wire import WireChecker

JSON_HEADERS = {"Content-Type": "application/json", "Accept": ACCEPT_BOTH}


def _tools_list(rid: object = 1) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": rid, "method": "tools/list", "params": {"_meta": meta()}}


@functools.cache
def conformance_app() -> StreamableHTTP:
    return StreamableHTTP(load_server(str(CONFORMANCE_SERVER)))


class AsgiClient:
    """A checked client of the conformance app over ``httpx.ASGITransport`` (no socket)."""

    def __init__(self, wire: WireChecker) -> None:
        self.wire = wire
        transport = httpx.ASGITransport(app=conformance_app())
        self.client = httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1")

    async def __aenter__(self) -> McpHttp:
        await self.client.__aenter__()
        return McpHttp(self.client, "http://127.0.0.1/mcp", self.wire)

    async def __aexit__(self, *exc: Any) -> None:
        await self.client.__aexit__(*exc)
