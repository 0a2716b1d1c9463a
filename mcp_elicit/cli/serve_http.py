"""``serve --http``: the server under uvicorn, and how it stops.

Rules:

* It says once that it serves (where), after it listens, not before; a start-up that fails
  (a port in use, a store that cannot be used) exits 2, saying why.
* SIGTERM (or Ctrl-C) stops it gracefully: it says once, at INFO, that it is stopping and
  what it waits for; the listening socket and idle keep-alive connections close at once
  (a new request meets "connection refused"); sessions end; a request still running gets
  ``SHUTDOWN_GRACE`` seconds, then a JSON-RPC 503. A stopped server exits 0.
* uvicorn's access log (``--log-level debug``) never shows a link's query.
* The grace running out is said as a warning of its own (``mcp_elicit.cli``: how many
  requests are cut short, and that each answers 503), not as uvicorn's ERROR line in
  uvicorn's format: it is the documented end of a request too slow to finish, not a fault.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib.util
import logging
import signal
import socket
import sys
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from mcp_elicit.server.app import Server

__all__ = ["SHUTDOWN_GRACE", "serve_http"]

#: Seconds a request still running at the stop signal gets before it is cancelled.
SHUTDOWN_GRACE = 10
log = logging.getLogger("mcp_elicit.cli")


def serve_http(
    server: Server, address: tuple[str, int], args: argparse.Namespace, *, given_public: bool
) -> int:
    """Serve ``server`` at ``address`` until stopped; the exit code."""
    import uvicorn

    from mcp_elicit.cli.address import taken
    from mcp_elicit.cli.output import write
    from mcp_elicit.transports.http_server import LOOPBACK_HOSTS, StreamableHTTP

    host, port = address
    allowed = [*LOOPBACK_HOSTS, *args.allow_host]
    path = "/mcp" if args.path is None else args.path
    app = StreamableHTTP(server, path=path, allowed_hosts=allowed, route=args.route)
    config = uvicorn.Config(
        app,
        host=host,
        port=port,
        log_level="warning" if args.log_level == "info" else args.log_level,
        lifespan="on",
        http="httptools" if _has("httptools") else "h11",
        loop="uvloop" if _has("uvloop") else "asyncio",
        # what still runs this long after the stop signal (a slow tool) is cancelled
        timeout_graceful_shutdown=SHUTDOWN_GRACE,
    )

    class Runner(uvicorn.Server):
        async def startup(self, sockets: list[socket.socket] | None = None) -> None:
            await super().startup(sockets)  # exits when the app's start-up or the bind fails
            shown = f"[{host}]" if ":" in host else host  # said once it listens, not before
            said = f"mcp-elicit: serving {server.name!r} at http://{shown}:{port}{app.path}"
            if given_public and server.url_mode.public_url is not None:  # where people reach it
                said += f" (public URL {server.url_mode.public_url}{app.path})"
            write(said, sys.stderr)

        async def shutdown(self, sockets: list[socket.socket] | None = None) -> None:
            # uvicorn counts every open request: the streams among them (sessions' standalone
            # streams, subscriptions) end now, with their sessions, and are not waited for
            streams = sum(s.listeners for s in server.sessions.live()) + len(server.subscriptions)
            running = max(len(self.server_state.tasks) - streams, 0)
            sessions = len(server.sessions)
            log.info(  # uvicorn's own lines are below the log level: say it once, here
                "stopping: new connections are refused; waiting up to %d s for %d running "
                "request%s; %d session%s end%s now; %d open stream%s close%s now",
                SHUTDOWN_GRACE,
                running,
                _plural(running),
                sessions,
                _plural(sessions),
                _verb(sessions),
                streams,
                _plural(streams),
                _verb(streams),
            )
            app.begin_shutdown()  # sessions end now: their open streams would hold the exit
            await super().shutdown(sockets)

    if args.log_level == "debug":  # uvicorn's access log is on: keep page links' tokens out of it
        logging.getLogger("uvicorn.access").addFilter(_no_query)
    grace_over = logging.getLogger("uvicorn.error")
    grace_over.addFilter(_grace_over)
    runner = Runner(config)

    def stop(signum: int, frame: object) -> None:
        runner.should_exit = True

    # uvicorn stops gracefully on SIGTERM, then sends the signal again to the handler it
    # found: this one takes it, so a stopped server exits 0 as the help says, and a
    # SIGTERM before uvicorn's own handler is in place still stops it (SIGINT keeps
    # Python's handler: Ctrl-C exits 130).
    previous = signal.signal(signal.SIGTERM, stop)
    try:
        with contextlib.suppress(SystemExit):  # uvicorn exits by itself when the start-up fails
            runner.run()
    finally:
        signal.signal(signal.SIGTERM, previous)
        grace_over.removeFilter(_grace_over)
    if not runner.started:  # uvicorn has logged why (a port in use, a store that cannot be used)
        said = taken(host, port)
        if said:
            write(f"mcp-elicit: {said}", sys.stderr)
        return 2
    return 0


def _no_query(record: logging.LogRecord) -> bool:
    """Drop the query from an access-log line's path: a URL-mode page's one-time link
    (``?t=``) and a sign-in callback's ``code`` and ``state`` travel there."""
    args = record.args
    if isinstance(args, tuple) and len(args) >= 3 and isinstance(args[2], str) and "?" in args[2]:
        record.args = (*args[:2], args[2].split("?", 1)[0] + "?…", *args[3:])
    return True


#: uvicorn's line when ``timeout_graceful_shutdown`` runs out (its argument: the task count).
_GRACE_OVER = "Cancel %s running task(s), timeout graceful shutdown exceeded"


def _grace_over(record: logging.LogRecord) -> bool:
    """Say uvicorn's "grace exceeded" ERROR as this server's own warning, and drop it."""
    if record.msg != _GRACE_OVER:
        return True
    args = record.args
    count = args[0] if isinstance(args, tuple) and args and isinstance(args[0], int) else 0
    log.warning(
        "the %d s grace is over: %d request%s still running %s cut short (a JSON-RPC "
        "request is answered 503, which its client can send again, to another instance)",
        SHUTDOWN_GRACE,
        count,
        _plural(count),
        "is" if count == 1 else "are",
    )
    return False


def _plural(count: int) -> str:
    return "" if count == 1 else "s"


def _verb(count: int) -> str:
    """The ending of a verb in the present whose subject is ``count`` things."""
    return "s" if count == 1 else ""


def _has(module: str) -> bool:
    return importlib.util.find_spec(module) is not None
