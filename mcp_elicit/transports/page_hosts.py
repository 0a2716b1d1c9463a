"""Where the URL-mode pages are, for a server with no ``public_url``, whichever of its
transports a link is made for: in a request an HTTP app serves, that app (the Host the
request came to, the prefix the app is mounted under), which serves the pages next to its
endpoint; anywhere else (a stdio request, a task it began), the loopback page server
stdio runs while it serves (``loopback_pages``).

Rules:

* One ``LearnedBase`` per server, the page host (``url_mode.page_host``) of every HTTP
  app made for it: the first app makes it, the next take it. Each app notes in it the
  request it serves, in a context variable: a link is never built from another request's
  Host, nor another app's.
* stdio's loopback pages are the page host while it serves when no HTTP app was made
  for the server, else the ``LearnedBase``'s fallback; an HTTP app made while stdio
  serves puts them behind its ``LearnedBase``. stdio's stop takes them out and closes
  them: no later link points at a page server that is gone.
* A page host of the user's own (``url_mode.page_host`` set before), or a ``public_url``,
  is left as it is.
"""

from __future__ import annotations

import contextlib
import contextvars
from collections.abc import AsyncIterator, Mapping
from typing import TYPE_CHECKING

from starlette.types import Scope

from mcp_elicit.errors import ConfigError
from mcp_elicit.transports.http_bearer import app_base
from mcp_elicit.transports.loopback_pages import LoopbackPages

if TYPE_CHECKING:
    from mcp_elicit.server.app import Server
    from mcp_elicit.server.url_mode import PageHost

__all__ = ["LearnedBase", "learned_base", "loopback_pages"]


class LearnedBase:
    """Where the pages are, without a public URL: the base of the request being served
    (its allow-listed Host), seen by the handler it runs and the page it serves. Never
    another request's: with several hosts allowed, a request naming another Host must
    not decide where a link given to someone else points. Outside any HTTP request,
    ``fallback``'s (stdio's loopback pages, while stdio serves)."""

    def __init__(self) -> None:
        self._request: contextvars.ContextVar[tuple[Scope, Mapping[str, str]] | None] = (
            contextvars.ContextVar("pages_base", default=None)
        )
        #: Note ``(scope, headers)``, the request being served (for its handlers too). Its
        #: base is built only when asked for: most requests make no page link. (The
        #: variable's own ``set``: no Python call on every request's path.)
        self.learn = self._request.set
        #: Where the pages are for what no HTTP request of the server's runs.
        self.fallback: PageHost | None = None

    async def base_url(self) -> str:
        request = self._request.get()
        if request is not None:
            return app_base(*request)
        if self.fallback is not None:
            return await self.fallback.base_url()
        raise ConfigError("the pages' address is not known here: set Server(public_url=...)")


def learned_base(server: Server) -> LearnedBase:
    """The ``LearnedBase`` an HTTP app made for ``server`` notes its requests in: another
    app's, else a new one, made the page host unless the user set one of their own (stdio's
    loopback pages, serving now, go behind it)."""
    url_mode = server.url_mode
    host = url_mode.page_host
    if isinstance(host, LearnedBase):
        return host
    learned = LearnedBase()
    if host is None or isinstance(host, LoopbackPages):
        learned.fallback = host
        url_mode.page_host = learned
    return learned


@contextlib.asynccontextmanager
async def loopback_pages(server: Server) -> AsyncIterator[None]:
    """stdio's pages for ``server`` while it serves (the block): on 127.0.0.1, started on
    first use, behind the HTTP apps' ``LearnedBase`` when there is one; taken out and
    closed after. Nothing without a public URL to leave alone or a page host of the
    user's own."""
    url_mode = server.url_mode
    host = url_mode.page_host
    pages: LoopbackPages | None = None
    if url_mode.public_url is None:
        if host is None:
            pages = url_mode.page_host = LoopbackPages(server)
        elif isinstance(host, LearnedBase) and host.fallback is None:
            pages = host.fallback = LoopbackPages(server)
    try:
        yield
    finally:
        if pages is not None:
            host = url_mode.page_host
            if host is pages:
                url_mode.page_host = None
            elif isinstance(host, LearnedBase) and host.fallback is pages:
                host.fallback = None
            await pages.close()
