"""Real servers for integration tests, always on 127.0.0.1 and always stopped.

* ``http_process(target, log_dir)``: ``mcp-elicit serve TARGET --http 127.0.0.1:PORT`` as a
  subprocess on a free port; ready once the port accepts connections. A port taken by
  someone else between choosing and binding is retried on another (``on_a_free_port``,
  which the Redis and nginx helpers start their servers with too).
* ``stdio_process(target, log_dir)``: ``mcp-elicit serve TARGET`` over stdio, driven with
  asyncio pipes, one JSON-RPC message per line.
* ``uvicorn_server(app)``: an ASGI app served by uvicorn inside the test's event loop, on a
  socket this module binds (so there is no port race). Without uvicorn's lifespan (the
  default here) nothing stops a ``StreamableHTTP`` app's server, so the stores its URL mode
  opened itself (the default SQLite file) are closed when the block ends, as its shutdown
  would close them.

stderr always goes to a file (a pipe nobody reads can fill up and stall the server), so a
test can read it afterwards. Stopping is terminate, then kill after a timeout.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import shutil
import socket
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson
import uvicorn

from mcp_elicit.transports.http_server import StreamableHTTP

ROOT = Path(__file__).resolve().parents[2]
CONFORMANCE_SERVER = ROOT / "examples" / "conformance_server.py"
STOP_TIMEOUT = 5.0
#: The bound on a server starting: generous, since on a loaded machine with the suite in
#: parallel workers a start took more than 20 s (it only lengthens a failure).
START_TIMEOUT = 60.0
#: The bound on waiting for a stdio server's next message. The first one also waits for the
#: process to start (Python and the package imported), which on a loaded machine, with the
#: suite in parallel workers, takes more than a few seconds: so as long as a start.
RECV_TIMEOUT = START_TIMEOUT


def cli() -> list[str]:
    """The ``mcp-elicit`` console script of this interpreter, else ``python -m mcp_elicit``."""
    script = shutil.which("mcp-elicit", path=str(Path(sys.executable).parent))
    return [script] if script else [sys.executable, "-m", "mcp_elicit"]


def refused_at_start(args: list[str], taken: str) -> subprocess.CompletedProcess[str]:
    """``mcp-elicit args`` run to its exit, expected to refuse them at start (exit 2, checked
    here); AssertionError saying ``taken`` was taken when it served instead (killed after 30 s)."""
    try:
        done = subprocess.run(
            [*cli(), *args], stdin=subprocess.DEVNULL, capture_output=True, text=True, check=False, timeout=30
        )
    except subprocess.TimeoutExpired as exc:  # it served instead (run() has killed it)
        raise AssertionError(f"{taken} was taken: {exc.stderr!r}") from None
    assert done.returncode == 2, done.stderr
    assert "serving" not in done.stderr, done.stderr
    return done


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _env() -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONUNBUFFERED"] = "1"
    env.pop("MCP_ELICIT_STATE_KEYS", None)
    return env


def _stop(proc: subprocess.Popen[bytes]) -> None:
    if proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(STOP_TIMEOUT)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(STOP_TIMEOUT)


# ---- Streamable HTTP in a subprocess ----------------------------------------------------


@dataclass
class HttpProcess:
    proc: subprocess.Popen[bytes]
    port: int
    stderr_path: Path

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/mcp"

    @property
    def alive(self) -> bool:
        return self.proc.poll() is None

    def stderr(self) -> str:
        return self.stderr_path.read_text(encoding="utf-8", errors="replace")


def wait_listening(
    proc: subprocess.Popen[bytes],
    port: int,
    timeout: float = START_TIMEOUT,
    *,
    name: str = "the server",
    host: str = "127.0.0.1",
) -> bool:
    """True once ``host:port`` (an IPv4 or IPv6 address) accepts connections; False when
    the process died first (TimeoutError after ``timeout`` seconds)."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            return False
        with socket.socket(family, socket.SOCK_STREAM) as sock:
            sock.settimeout(0.5)
            if sock.connect_ex((host, port)) == 0:
                return True
        time.sleep(0.02)
    raise TimeoutError(f"{name} did not listen on {host}:{port} within {timeout} s")


