"""What runs on this computer for the person at it: a quiet web server on 127.0.0.1 (the
sign-in callback, the browser answerer's pages) and the person's browser.

Rules:

* The server is uvicorn in the caller's event loop, quietly: no signal handlers (Ctrl-C
  stays the caller's), no logging set up, no access log, no lifespan, no WebSockets. It
  serves on a socket the caller bound (to 127.0.0.1), and ``stop`` always ends it: a
  graceful shutdown first, then a forced one, then the listeners and the socket closed.
* A browser is started in a daemon thread of its own that nothing waits for:
  ``webbrowser`` runs a ``$BROWSER`` command it does not know and waits for it to exit,
  which may be when the person quits the browser. An opener still running after a short
  wait is taken to have started one.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import socket
import threading
from collections.abc import Callable, Iterator
from typing import Any, Final

__all__ = ["LocalServer", "Opener", "open_in_browser", "serve_quietly", "start_opener"]

log = logging.getLogger("mcp_elicit.transports")

#: Opens a URL in a browser; True when it could.
Opener = Callable[[str], bool]

_STOP_SECONDS: Final = 5.0
#: Seconds an opener may take before it is taken to have started a browser and still run.
OPEN_WAIT: Final = 2.0


class LocalServer:
    """uvicorn serving one app on a socket of ours, stopped (socket closed) with ``stop``."""

    def __init__(self, server: Any, task: asyncio.Task[None], sock: socket.socket) -> None:
        self.server = server
        self.task = task
        self.sock = sock
        self.port = int(sock.getsockname()[1])

    async def stop(self) -> None:
        self.server.should_exit = True
        try:
            # asyncio.wait, not wait_for: a server task that was cancelled is not a
            # cancellation of this one
            if not (await asyncio.wait({self.task}, timeout=_STOP_SECONDS))[0]:
                self.server.force_exit = True
                self.task.cancel()
                await asyncio.wait({self.task}, timeout=_STOP_SECONDS)
            if self.task.done() and not self.task.cancelled() and self.task.exception() is not None:
                log.debug("the local server ended with %r", self.task.exception())
        finally:
            if not self.task.done():
                self.task.cancel()
            # A server cut short (cancelled) never ran its shutdown: close its listeners
            # through the event loop first, so that the loop lets go of the socket before
            # it is closed (closing it under the loop could free a descriptor the loop
            # would close again later). After a normal shutdown both are no-ops.
            for listener in getattr(self.server, "servers", None) or ():
                listener.close()
            self.sock.close()


async def serve_quietly(
    sock: socket.socket, app: Any, *, grace: int, failed: Callable[[], Exception]
) -> LocalServer:
    """``app`` served on ``sock`` (bound by the caller), started; ``failed()`` is raised when
    the server ends before it starts, and the socket is then closed."""
    import uvicorn

    class Quiet(uvicorn.Server):
        @contextlib.contextmanager
        def capture_signals(self) -> Iterator[None]:  # Ctrl-C stays the caller's
            yield

    config = uvicorn.Config(
        app,
        log_config=None,  # leave the caller's logging alone
        log_level="warning",
        access_log=False,
        lifespan="off",
        ws="none",
        timeout_graceful_shutdown=grace,
    )
    server = Quiet(config)
    task = asyncio.ensure_future(server.serve(sockets=[sock]))
    running = LocalServer(server, task, sock)
    try:
        while not server.started:
            if task.done():
                task.result()
                raise failed()
            await asyncio.sleep(0.005)
    except BaseException:
        await running.stop()
        raise
    return running


def start_opener(open_url: Opener, url: str) -> asyncio.Future[bool]:
    """Run ``open_url(url)`` in a daemon thread of its own; the future says whether a
    browser started (an opener that raised did not start one). Nothing waits for the
    thread, not even the interpreter's exit (which a worker of the default executor would
    hold up)."""
    loop = asyncio.get_running_loop()
    outcome: asyncio.Future[bool] = loop.create_future()

    def settle(opened: bool) -> None:
        if not outcome.done():
            outcome.set_result(opened)

    def run() -> None:
        try:
            opened = bool(open_url(url))
        except Exception:  # an opener's failure is the same as no browser
            log.warning("starting a browser for the page failed", exc_info=True)
            opened = False
        with contextlib.suppress(RuntimeError):  # the loop is closed: nobody to tell
            loop.call_soon_threadsafe(settle, opened)

    threading.Thread(target=run, name="mcp-elicit-browser", daemon=True).start()
    return outcome


async def open_in_browser(open_url: Opener, url: str, *, wait: float = OPEN_WAIT) -> bool:
    """Start a browser on ``url``: whether one started. An opener still running after
    ``wait`` seconds is taken to have started one (see :func:`start_opener`)."""
    try:
        return await asyncio.wait_for(asyncio.shield(start_opener(open_url, url)), wait)
    except TimeoutError:
        return True
