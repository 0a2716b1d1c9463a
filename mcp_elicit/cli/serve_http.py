"""``serve --http``: the server under uvicorn, and how it stops.

Rules:

* It binds its address first (``address.listen_on``): one that cannot be bound (a port in
  use) exits 2 saying why, before the server starts. It says once that it serves (where),
  after it listens, not before; a start-up that fails (a store that cannot be used, a
  lifespan that fails on entry) exits 2, saying why as ``serve`` over stdio does
  (``mcp-elicit: cannot serve: ...``), not in uvicorn's words.
* SIGTERM (or Ctrl-C) while the server is still starting (a lifespan waiting for a
  database that does not answer) gives the start up: what was being opened is told (it is
  cancelled) and closes what it had opened, nothing is served, and it exits as a stop
  does (0, or 130 for Ctrl-C). Another signal meanwhile cuts that closing short.
* Once it serves, SIGTERM (or Ctrl-C) stops it gracefully: it says once, at INFO, that it is stopping and
  what it waits for; the listening socket and idle keep-alive connections close at once
  (a new request meets "connection refused"); sessions end; a request still running gets
  ``--shutdown-grace`` seconds (``SHUTDOWN_GRACE``), then a JSON-RPC 503. A stopped server
  exits 0.
* The options given with ``--http`` (``cli.serve_http_options``) are the app's: its path,
  the Hosts it takes, its route, and the limits given (the others keep
  ``StreamableHTTP``'s defaults).
* uvicorn's access log (``--log-level debug``) never shows a link's query, and goes to
  stderr with every other line serve logs (uvicorn's own default is stdout).
* The grace running out is said as a warning of its own (``mcp_elicit.cli``: how many
  requests are cut short, and that each answers 503), not as uvicorn's ERROR line in
  uvicorn's format: it is the documented end of a request too slow to finish, not a fault.
"""

from __future__ import annotations

import asyncio
import contextlib
import copy
import importlib.util
import logging
import signal
import socket
import sys
from types import FrameType
from typing import TYPE_CHECKING, Any

from mcp_elicit.errors import CliError

if TYPE_CHECKING:
    from mcp_elicit.cli.serve_http_options import HttpOptions
    from mcp_elicit.server.app import Server
    from mcp_elicit.transports.http_exchange import Message, Receive, Scope, Send

__all__ = ["SHUTDOWN_GRACE", "serve_http"]

#: Seconds a request still running at the stop signal gets before it is cancelled, unless
#: ``--shutdown-grace`` says otherwise.
SHUTDOWN_GRACE = 10.0
log = logging.getLogger("mcp_elicit.cli")


