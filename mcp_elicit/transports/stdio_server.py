"""stdio, server side: newline-delimited JSON-RPC on stdin/stdout; logs go to stderr.

Rules: every request runs as its own task, so a slow one does not hold up the others;
``notifications/cancelled`` cancels the request it names, which is then never answered
(even when its handler returns all the same), and whose id is free at once for the
client's next request while the cancelled handler winds down (a 2025-11-25 session's own
check refuses it meanwhile: that revision never reuses an id in a session); once a
request is answered or cancelled, nothing more is sent for it (a notification from work
its handler left behind is dropped); a line that is not JSON gets a -32700 error without
an id, an oversized line a -32600 (with its id when the line starts with it; a debug
line says its size and the limit, never what it held), and the stream goes on; an
oversized line under the id of a session's question still waiting is its answer, too
long to read: the question is given up as refused, at once, and the -32600 names no id
(the id is the server's own). At most ``max_in_flight`` requests
(1024) are in flight at once (an answer not yet written counts, and so does a cancelled
request whose handler goes on: the refusal then says how many): one more is refused at
once (a -32600 with its id), and that refusal is written before the next line is read,
so a client that writes requests and never reads the answers is held back once stdout is
full, instead of having every request it writes taken and kept in memory. An answer to a
2025-11-25 session's question that is not a valid response gives the question up as
refused, at once (a -32600 without an id: the id is ours). When stdin closes, requests
in flight get a short grace period (``grace``, 2 s), then the ones still running are
cancelled unanswered (logged); the answers owed are written for as long as the client
keeps reading them, and given up (logged) once nothing is read from stdout for ``grace``
seconds; then the server stops. When stdout closes, it stops at once; on SIGTERM or
SIGINT (Ctrl-C) too (``stdio_serve`` handles them), saying so, what runs cancelled (in stdin's grace period too: nobody
hears its answer; the grace period ends there, so a handler that goes on after its
cancellation is cancelled again at once) and what waits to be written dropped (the spec's client sends SIGTERM
after waiting for the exit), then exits 0 (SIGTERM) or 130 (SIGINT), as after stdin's
end or an interruption. Only JSON-RPC messages are ever written to stdout: serving this
process's own stdout, the protocol writes to a duplicate of fd 1 and what is written to
fd 1 meanwhile goes to the log (``stdio_stdout``), or nowhere once the log's reader has
gone away: whatever tool code prints never fails it. Nor does what it writes to stderr:
fd 2 is a pipe copied to stderr meanwhile, dropped once stderr's reader has gone away
(``stdio_stderr``). stdout's pipe protocol and what stdin is are told in ``stdio_ends``.
A 2025-11-25 session's own messages (``notifications/elicitation/complete``,
``notifications/resources/updated``) are written as they are queued (a URL step's
completion is written by the request that asked it while that one runs, before its
answer: ``Session.complete``), and the session ends with stdin.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import sys
from collections.abc import Callable, Mapping
from typing import Any, BinaryIO

from mcp_elicit.errors import InvalidRequest, InvalidResponse, ProtocolError
from mcp_elicit.log_labels import log_stray_response, log_unreadable, request_where
from mcp_elicit.server.app import Server
from mcp_elicit.server.lifecycle import open_session_for, start_for, stop_for
from mcp_elicit.server.sessions import Session
from mcp_elicit.telemetry import notifying
from mcp_elicit.transports.oauth_client import HttpTokenExchange
from mcp_elicit.transports.page_hosts import loopback_pages
from mcp_elicit.transports.stdio_ends import PipeOutput, hung_up, unwatchable
from mcp_elicit.transports.stdio_stderr import own_stderr
from mcp_elicit.transports.stdio_stdout import own_stdout
from mcp_elicit.wire import jsonrpc
from mcp_elicit.wire.framing import LineFramer, Oversized, leading_id

__all__ = ["StdioServer"]

log = logging.getLogger("mcp_elicit.stdio")
#: OpenTelemetry's attributes of the connection: stdin and stdout.
_PIPE: Mapping[str, str | int] = {"network.transport": "pipe"}


class _Lines:
    """A request's channel: notifications become lines on stdout while the request is in
    flight; once it is answered or cancelled (``ended``), they are dropped."""

    __slots__ = ("_task", "ended", "transport")

    def __init__(self, out: StdioServer) -> None:
        self.transport = out  # its stop ends a subscription on it (``server.lifecycle``)
        self._task = asyncio.current_task()  # the request's, which a cancel cancels
        self.ended = False

    async def notify(self, method: str, params: dict[str, Any]) -> None:
        if not self.ended and not (self._task is not None and self._task in self.transport.given_up):
            await self.transport.write(jsonrpc.encode_notification(method, params))

    async def send(self, message: bytes) -> None:
        await self.transport.write(message)

    async def close_stream(self) -> bool:
        return False  # nothing to resume here


class StdioServer:
    def __init__(
        self,
        server: Server,
        *,
        max_line: int = 4 * 1024 * 1024,
        grace: float = 2.0,
        max_in_flight: int = 1024,
    ) -> None:
        self.server = server
        self.framer = LineFramer(max_line)
        self.grace = grace
        #: Requests in flight at most (their answers written or not); one more is refused.
        self.max_in_flight = max_in_flight
        #: Every request's task until it is done, its answer written or not (what counts
        #: against ``max_in_flight``); ``_tasks`` maps each id to the one that owns it.
        self._flight: set[asyncio.Task[None]] = set()
        #: A cancelled request gives its id up at once: the client may send the next one under
        #: it while the cancelled handler still winds down (or catches it and goes on).
        self._tasks: dict[jsonrpc.RequestId, asyncio.Task[None]] = {}
        #: The tasks of requests given up (cancelled by the client, by the server's stop, or
        #: still running after stdin's grace), never answered: not the tasks whose ``cancelling()`` is raised,
        #: which Python 3.11 leaves so after a ``TaskGroup`` whose child failed.
        self.given_up: set[asyncio.Task[None]] = set()
        #: The handshake session, once a 2025-11-25 (or earlier) client sent initialize.
        self.session: Session | None = None
        self._writer: asyncio.StreamWriter | None = None
        self._output: PipeOutput | None = None
        self._out: BinaryIO | None = None
        #: Bytes handed to stdout's pipe transport (written, or waiting in its buffer).
        self._taken = 0
        #: stdin's end was read: answers are buffered, not waited for (see :meth:`_watch`).
        self._input_ended = False
        #: Requests whose handler still runs (not those only writing their answer).
        self._running: dict[asyncio.Task[None], jsonrpc.RequestId] = {}
        #: Set once stdout can no longer be written (its reader closed it).
        self._out_gone = asyncio.Event()
        self._stopping = False
        #: ``Server.start`` while it runs (a lifespan opening a pool): a stop signal cancels it.
        self._starting: asyncio.Future[None] | None = None
        #: Forwards the session's own messages (not tied to a request) to stdout.
        self._pushing: asyncio.Task[None] | None = None

    async def write(self, data: bytes) -> None:
        """Write one message; once stdout is gone, nothing more (see :meth:`_stdout_gone`).
        Each message is handed over whole, so writers need no lock; once stdin has ended,
        nobody waits for the pipe to take it (what is left is flushed as the server stops)."""
        if self._out_gone.is_set():
            return
        try:
            if self._writer is not None:
                self._writer.write(data + b"\n")
                self._taken += len(data) + 1
                if not self._input_ended:
                    await self._writer.drain()
            elif self._out is not None:
                self._out.write(data + b"\n")
                self._out.flush()
        except OSError as exc:
            self._stdout_gone(exc)

    def stop(self, reason: str) -> None:
        """Stop at once (a stop signal): requests in flight are cancelled unanswered, and
        what is still waiting to be written is dropped."""
        if self._out_gone.is_set():
            return
        self._out_gone.set()
        if self._starting is not None:  # not serving yet: the start is given up
            log.info("%s; stopping before serving", reason)
            self._starting.cancel()
            return
        waiting = self._writer.transport.get_write_buffer_size() if self._writer is not None else 0
        log.info(
            "%s; stopping: %d request(s) in flight cancelled unanswered, %d bytes unwritten",
            reason,
            len(self._running),
            waiting,
        )
        self._give_up_all()
        if self._writer is not None:
            self._stopping = True
            if self._output is None or not self._output.lost:  # a closed pipe cannot be aborted
                self._writer.transport.abort()

    def _stdout_gone(self, exc: BaseException | None) -> None:
        """stdout's reader went away: nobody can be answered, so the server stops."""
        if not self._out_gone.is_set() and not self._stopping:
            self._out_gone.set()
            log.info("stdout was closed by its reader (%s); stopping", exc or "end of pipe")
            self._give_up_all()

    def _give_up_all(self) -> None:
        """Nobody will hear an answer: every request in flight is cancelled now, unanswered
        (in stdin's grace period too, which would let them run on)."""
        for task in self._flight:
            self.given_up.add(task)
            task.cancel()

    async def run(self, stdin: BinaryIO | None = None, stdout: BinaryIO | None = None) -> None:
        """Serve until stdin closes. Raises :class:`ConfigError` before reading anything
        when the server cannot start (a configured store that cannot be used)."""
        loop = asyncio.get_running_loop()
        self._starting = asyncio.ensure_future(start_for(self.server, self))
        try:
            await self._starting
        except asyncio.CancelledError:
            if not self._starting.cancelled():  # this task was cancelled, not the start
                raise
            return  # a stop signal came while it started: nothing was served, nothing is held
        finally:
            self._starting = None
        if self.server.url_mode.token_exchange is None:
            self.server.url_mode.token_exchange = HttpTokenExchange()
        async with loopback_pages(self.server):  # closed after the stop
            try:
                if stdout is not None:
                    await self._serve(loop, stdin, stdout)
                else:
                    with own_stderr(), own_stdout() as protocol_out:
                        await self._serve(loop, stdin, protocol_out)
            finally:
                await stop_for(self.server, self)

    async def _serve(
        self, loop: asyncio.AbstractEventLoop, stdin: BinaryIO | None, stdout: BinaryIO | None
    ) -> None:
        stdin = stdin or sys.stdin.buffer
        stdout = stdout or sys.stdout.buffer
        reader = asyncio.StreamReader(limit=2**20)
        # now: a pipe already at its end is closed by its transport while stdout is set up
        fd = stdin.fileno()
        try:
            if unwatchable(stdin):
                raise ValueError("not a pipe, socket or terminal")
            await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), stdin)
        except ValueError:  # a regular file or /dev/null: read it in a thread
            reader = None  # type: ignore[assignment]
        try:
            transport, self._output = await loop.connect_write_pipe(
                lambda: PipeOutput(self._stdout_gone), stdout
            )
            self._writer = asyncio.StreamWriter(transport, self._output, None, loop)
        except ValueError:
            self._out = stdout
        watched = fd if reader is not None else None  # a pipe, a socket or a terminal
        watching = (
            asyncio.ensure_future(self._watch(self._writer.transport, watched)) if self._writer else None
        )
        reading = asyncio.ensure_future(self._read(reader, stdin))
        out_gone = asyncio.ensure_future(self._out_gone.wait())
        await asyncio.wait([reading, out_gone], return_when=asyncio.FIRST_COMPLETED)
        if reading.done() and not reading.cancelled() and reading.exception() is None:
            self._input_ended = True
        for waiter in (reading, out_gone):
            waiter.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await waiter
        self.server.subscriptions.close_from(self)  # stdin ended: its subscriptions end gracefully
        pending = list(self._flight)
        if pending:
            grace = 0 if self._out_gone.is_set() else self.grace
            still = await self._in_grace(pending, grace)
            running = [rid for task, rid in self._running.items() if task in still]
            if running and not self._out_gone.is_set():
                log.info(
                    "stdin closed: %d request(s) still running after %g s cancelled, unanswered: %s",
                    len(running),
                    grace,
                    ", ".join(repr(rid) for rid in running[:10]),
                )
            for task in still:
                self.given_up.add(task)
                task.cancel()
        if self._pushing is not None:
            self._pushing.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._pushing
        if self.session is not None:
            self.server.sessions.close(self.session.id)
        if self._writer is not None:
            self._stopping = True
            self._writer.close()
            # the answers owed go out while the client reads them, then the pipe closes (see _watch)
            with contextlib.suppress(OSError):
                await self._writer.wait_closed()
        if watching is not None:
            watching.cancel()

    async def _in_grace(self, pending: list[asyncio.Task[None]], grace: float) -> set[asyncio.Task[None]]:
        """The requests of ``pending`` still running after ``grace`` seconds, or as soon as
        stdout is gone (a stop signal, its reader away): nobody hears the answers then, and a
        handler that goes on after the stop's cancellation must not hold the server."""
        every = asyncio.ensure_future(asyncio.wait(pending))
        gone = asyncio.ensure_future(self._out_gone.wait())
        try:
            await asyncio.wait([every, gone], timeout=grace, return_when=asyncio.FIRST_COMPLETED)
        finally:
            for waiter in (every, gone):
                waiter.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await waiter
        return {task for task in pending if not task.done()}

    async def _watch(self, transport: asyncio.WriteTransport, stdin: int | None) -> None:
        """Stop the server once stdin has ended and stdout has taken nothing for ``grace``
        seconds while answers wait in its buffer: the client stopped reading, and waiting on
        would keep the server alive, blocked, until the client exits. stdin has ended when
        its end was read, or when its writer closed it while what it wrote waits unread
        (the server is held back writing, and reads nothing meanwhile)."""
        loop = asyncio.get_running_loop()
        tick = max(0.01, min(0.25, self.grace / 4))
        written, since = -1, loop.time()
        while not self._out_gone.is_set():
            await asyncio.sleep(tick)
            waiting = transport.get_write_buffer_size()
            if not waiting or self._taken - waiting != written:  # nothing owed, or the reader took some
                written, since = self._taken - waiting, loop.time()
            elif loop.time() - since >= self.grace and (self._input_ended or hung_up(stdin)):
                self._out_gone.set()
                log.warning(
                    "stdin is closed and nothing was read from stdout for %g s: %d bytes of answers "
                    "unwritten; stopping",
                    self.grace,
                    waiting,
                )
                transport.abort()

    async def _read(self, reader: asyncio.StreamReader | None, stdin: BinaryIO) -> None:
        """Handle stdin's messages until it ends."""
        while True:
            if reader is not None:
                chunk = await reader.read(65536)
            else:
                chunk = await asyncio.to_thread(os.read, stdin.fileno(), 65536)
            for line in self.framer.feed(chunk) if chunk else self.framer.finish():
                await self._line(line)
            if not chunk:
                return

    async def _push(self, session: Session) -> None:
        """Write the session's own messages (``notifications/elicitation/complete``,
        ``notifications/resources/updated``) to stdout as they are queued."""
        while not session.closed:
            data = await session.next_pushed(60.0)
            if data is not None:
                await self.write(data)

    async def _line(self, line: bytes | Oversized) -> None:
        if isinstance(line, Oversized):
            err = InvalidRequest(
                f"Invalid request: message of {line.size} bytes exceeds the {self.framer.max_line} byte limit"
            )
            rid = leading_id(line.head)
            session = self.session
            log_unreadable(
                log, "stdio", err, line.size, getattr(session, "id", None), limit=self.framer.max_line
            )
            if rid is not None and session is not None and session.refuse(rid, err.message):
                rid = None  # the answer to a question of ours, given up as refused: the id is ours
            await self.write(jsonrpc.encode_error(rid, err))
            return
        try:
            message = jsonrpc.decode(line)
        except InvalidResponse as exc:
            # meant for a question of ours: it is given up as refused (a form reads as
            # cancel), not left waiting; the refusal names no id, since the id is ours
            if exc.request_id is not None and self.session is not None:
                self.session.refuse(exc.request_id, exc.message)
            await self.write(jsonrpc.encode_error(None, exc))
            return
        except ProtocolError as exc:
            log_unreadable(log, "stdio", exc, len(line), getattr(self.session, "id", None))
            await self.write(jsonrpc.encode_error(exc.request_id, exc))
            return
        if isinstance(message, jsonrpc.Request):
            if message.id in self._tasks:
                err = InvalidRequest(
                    f"Invalid request: id {message.id!r} is already in use by a request in flight"
                )
                await self.write(jsonrpc.encode_error(message.id, err))
                return
            if len(self._flight) >= self.max_in_flight:
                # written before the next line is read: a client that does not read its
                # answers is held back here once stdout is full
                ending = len(self.given_up)  # cancelled, their handlers going on: no answer to read
                hint = (
                    f"{ending} of them cancelled and still ending; wait for them, or read the others' answers,"
                    if ending
                    else "read their answers"
                )
                err = InvalidRequest(
                    f"Invalid request: {len(self._flight)} requests are in flight, the most this server "
                    f"takes at once; {hint} before sending more"
                )
                await self.write(jsonrpc.encode_error(message.id, err))
                return
            if (
                self.session is None
                and message.method == "initialize"
                and self.server.core.is_handshake_request(message, None)
            ):
                payload, self.session, _ = open_session_for(self.server, message, None, self)
                if self.session is not None:
                    self.session.network = _PIPE
                await self.write(payload)
                if self.session is not None:
                    self._pushing = asyncio.ensure_future(self._push(self.session))
                return
            task = asyncio.ensure_future(self._request(message))
            self._tasks[message.id] = task
            self._flight.add(task)
            task.add_done_callback(self._forget(message.id))
        elif isinstance(message, jsonrpc.Notification):
            session = self.session
            with notifying(
                self.server.telemetry,
                message.method,
                message.params,
                incoming=True,
                version=session.version if session is not None else None,
                session=session.id if session is not None else None,
                network=_PIPE,
            ):
                self._notification(message.method, message.params or {})
        elif self.session is None or not self.session.resolve(message):
            log_stray_response(log, "stdio", message, getattr(self.session, "id", None))

    def _forget(self, rid: jsonrpc.RequestId) -> Callable[[asyncio.Task[None]], None]:
        def forget(task: asyncio.Task[None]) -> None:
            if self._tasks.get(rid) is task:  # not a later request's, sent under the id since
                del self._tasks[rid]
            self._flight.discard(task)
            self.given_up.discard(task)

        return forget

    def _notification(self, method: str, params: Mapping[str, Any]) -> None:
        if method == "notifications/initialized" and self.session is not None:
            self.session.initialized = True
        elif method == "notifications/cancelled":
            rid = params.get("requestId")
            task = None
            if isinstance(rid, (str, int)) and not isinstance(rid, bool):  # true is not the id 1
                task = self._tasks.pop(rid, None)  # given up: the id is free for the next request
            if task is not None:
                self.given_up.add(task)
            if self.session is not None and self.session.cancel(rid):
                return
            if task is not None:
                log.info("%s cancelled by the client", request_where(rid))
                task.cancel()

    async def _request(self, message: jsonrpc.Request) -> None:
        session = self.session
        channel = _Lines(self)
        me = asyncio.current_task()
        assert me is not None  # a request runs as its own task
        self._running[me] = message.id
        try:
            if session is not None and self.server.core.is_handshake_request(message, None, in_session=True):
                payload: bytes | None = await self.server.respond_in_session(
                    message, session, channel=channel, network=_PIPE
                )
            else:
                payload, _status = await self.server.respond(message, channel=channel, network=_PIPE)
        except asyncio.CancelledError:
            return
        finally:  # work the handler left behind sends nothing more for this request
            channel.ended = True
            self._running.pop(me, None)
        if me in self.given_up:
            return  # cancelled, and its handler returned anyway: the client gave it up
        if payload is not None:
            await self.write(payload)
