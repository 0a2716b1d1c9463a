"""stdio, client side: spawn the server command, newline-delimited JSON-RPC on its
stdin/stdout.

Rules:

* Each message is one line; only JSON-RPC goes to stdin. What the server writes to
  stdout is read and routed by ``stdio_routing``: responses to their exchange by id, the
  server's requests and notifications to the unsolicited callback (all of stdio shares one
  channel), lines that are not JSON-RPC skipped, never fatal (a request among them whose
  id can be read answered -32600, unless the client's last request was at a modern
  revision: ``speaks_modern``). The answer to a request given up before it came (an
  exchange closed early: Ctrl-C, a cancelled call) is dropped quietly, as JSON-RPC asks;
  the last ``stdio_exchange.ABANDONED_KEEP`` such ids are kept for it.
* stderr is captured (the last 64 KiB kept for error messages, so the pipe never fills)
  or passed through to ours.
* If the process exits, every request in flight ends with the exit code (or the signal
  that ended it; a code of 128 + a signal is said to be how a shell reports one) and the
  tail of its stderr (the secrets its command gives, ``--token T``, shown REDACTED:
  ``command_redaction.redact_secrets``; its URLs redacted), also when a process it started keeps its stdout open, and when
  writing the request found the pipe broken first. Closing is the spec's shutdown: close
  stdin, wait, then terminate, then kill; each wait is for the exit, not for the pipes,
  which are closed last. On POSIX the server gets a process group of its
  own, and both signals go to the whole group (``stdio_process``). A close cut short (cancelled while it
  waits) kills the server at once, before the cancellation goes on. A request still waiting
  when the transport closes ends then, with a ``TransportError`` saying it was closed.
* ``open`` after ``aclose`` starts a new process, with nothing of the last one (its end,
  stderr, requests), and an exchange only ever touches the state of its own process;
  ``open`` while open, or while another ``open`` starts its process, is refused. A close
  during an ``open`` kills the process it starts, and that ``open`` fails saying so.
"""

from __future__ import annotations

import asyncio
import contextlib
import copy
import os
import shlex
import signal
from collections import deque
from collections.abc import AsyncIterator, Mapping, Sequence
from typing import Any, Final, Literal, cast

from typing_extensions import Unpack

from mcp_elicit.client.answerers import Answerer
from mcp_elicit.client.options import ClientOptions, seconds
from mcp_elicit.client.reaping import reap
from mcp_elicit.client.session import Client
from mcp_elicit.client.transport import Ended, Trace, Unsolicited, speaks_modern
from mcp_elicit.command_redaction import redact_command, redact_secrets, secret_values
from mcp_elicit.errors import (
    ConfigError,
    MCPElicitError,
    ProtocolError,
    TransportError,
    UnsupportedProtocolVersion,
)
from mcp_elicit.transports.given import callable_or_none, path_or_none, text_mapping, whole_above
from mcp_elicit.transports.stdio_exchange import Pending, StdioExchange
from mcp_elicit.transports.stdio_process import POSIX, Watched, how_it_ended, signal_group, stop_started
from mcp_elicit.transports.stdio_routing import StdoutRouting
from mcp_elicit.url_redaction import redact_urls
from mcp_elicit.wire import jsonrpc

__all__ = ["StdioTransport", "connect_stdio"]

_STDERR_KEEP: Final = 64 * 1024
#: How long, after the process exited, what it wrote last may take to be read.
_EXIT_READ: Final = 0.5


def _shown(command: object) -> str:
    """A command given as something other than a list of strings, as the error refusing it
    shows it: its words as ``command_redaction`` shows them (no ``--api-key``'s value, no
    URL's password), a string's (or bytes') quoted as given."""
    if isinstance(command, bytes):
        return "b" + _shown(command.decode("utf-8", errors="replace"))
    if isinstance(command, str):
        try:
            words = shlex.split(command)
        except ValueError:  # an unclosed quote: split at spaces
            words = command.split()
        return repr(shlex.join(redact_command(words)))
    if isinstance(command, Sequence):  # a word that is not a string: the strings redacted
        told = iter(redact_command([word for word in command if isinstance(word, str)]))
        return repr([next(told) if isinstance(word, str) else word for word in command])
    return repr(command)