def serve_http(
    server: Server, address: tuple[str, int], options: HttpOptions, log_level: str, *, given_public: bool
) -> int:
    """Serve ``server`` at ``address`` until stopped; the exit code. ``CliError`` (exit 2)
    for an option the loaded server cannot use, an address that cannot be bound, or a
    start-up that failed."""
    import uvicorn

    from mcp_elicit.cli.address import listen_on
    from mcp_elicit.cli.output import write
    from mcp_elicit.cli.serve_http_options import http_app

    app = http_app(server, options)
    failed: list[str] = []  # why the app's start-up failed, said once uvicorn has stopped
    lifespan: list[asyncio.Task[Any]] = []  # the task uvicorn runs the app's lifespan in

    async def served(scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "lifespan":
            await app(scope, receive, send)
            return
        task = asyncio.current_task()
        if task is not None:
            lifespan.append(task)

        async def told(message: Message) -> None:
            if message["type"] == "lifespan.startup.failed":  # said here, in serve's own words
                failed.append(str(message.get("message", "")))
                message = {"type": "lifespan.startup.failed", "message": ""}
            await send(message)

        await app(scope, receive, told)

    host, port = address
    sockets = listen_on(host, port)  # before the start: an address that cannot be bound opens nothing
    grace = options.shutdown_grace
    # uvicorn's access log (on at debug) goes to stdout by default: serve logs to stderr
    logging_config = copy.deepcopy(uvicorn.config.LOGGING_CONFIG)
    logging_config["handlers"]["access"]["stream"] = "ext://sys.stderr"
    config = uvicorn.Config(
        served,
        host=host,
        port=port,
        log_config=logging_config,
        log_level="warning" if log_level == "info" else log_level,
        lifespan="on",
        http="httptools" if _has("httptools") else "h11",
        loop="uvloop" if _has("uvloop") else "asyncio",
        # what still runs this long after the stop signal (a slow tool) is cancelled
        timeout_graceful_shutdown=grace,  # type: ignore[arg-type]  # uvicorn's hint says int; it takes seconds
    )

    class Runner(uvicorn.Server):
        #: The task starting the server, while it does; the signal that gave the start up.
        starting: asyncio.Task[Any] | None = None
        gave_up: int | None = None

        def handle_exit(self, sig: int, frame: FrameType | None) -> None:
            super().handle_exit(sig, frame)
            task = self.starting
            if task is not None:  # uvicorn would wait for the start-up to end first
                task.get_loop().call_soon_threadsafe(self._give_up, task, sig)

        def _give_up(self, task: asyncio.Task[Any], sig: int) -> None:
            """Cancel the start-up, unless it has ended meanwhile (then this is a stop). Another
            signal while it is given up cancels again what the app's start still runs (its
            lifespan closing what it had opened): it is forced."""
            if self.starting is not task:
                return
            if self.gave_up is None:
                self.gave_up = sig
                task.cancel()
            else:
                for running in lifespan:
                    running.cancel()

        async def startup(self, sockets: list[socket.socket] | None = None) -> None:
            self.starting = asyncio.current_task()
            try:
                await super().startup(sockets)  # exits when the app's start-up fails
            except asyncio.CancelledError:
                if self.gave_up is None or self.starting is None:
                    raise
                self.starting.uncancel()  # this cancellation was ours, and is handled
                self.should_exit = True
                log.info(
                    "%s received while starting; stopping before serving", signal.Signals(self.gave_up).name
                )
                # the app's start is given up here, while a signal is only noted: left to
                # asyncio.run's end, a second Ctrl-C there cut it short, its task destroyed
                for running in lifespan:
                    running.cancel()
                if lifespan:
                    await asyncio.wait(lifespan)
                return
            finally:
                self.starting = None
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
                "stopping: new connections are refused; waiting up to %g s for %d running "
                "request%s; %d session%s end%s now; %d open stream%s close%s now",
                grace,
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

    if log_level == "debug":  # uvicorn's access log is on: keep page links' tokens out of it
        logging.getLogger("uvicorn.access").addFilter(_no_query)
    said_here = _SaidHere(grace, failed)
    logging.getLogger("uvicorn.error").addFilter(said_here)
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
            runner.run(sockets=sockets)
    finally:
        signal.signal(signal.SIGTERM, previous)
        logging.getLogger("uvicorn.error").removeFilter(said_here)
        for sock in sockets:
            sock.close()
    if failed:  # a store that cannot be used, a lifespan failing on entry: said as over stdio,
        # by the command line, which makes it inert (it may quote a database's or Redis's reply)
        raise CliError(f"cannot serve: {failed[0]}", exit_code=2)
    # stopped while starting is a stop (a SIGINT has raised KeyboardInterrupt: 130)
    return 0 if runner.started or runner.gave_up is not None else 2


def _no_query(record: logging.LogRecord) -> bool:
    """Drop the query from an access-log line's path: a URL-mode page's one-time link
    (``?t=``) and a sign-in callback's ``code`` and ``state`` travel there."""
    args = record.args
    if isinstance(args, tuple) and len(args) >= 3 and isinstance(args[2], str) and "?" in args[2]:
        record.args = (*args[:2], args[2].split("?", 1)[0] + "?…", *args[3:])
    return True


#: uvicorn's line when ``timeout_graceful_shutdown`` runs out (its argument: the task count).
_GRACE_OVER = "Cancel %s running task(s), timeout graceful shutdown exceeded"


#: uvicorn's line when the app's start-up failed (the reason, said by ``serve``, before it).
_STARTUP_FAILED = "Application startup failed. Exiting."


class _SaidHere(logging.Filter):
    """uvicorn's lines that ``serve`` says in its own words, dropped: the grace running out
    (said as this server's warning) and a start-up that failed (said once uvicorn has
    stopped, from ``failed``, as over stdio)."""

    def __init__(self, grace: float, failed: list[str]) -> None:
        super().__init__()
        self.grace = grace
        self.failed = failed

    def filter(self, record: logging.LogRecord) -> bool:
        if record.msg == _STARTUP_FAILED:
            return not self.failed
        if record.msg != _GRACE_OVER:
            return True
        args = record.args
        count = args[0] if isinstance(args, tuple) and args and isinstance(args[0], int) else 0
        log.warning(
            "the %g s grace is over: %d request%s still running %s cut short (a JSON-RPC "
            "request is answered 503, which its client can send again, to another instance)",
            self.grace,
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
