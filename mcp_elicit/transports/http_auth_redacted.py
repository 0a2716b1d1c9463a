"""The base of the client's OAuth flow (``transports.http_auth``): what it raises names
URLs as the transport's own messages do.

Rules: an :class:`AuthorizationError` leaving the flow, whichever part raised it
(discovery, a document's checks, the token endpoint), names every URL without its user
name and password, query or fragment (``redact_urls``): an MCP server URL may carry a key
in its query, and the message ends up in logs, on terminals and in CI output. The flow
itself still uses the URL as given.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator, Generator

import httpx

from mcp_elicit.errors import AuthorizationError
from mcp_elicit.telemetry import redact_urls

__all__ = ["RedactedAuth"]


class RedactedAuth(httpx.Auth):
    """An async ``httpx.Auth`` whose flow is ``_flow``; see the module rules."""

    def _flow(self, request: httpx.Request) -> AsyncGenerator[httpx.Request, httpx.Response]:
        raise NotImplementedError

    def sync_auth_flow(self, request: httpx.Request) -> Generator[httpx.Request, httpx.Response, None]:
        raise RuntimeError("OAuth works with httpx.AsyncClient only")
        yield request  # pragma: no cover

    async def async_auth_flow(self, request: httpx.Request) -> AsyncGenerator[httpx.Request, httpx.Response]:
        flow = self._flow(request)
        try:
            sent = await anext(flow)
            while True:
                response = yield sent
                sent = await flow.asend(response)
        except StopAsyncIteration:
            return
        except AuthorizationError as exc:
            exc.args = (redact_urls(str(exc)),)
            raise
        finally:
            await flow.aclose()
