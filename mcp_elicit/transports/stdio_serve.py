"""stdio, server side, as this process serves: ``serve_stdio`` runs a ``StdioServer`` on
the process's own stdin and stdout (``stdio_server`` holds the rules of the protocol on
them).

Rules: started with fd 0 or fd 1 closed, it says so and returns: there is nothing to
read, or nobody to answer. SIGTERM and SIGINT (Ctrl-C) stop the server at once
(``StdioServer.stop``: what runs is cancelled unanswered, what waits to be written
dropped); after SIGINT it raises KeyboardInterrupt, as Ctrl-C would, and the handlers are
removed again either way. Where signals cannot be handled (not POSIX, not the main
thread), it serves without.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import signal
import sys

from mcp_elicit.server.app import Server
from mcp_elicit.transports.stdio_server import StdioServer

__all__ = ["serve_stdio"]

log = logging.getLogger("mcp_elicit.stdio")


async def serve_stdio(server: Server) -> None:
    """Serve ``server`` on this process's stdin and stdout until stdin closes, or until
    SIGTERM or SIGINT; after SIGINT, raises KeyboardInterrupt (as Ctrl-C would). Started
    with fd 0 or fd 1 closed, it says so and returns: there is nothing to read, or nobody to
    answer (and the number may belong to another file by now, the event loop's own, say)."""
    for stream, fd, name in ((sys.stdin, 0, "stdin"), (sys.stdout, 1, "stdout")):
        if stream is None:  # what Python makes of a descriptor not open when it started
            log.warning(
                "%s is not open (fd %d was closed when the process started): nothing to serve", name, fd
            )
            return
    stdio = StdioServer(server)
    loop = asyncio.get_running_loop()
    caught: list[signal.Signals] = []

    def stop(sig: signal.Signals) -> None:
        caught.append(sig)
        stdio.stop(f"{sig.name} received")

    handled = []
    for sig in (signal.SIGTERM, signal.SIGINT):
        with contextlib.suppress(NotImplementedError, RuntimeError, ValueError):  # not POSIX, not main thread
            loop.add_signal_handler(sig, stop, sig)
            handled.append(sig)
    try:
        await stdio.run()
    finally:
        for sig in handled:
            loop.remove_signal_handler(sig)
    if signal.SIGINT in caught:
        raise KeyboardInterrupt
