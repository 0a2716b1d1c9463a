"""An httpx transport that records, for ``cli.diagnose``, every response and every error
of an HTTP connection (into ``targets.Observed``). Its requests go where httpx's own
client sends them: through the proxy the environment names for their URL, if any
(``HTTPS_PROXY``, ``HTTP_PROXY``, ``ALL_PROXY``, ``NO_PROXY``: ``transports.http_proxy``),
else directly. A request that waits on the proxy (a connection, a tunnel's answer) is kept
in ``Observed.proxy_waits`` while it does, and for good when it is cut short doing so.

Its own module so that httpx is imported only when a TARGET is an HTTP URL.
"""

from __future__ import annotations

import httpx

from mcp_elicit.cli.targets import HttpSeen, Observed
from mcp_elicit.transports.http_proxy import through_environment, waiting_on_the_proxy

__all__ = ["Watch"]


class Watch(httpx.AsyncBaseTransport):
    """Records every response and every error of the HTTP connection."""

    def __init__(self, observed: Observed) -> None:
        self._inner = through_environment(httpx.AsyncHTTPTransport())
        self._observed = observed

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        with waiting_on_the_proxy() as wait:  # kept while it waits on a proxy, or was cut doing so
            self._observed.proxy_waits.append(wait)
            try:
                response = await self._inner.handle_async_request(request)
            except Exception as exc:
                self._observed.errors.append(exc)
                raise
            finally:
                if wait.what is None:
                    self._observed.proxy_waits.remove(wait)
        self._observed.responses.append(
            HttpSeen(
                request.method,
                str(request.url),
                response.status_code,
                {k.lower(): v for k, v in response.headers.items()},
            )
        )
        return response

    async def aclose(self) -> None:
        await self._inner.aclose()
