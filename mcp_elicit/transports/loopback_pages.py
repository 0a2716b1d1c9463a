"""The URL-mode pages (``transports.pages``) served on 127.0.0.1, for servers reached over
stdio, which have no HTTP app of their own.

Rules:

* Started on first use (``base_url``), on a random port of 127.0.0.1, quietly (no access
  log: a link's token and a sign-in's code travel in the query), and stopped by ``close``.
* Only a loopback ``Host`` (421 otherwise) and no ``Origin`` but this machine's (403): a
  site whose name resolves to 127.0.0.1 (DNS rebinding) would otherwise reach the pages
  from the person's own browser. ``Origin: null`` is taken, as by every page: a page's own
  form is posted with it (``pages.PAGE_NULL_ORIGIN``).
"""

from __future__ import annotations

import asyncio
import logging
import socket

from starlette.responses import Response
from starlette.types import ASGIApp, Receive, Scope, Send

from mcp_elicit.errors import TransportError
from mcp_elicit.server.app import Server
from mcp_elicit.server.url_mode import PAGES_PATH
from mcp_elicit.transports.http_exchange import host_only
from mcp_elicit.transports.local import LocalServer, serve_quietly
from mcp_elicit.transports.pages import LOOPBACK_NAMES, PAGE_NULL_ORIGIN, pages_app, refusal_page

__all__ = ["LoopbackPages"]

log = logging.getLogger("mcp_elicit.pages")


def _loopback_only(app: ASGIApp, server: str) -> ASGIApp:
    """``app``, refusing a request whose ``Host`` is not a loopback name (421) or whose
    ``Origin`` is another site (403), in a page naming the ``server`` that refused."""

    async def guarded(scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope["headers"]}
            host, origin = headers.get("host"), headers.get("origin")
            refusal: Response | None = None
            if host is None or host_only(host) not in LOOPBACK_NAMES:
                refusal = refusal_page(
                    421, "Wrong address", "Open the link exactly as your application gave it.", server=server
                )
            elif (
                origin not in (None, PAGE_NULL_ORIGIN)
                and host_only(origin.split("://", 1)[-1]) not in LOOPBACK_NAMES
            ):
                refusal = refusal_page(
                    403, "Not available", "This page cannot be used from another site.", server=server
                )
            if refusal is not None:
                await refusal(scope, receive, send)
                return
        await app(scope, receive, send)

    return guarded


class LoopbackPages:
    """Serves ``server``'s pages on 127.0.0.1, started on first use."""

    def __init__(self, server: Server) -> None:
        self.server = server
        self._base: str | None = None
        self._lock = asyncio.Lock()
        self._running: LocalServer | None = None

    async def base_url(self) -> str:
        async with self._lock:
            if self._base is None:
                self._base = await self._start()
            return self._base

    async def _start(self) -> str:
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(("127.0.0.1", 0))
        self._running = await serve_quietly(
            sock,
            _loopback_only(pages_app(self.server), self.server.title or self.server.name),
            grace=1,
            failed=lambda: TransportError("the URL-mode pages could not be served on 127.0.0.1"),
        )
        port = self._running.port
        log.info("URL-mode pages at http://127.0.0.1:%d%s", port, PAGES_PATH)
        return f"http://127.0.0.1:{port}"

    async def close(self) -> None:
        if self._running is not None:
            await self._running.stop()
