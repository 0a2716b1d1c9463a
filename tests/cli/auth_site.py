"""A protected MCP server and its authorization server (``support.mcp_authorization``)
served on 127.0.0.1 from a thread of its own, so that the command line can run against it
in process (``main`` runs its own event loop) or in a pseudo-terminal, for the sign-in
tests. The provider's counters (``exchanges``, ``refreshes``, ``registrations``) can be
read while it runs."""

from __future__ import annotations

import asyncio
import contextlib
import threading
from collections.abc import Callable, Iterator
from typing import Any

import httpx

from mcp_elicit import Context, Server

from support.mcp_authorization import McpAuthorization
from support.procs import START_TIMEOUT, uvicorn_server


def protected() -> Server:
    app = Server("protected", "1.0.0", title="Protected notes")

    @app.tool()
    async def whoami(ctx: Context) -> str:
        """Says hello to whoever signed in."""
        return "hello from the protected server"

    return app


@contextlib.contextmanager
def served(front: Callable[[McpAuthorization], Any] | None = None) -> Iterator[McpAuthorization]:
    """``McpAuthorization`` serving ``protected()`` until the block ends; ``front(site)``,
    when given, is the ASGI app served instead (one in front of ``site.app``)."""
    site = McpAuthorization(protected())
    app = site.app if front is None else front(site)
    ready = threading.Event()
    stop: list[tuple[asyncio.AbstractEventLoop, asyncio.Event]] = []
    failed: list[BaseException] = []

    async def serve() -> None:
        stopping = asyncio.Event()
        async with uvicorn_server(app) as running:
            site.base = f"http://127.0.0.1:{running.port}"
            stop.append((asyncio.get_running_loop(), stopping))
            ready.set()
            await stopping.wait()

    def run() -> None:
        try:
            asyncio.run(serve())
        except BaseException as exc:
            failed.append(exc)
        finally:
            ready.set()

    thread = threading.Thread(target=run, name="auth-site", daemon=True)
    thread.start()
    assert ready.wait(START_TIMEOUT), "the protected server did not start"
    if failed:
        raise failed[0]
    try:
        yield site
    finally:
        loop, stopping = stop[0]
        loop.call_soon_threadsafe(stopping.set)
        thread.join(START_TIMEOUT)
    if failed:
        raise failed[0]


def browse(url: str) -> str:
    """The browser's part: open the authorization URL (the provider approves at once) and
    follow its redirect back to the loopback callback; the page that shows there."""
    with httpx.Client(follow_redirects=False, timeout=10) as http:
        answer = http.get(url)
        assert answer.is_redirect, answer.text
        page = http.get(answer.headers["location"])
    assert page.status_code == 200, page.text
    return page.text