class StdioTransport:
    """A server process spoken to over its stdin and stdout."""

    def __init__(
        self,
        command: Sequence[str],
        *,
        env: Mapping[str, str] | None = None,
        cwd: str | None = None,
        stderr: Literal["capture", "inherit"] = "capture",
        max_line: int = 16 * 1024 * 1024,
        stop_timeout: float = 2.0,
        trace: Trace | None = None,
    ) -> None:
        args: list[object] = []
        if isinstance(command, str | bytes):  # a command line: refused below, but "" is empty
            refused = bool(command)
        else:  # a number, None...: refused as not a list, not by Python's own "not iterable"
            refused = not hasattr(command, "__iter__")
            # A path is taken as its text: every word is shown and redacted as a string.
            args = [] if refused else [os.fspath(a) if isinstance(a, os.PathLike) else a for a in command]
        if refused or not all(isinstance(arg, str) for arg in args):
            split = "; split a command line with shlex.split(...)" if hasattr(command, "__iter__") else ""
            raise TypeError(
                f"the server command is a list of strings (['python', 'server.py']), not {_shown(command)}{split}"
            )
        if not args:
            raise ValueError("the server command is empty")
        self.command = cast("list[str]", args)
        takes = "a mapping of variable names to strings ({'PATH': '/usr/bin'}), or None"
        self.env = None if env is None else text_mapping("env", env, takes)
        self.cwd = path_or_none("cwd", cwd)
        if stderr not in ("capture", "inherit"):
            raise ConfigError(
                f"stderr {stderr!r}: expected 'capture' (kept for errors) or 'inherit' (shown as ours)"
            )
        self.stderr_mode = stderr
        self.stop_timeout = seconds("stop_timeout", stop_timeout)
        self.trace = callable_or_none("trace", trace, "a function trace(direction, message), or None")
        self._max_line = whole_above("max_line", max_line, 1, "a whole number of bytes, at least 1")
        self._fresh()

    def _fresh(self) -> None:
        """The state of one process: set anew by each ``open``, so that nothing of the
        last one (its end, its stderr, its requests) is taken for the new one's."""
        self._proc: asyncio.subprocess.Process | None = None
        self._pending: dict[jsonrpc.RequestId, Pending] = {}
        #: Requests given up before their answer came, oldest first (a dict as an ordered set).
        self._abandoned: dict[jsonrpc.RequestId, None] = {}
        #: What the process writes to stdout, read and routed (its requests, its noise...).
        self._stdout = StdoutRouting(self, self._max_line, self._pending, self._abandoned, self._put)
        self._stdout.noise.secrets = tuple(secret_values(self.command))  # a banner may repeat its --token
        self._tasks: list[asyncio.Task[None]] = []
        self._stderr: deque[bytes] = deque()
        self._stderr_size = 0
        #: Requests queued on stdin whose sending is not finished yet.
        self._sending: set[asyncio.Task[None]] = set()
        self._gone: str | None = None
        #: Set once ``_gone`` says how the server ended (or that the transport was closed).
        self._ended = asyncio.Event()
        self._transport: asyncio.SubprocessTransport | None = None
        #: Set when the process exits (whether or not its pipes are closed yet).
        self._exit = asyncio.Event()
        self._ending = False
        #: ``aclose`` began: the server's end that follows is ours, not its own.
        self._closing = False
        self._stderr_reading: asyncio.Task[None] | None = None
        #: Opened and not closed yet.
        self._running = False

    @property
    def http(self) -> bool:
        return False

    @property
    def where(self) -> str:
        return shlex.join(redact_command(self.command))  # no URL's password, no --token's value

    @property
    def secrets(self) -> tuple[str, ...]:
        """The secrets its command gives the server (``--token T``, ``API_KEY=K``), which a
        question it asks is described without (``ServerInfo.secrets``)."""
        return tuple(secret_values(self.command))

    @property
    def network(self) -> Mapping[str, str | int]:
        return {"network.transport": "pipe"}

    @property
    def pid(self) -> int | None:
        return self._proc.pid if self._proc is not None else None

    def stderr_tail(self) -> str:
        return b"".join(self._stderr).decode("utf-8", errors="replace")

    def stdout_noise(self) -> str:
        """What it wrote to stdout that is not JSON-RPC, as ``stdio_noise`` says; "" if nothing."""
        return self._stdout.noise.note()

    @property
    def stdout_noise_count(self) -> int:
        return self._stdout.noise.count

    async def open(self, unsolicited: Unsolicited) -> None:
        """Start the server process: a new one after ``aclose``. A close while it starts
        kills it, and the open fails saying so."""
        if self._running:  # also while another open is starting its process
            raise TransportError(
                f"the server process {self.where!r} is already open on this transport: close it "
                "(aclose) before opening it again"
            )
        self._fresh()
        self._running = True
        self._stdout.unsolicited = unsolicited
        closed = self._ended  # set by a close meanwhile (nothing else sets it before the process)
        loop = asyncio.get_running_loop()
        try:
            transport, protocol = await loop.subprocess_exec(
                lambda: Watched(loop),
                *self.command,
                stdin=asyncio.subprocess.PIPE,
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.PIPE if self.stderr_mode == "capture" else None,
                env=self.env,
                cwd=self.cwd,
                start_new_session=POSIX,  # its own process group: see _signal
            )
        except BaseException as exc:
            if not closed.is_set():
                self._running = False
            if isinstance(exc, OSError):
                raise TransportError(f"cannot start the server command {self.where!r}: {exc}") from None
            raise
        proc = asyncio.subprocess.Process(transport, protocol, loop)
        if closed.is_set():
            await stop_started(proc, transport, protocol.exit)
            raise TransportError(
                f"the server process {self.where!r} was closed (StdioTransport.aclose) while it was "
                "being opened; it was stopped"
            )
        self._transport = transport
        self._exit = protocol.exit
        self._proc = proc
        reading = asyncio.ensure_future(self._read_stdout())
        self._tasks.append(reading)
        self._tasks.append(asyncio.ensure_future(self._watch(reading)))
        if self._proc.stderr is not None:
            self._stderr_reading = asyncio.ensure_future(self._read_stderr(self._proc.stderr))
            self._tasks.append(self._stderr_reading)

    def _put(self, message: Mapping[str, Any]) -> asyncio.StreamWriter:
        """Queue one message on the server's stdin, whole (this never waits)."""
        proc = self._proc
        if proc is None or proc.stdin is None or self._gone is not None:
            raise TransportError(self._gone or f"the server process {self.where!r} is not running")
        if self.trace is not None:
            self.trace("send", message)
        proc.stdin.write(jsonrpc.encode(message) + b"\n")
        return proc.stdin

    async def _flush(self, stdin: asyncio.StreamWriter) -> None:
        """Wait until the server has taken what is queued on its stdin."""
        try:
            await stdin.drain()
        except (BrokenPipeError, ConnectionResetError) as exc:
            raise TransportError(
                f"the server process {self.where!r} stopped reading its input: {exc}"
            ) from None

    async def _write(self, message: Mapping[str, Any]) -> None:
        await self._flush(self._put(message))

    async def exchange(self, message: Mapping[str, Any], headers: Mapping[str, str]) -> StdioExchange:
        """The request is queued, not waited for: a server that stops reading its input
        leaves it to the request's timeout, which counts from its response's wait."""
        rid = message["id"]
        self._stdout.modern = speaks_modern(message)
        queue = Pending(message)
        self._pending[rid] = queue
        exchange = StdioExchange(self._pending, self._abandoned, rid, queue)
        if self._gone is not None:
            queue.put_nowait(Ended(reason=self._gone))
            return exchange
        try:
            stdin = self._put(message)
        except TransportError as exc:
            queue.put_nowait(Ended(reason=str(exc)))
            return exchange
        sending = asyncio.ensure_future(self._sent(stdin, queue))
        self._sending.add(sending)
        sending.add_done_callback(self._sending.discard)
        return exchange

    async def _sent(self, stdin: asyncio.StreamWriter, queue: asyncio.Queue[jsonrpc.Message | Ended]) -> None:
        try:
            await self._flush(stdin)
        except TransportError as exc:
            # A broken pipe is most often a process that has exited: the end of its
            # requests (_exited) says so, with its exit code and stderr, which this does not.
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(_EXIT_READ + 1.0):
                    await self._ended.wait()
            if not self._ended.is_set():
                queue.put_nowait(Ended(reason=str(exc)))

    async def send(self, message: Mapping[str, Any], headers: Mapping[str, str]) -> None:
        await self._write(message)

    async def listen(self, headers: Mapping[str, str], last_event_id: str | None = None) -> None:
        return None

    async def end_session(self, headers: Mapping[str, str]) -> None:
        return None

    async def _read_stdout(self) -> None:
        assert self._proc is not None
        stdout = self._proc.stdout
        assert stdout is not None
        await self._stdout.read(stdout)
        await self._exited()

    async def _read_stderr(self, stream: asyncio.StreamReader) -> None:
        while True:
            chunk = await stream.read(65536)
            if not chunk:
                return
            self._stderr.append(chunk)
            self._stderr_size += len(chunk)
            while self._stderr_size > _STDERR_KEEP and len(self._stderr) > 1:
                self._stderr_size -= len(self._stderr.popleft())

    async def _watch(self, reading: asyncio.Task[None]) -> None:
        """When the process exits, its requests in flight end, even if its output stays
        open (a process it started holds it): what it wrote last has a moment to be read."""
        await self._exit.wait()
        with contextlib.suppress(Exception):  # TimeoutError: the output is still open
            async with asyncio.timeout(_EXIT_READ):
                await asyncio.shield(reading)
        await self._exited(output_closed=False)

    async def _exited(self, *, output_closed: bool = True) -> None:
        """The server is gone: every request in flight ends, saying how (once the close
        began, as the close says: the server ended because its stdin was closed)."""
        if self._ending or self._closing:
            return
        self._ending = True
        proc = self._proc
        code: int | None = None
        if proc is not None:
            with contextlib.suppress(Exception):  # TimeoutError: not exited, or stderr still open
                async with asyncio.timeout(1.0):
                    await self._exit.wait()
                    if self._stderr_reading is not None:  # what it said last
                        await asyncio.shield(self._stderr_reading)
            code = proc.returncode
        tail = redact_secrets(self.stderr_tail().strip(), secret_values(self.command))  # its --token
        tail = redact_urls(tail)[-1500:]  # redacted, then cut
        how = [
            *(["closed its output"] if output_closed else []),
            *([how_it_ended(code)] if code is not None else []),
        ]
        self._gone = f"the server process {self.where!r} {' and '.join(how)}{self.stdout_noise()}" + (
            f"; the end of its stderr:\n{tail}" if tail else ""
        )
        for queue in self._pending.values():
            queue.put_nowait(Ended(reason=self._gone))
        self._ended.set()

    async def gone(self) -> str:
        await self._ended.wait()
        assert self._gone is not None
        return self._gone

    async def aclose(self) -> None:
        self._closing = True
        try:
            await self._stop()
        finally:
            self._release()

    async def _stop(self) -> None:
        """The spec's shutdown: stdin closed, a wait for the exit, then SIGTERM, then SIGKILL."""
        proc = self._proc
        if proc is not None:
            if proc.stdin is not None and not proc.stdin.is_closing():
                with contextlib.suppress(Exception):
                    proc.stdin.close()
            if proc.returncode is None:
                # the exit itself, not proc.wait(), which also waits for the pipes to close
                try:
                    async with asyncio.timeout(self.stop_timeout):
                        await self._exit.wait()
                except TimeoutError:
                    signal_group(proc, signal.SIGTERM)
                    try:
                        async with asyncio.timeout(self.stop_timeout):
                            await self._exit.wait()
                    except TimeoutError:
                        signal_group(proc, signal.SIGKILL if POSIX else signal.SIGTERM)
                        await self._exit.wait()
        await reap(*self._tasks, *self._sending)

    def _release(self) -> None:
        """What a close owes even when it is cut short (cancelled during a wait): the
        server killed if it still runs, the reading tasks cancelled, the pipes closed.
        Nothing here waits, so a cancellation that goes on cannot stop it."""
        proc = self._proc
        if proc is not None and proc.returncode is None and not self._exit.is_set():
            signal_group(proc, signal.SIGKILL if POSIX else signal.SIGTERM)
        for task in [*self._tasks, *self._sending]:
            task.cancel()
        self._tasks.clear()
        self._running = False
        if not self._ended.is_set():  # its requests still waiting end now, not never
            self._gone = (
                f"the connection to the server process {self.where!r} was closed (StdioTransport.aclose) "
                "before the server's answer came"
            )
            for queue in self._pending.values():
                queue.put_nowait(Ended(reason=self._gone, error=TransportError(self._gone)))
            self._ended.set()
        if self._transport is not None:
            self._transport.close()  # its pipes, even those a process it started still holds


