"""An httpx transport that records every byte a client exchanges through it (paths, headers and
bodies, both ways), for tests that search an MCP connection for a secret it must never carry."""

from __future__ import annotations

import httpx

__all__ = ["RecordingTransport"]


class RecordingTransport(httpx.AsyncBaseTransport):
    """Records every byte exchanged with the MCP endpoint in ``bytes``."""

    def __init__(self) -> None:
        self.inner = httpx.AsyncHTTPTransport()
        self.bytes = bytearray()

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        self.bytes += request.url.raw_path + b"".join(
            f"{k}: {v}".encode() for k, v in request.headers.items()
        )
        self.bytes += request.content
        response = await self.inner.handle_async_request(request)
        body = await response.aread()
        self.bytes += body + b"".join(f"{k}: {v}".encode() for k, v in response.headers.items())
        return httpx.Response(response.status_code, headers=response.headers, content=body)

    async def aclose(self) -> None:
        await self.inner.aclose()