@contextlib.contextmanager
def on_a_free_port(
    start: Callable[[int], subprocess.Popen[bytes]],
    *,
    output: Callable[[int], str],
    name: str,
    ready: Callable[[subprocess.Popen[bytes], int], bool] = wait_listening,
    stop: Callable[[subprocess.Popen[bytes]], None] = _stop,
) -> Iterator[tuple[subprocess.Popen[bytes], int]]:
    """``start(port)`` on a free loopback port, yielded with its port once ``ready``, stopped after.

    A port someone took between choosing and binding ("address already in use", or
    ``serve``'s own "is in use by another program", in ``output(port)``) is tried again on another, three tries in all; a process that exits
    before it is ready otherwise is a RuntimeError showing its output."""
    for attempt in range(3):
        port = free_port()
        proc = start(port)
        try:
            is_ready = ready(proc, port)
        except BaseException:
            stop(proc)
            raise
        if not is_ready:
            stop(proc)
            text = output(port)
            taken = "address already in use" in text.lower() or "is in use by another program" in text
            if taken and attempt < 2:
                continue
            raise RuntimeError(f"{name} exited with {proc.returncode}:\n{text}")
        try:
            yield proc, port
        finally:
            stop(proc)
        return


@contextlib.contextmanager
def http_process(
    target: Path | str = CONFORMANCE_SERVER, *, log_dir: Path, args: tuple[str, ...] = ()
) -> Iterator[HttpProcess]:
    """Serve ``target`` over Streamable HTTP on a free loopback port until the block ends."""

    def stderr_path(port: int) -> Path:
        return log_dir / f"http-{port}.stderr"

    def start(port: int) -> subprocess.Popen[bytes]:
        with stderr_path(port).open("wb") as err:
            return subprocess.Popen(
                [*cli(), "serve", str(target), "--http", f"127.0.0.1:{port}", *args],
                stdin=subprocess.DEVNULL,
                stdout=err,
                stderr=err,
                cwd=ROOT,
                env=_env(),
            )

    def output(port: int) -> str:
        return stderr_path(port).read_text(errors="replace")

    with on_a_free_port(start, output=output, name="the server") as (proc, port):
        yield HttpProcess(proc, port, stderr_path(port))


# ---- stdio in a subprocess ---------------------------------------------------------------


@dataclass
class StdioProcess:
    """A server on the other end of two pipes. Every line it writes must be JSON-RPC."""

    proc: asyncio.subprocess.Process
    stderr_path: Path
    #: Every message read from stdout, in order.
    received: list[dict[str, Any]] = field(default_factory=list)

    async def send(self, message: dict[str, Any] | bytes) -> None:
        assert self.proc.stdin is not None
        data = message if isinstance(message, bytes) else orjson.dumps(message) + b"\n"
        self.proc.stdin.write(data)
        await self.proc.stdin.drain()

    async def recv(self, within: float = RECV_TIMEOUT) -> dict[str, Any]:
        """The next line of stdout, which must be one JSON object (a JSON-RPC message)."""
        assert self.proc.stdout is not None
        line = await asyncio.wait_for(self.proc.stdout.readline(), within)
        if not line:
            raise EOFError(f"the server closed stdout; stderr:\n{self.stderr()}")
        assert line.endswith(b"\n"), line
        message = orjson.loads(line)
        assert isinstance(message, dict) and message.get("jsonrpc") == "2.0", line
        self.received.append(message)
        return message

    async def until(
        self, rid: str | int, within: float = RECV_TIMEOUT
    ) -> tuple[dict[str, Any], list[dict[str, Any]]]:
        """Read until the response to ``rid``; return it and the messages read before it."""
        before: list[dict[str, Any]] = []
        async with asyncio.timeout(within):
            while True:
                message = await self.recv(within)
                if "method" not in message and message.get("id") == rid:
                    return message, before
                before.append(message)

    async def close_stdin(self) -> None:
        assert self.proc.stdin is not None
        if not self.proc.stdin.is_closing():
            self.proc.stdin.close()
            with contextlib.suppress(ConnectionError):
                await self.proc.stdin.wait_closed()

    async def rest(self, within: float = RECV_TIMEOUT) -> list[dict[str, Any]]:
        """Every message until stdout closes (after ``close_stdin``)."""
        out: list[dict[str, Any]] = []
        async with asyncio.timeout(within):
            while True:
                try:
                    out.append(await self.recv(within))
                except EOFError:
                    return out

    def stderr(self) -> str:
        return self.stderr_path.read_text(encoding="utf-8", errors="replace")

    async def stop(self) -> None:
        try:
            await self.close_stdin()
            try:
                await asyncio.wait_for(self.proc.wait(), STOP_TIMEOUT)
            except TimeoutError:
                self.proc.kill()
                await self.proc.wait()
            # drain what is left so the pipe transport can close cleanly
            assert self.proc.stdout is not None
            with contextlib.suppress(Exception):
                await asyncio.wait_for(self.proc.stdout.read(), STOP_TIMEOUT)
        finally:
            # The pipes are closed here whatever happened above: stdout reaches its end only
            # once every process holding it has gone, so a helper the server started that
            # outlives it kept the drain from ending, and the pipe was left open, to be found
            # unclosed by the garbage collector during a later test.
            self.proc._transport.close()  # type: ignore[attr-defined]


