"""The browser answerer's answer server: an ASGI app on 127.0.0.1 at a random port, one per
round, started and stopped by ``ui.web``.

Rules:

* Bound to 127.0.0.1 only (never a wildcard address); the port is the system's choice,
  known before the app is made, so the app can check ``Host`` against it.
* uvicorn runs in the caller's event loop, quietly: no signal handlers (Ctrl-C stays the
  caller's), no logging set up, no access log, no lifespan, no WebSockets.
"""

from __future__ import annotations

import asyncio
import contextlib
import socket
from collections.abc import Callable, Iterator
from typing import Any

from mcp_elicit.errors import UsageError

__all__ = ["Running", "serve_local"]


class Running:
    """An answer server on 127.0.0.1, stopped with ``stop``."""

    def __init__(self, server: Any, task: asyncio.Task[None], port: int) -> None:
        self.server = server
        self.task = task
        self.port = port

    async def stop(self) -> None:
        self.server.should_exit = True
        with contextlib.suppress(Exception):
            await asyncio.wait_for(asyncio.shield(self.task), 5)
        if not self.task.done():
            self.task.cancel()


async def serve_local(make_app: Callable[[int], Any]) -> Running:
    """``make_app(port)``, an ASGI app, served on 127.0.0.1 at a random port, started."""
    try:
        import uvicorn
    except ImportError:  # pragma: no cover - uvicorn is a core dependency
        raise UsageError("the browser answerer needs uvicorn: pip install 'mcp-elicit'") from None

    class Quiet(uvicorn.Server):
        @contextlib.contextmanager
        def capture_signals(self) -> Iterator[None]:  # Ctrl-C stays the caller's
            yield

    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.bind(("127.0.0.1", 0))
    port = int(sock.getsockname()[1])
    config = uvicorn.Config(
        make_app(port),
        log_config=None,  # leave the caller's logging alone
        log_level="warning",
        access_log=False,
        lifespan="off",
        ws="none",
        timeout_graceful_shutdown=2,
    )
    server = Quiet(config)
    task = asyncio.ensure_future(server.serve(sockets=[sock]))
    while not server.started:
        if task.done():
            sock.close()
            task.result()
        await asyncio.sleep(0.005)
    return Running(server, task, port)