@contextlib.asynccontextmanager
async def connect_stdio(
    command: Sequence[str],
    *,
    answerer: Answerer | None = None,
    env: Mapping[str, str] | None = None,
    cwd: str | None = None,
    stderr: Literal["capture", "inherit"] = "capture",
    trace: Trace | None = None,
    **options: Unpack[ClientOptions],
) -> AsyncIterator[Client]:
    """A connected ``Client`` for the server started by ``command``; ``options`` are
    ``Client``'s keyword arguments. An error that ends the connection or a request (raised
    from here, or through the ``async with`` body) ends with what the server wrote to
    stdout that is not JSON-RPC, if anything (``StdioTransport.stdout_noise``)."""
    transport = StdioTransport(command, env=env, cwd=cwd, stderr=stderr, trace=trace)
    try:
        async with Client(transport, answerer=answerer, **options) as client:
            yield client
    except (TransportError, UnsupportedProtocolVersion) as exc:
        note = transport.stdout_noise()
        if not note or note in str(exc):
            raise
        raise _noted(exc, note) from exc.__cause__


def _noted(exc: MCPElicitError, note: str) -> MCPElicitError:
    """``exc`` (a copy), its message ending with ``note``."""
    noted = copy.copy(exc)
    noted.args = (f"{exc.args[0] if exc.args else exc}{note}", *exc.args[1:])
    if isinstance(noted, ProtocolError):
        noted.message += note
    return noted