@contextlib.asynccontextmanager
async def stdio_process(
    target: Path | str = CONFORMANCE_SERVER, *, log_dir: Path, args: tuple[str, ...] = ()
) -> AsyncIterator[StdioProcess]:
    """Serve ``target`` over stdio (``serve``'s options ``args`` after it) until the block
    ends (then close stdin, wait, kill)."""
    stderr_path = log_dir / "stdio.stderr"
    with stderr_path.open("wb") as err:
        proc = await asyncio.create_subprocess_exec(
            *cli(),
            "serve",
            str(target),
            *args,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=err,
            cwd=ROOT,
            env=_env(),
            limit=16 * 1024 * 1024,
        )
    server = StdioProcess(proc, stderr_path)
    try:
        yield server
    finally:
        await server.stop()


# ---- uvicorn in the test's own event loop -------------------------------------------------


@dataclass
class InProcess:
    server: uvicorn.Server
    port: int

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/mcp"


@contextlib.asynccontextmanager
async def uvicorn_server(
    app: Any,
    *,
    lifespan: str = "off",
    root_path: str = "",
    http: str = "h11",
    tls: tuple[str, str] | None = None,
) -> AsyncIterator[InProcess]:
    """Serve the ASGI ``app`` on a fresh 127.0.0.1 port in this event loop (``lifespan``,
    ``root_path`` and ``http``, the HTTP parser, as uvicorn's options; ``tls``: the files
    of a certificate and its key, to speak https)."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    port = int(sock.getsockname()[1])
    config = uvicorn.Config(
        app,
        log_level="warning",
        lifespan=lifespan,
        root_path=root_path,
        ws="none",
        http=http,
        loop="asyncio",
        timeout_graceful_shutdown=2,
        ssl_certfile=tls[0] if tls else None,
        ssl_keyfile=tls[1] if tls else None,
    )
    server = uvicorn.Server(config)
    task = asyncio.ensure_future(server.serve(sockets=[sock]))
    try:
        async with asyncio.timeout(START_TIMEOUT):
            while not server.started:
                if task.done():
                    task.result()
                    raise RuntimeError("uvicorn stopped before it started")
                await asyncio.sleep(0.01)
        yield InProcess(server, port)
    finally:
        server.should_exit = True
        try:
            await asyncio.wait_for(asyncio.shield(task), STOP_TIMEOUT)
        except TimeoutError:
            server.force_exit = True
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task
        sock.close()
        if lifespan == "off" and isinstance(app, StreamableHTTP):
            await app.server.url_mode.close()
