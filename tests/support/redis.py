"""A real ``redis-server`` for tests, on 127.0.0.1 and a free port, always stopped.

* ``redis_server(log_dir)``: a context manager that starts ``redis-server`` with nothing
  persisted (``--save '' --appendonly no``), bound to loopback with protected mode on,
  waits until it answers ``PING``, yields a ``RedisServer`` (``.url``), and stops it
  (terminate, then kill). A port taken between choosing and binding is retried.
  ``debug=True`` allows ``DEBUG SLEEP``, which freezes the server: commands sent
  meanwhile time out in the client, yet run once it wakes.
* ``started_again(server)``: a server the test killed, started again on its port and in
  its directory (what it wrote with ``SAVE`` is loaded: a Redis with persistence comes
  back with its data, one without it empty), stopped when the block ends.
* ``redis_url``: a session-scoped pytest fixture built on it, yielding
  ``redis://127.0.0.1:PORT/0``. Tests stay apart by key prefix, not by flushing, so one
  server serves the whole session. Use it from a conftest with
  ``from support.redis import redis_url`` (one import per conftest gives one server per
  conftest scope; import it in ``tests/conftest.py`` for one server per session).
* ``SilencingProxy(port)``: an async context manager forwarding a loopback port to that
  Redis port; ``silence()`` makes the connections open so far go silent without being
  closed (as a partition, or a NAT that forgot them, does), while new ones work.
* No ``redis-server`` on PATH: the fixture skips its tests, saying ``make services``
  installs it. The URL is a plain string, so async tests use it directly.

This module talks RESP over a raw socket and needs no Redis client library.
"""

from __future__ import annotations

import asyncio
import contextlib
import shutil
import socket
import subprocess
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType

import pytest

from support.procs import on_a_free_port

__all__ = ["RedisServer", "SilencingProxy", "redis_available", "redis_server", "redis_url", "started_again"]

START_TIMEOUT = 10.0
SKIP_REASON = "redis-server is not installed (`make services` installs it)"


@dataclass
class RedisServer:
    proc: subprocess.Popen[bytes]
    port: int
    log_path: Path

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def log(self) -> str:
        return self.log_path.read_text(encoding="utf-8", errors="replace")

    def command(self, *args: str) -> bytes:
        """Send one command and return the raw first line of the reply (for checks)."""
        return _command(self.port, *args)


def redis_available() -> bool:
    return shutil.which("redis-server") is not None


@contextlib.contextmanager
def redis_server(log_dir: Path, *, debug: bool = False) -> Iterator[RedisServer]:
    """Run ``redis-server`` on a free loopback port until the block ends; ``debug``
    allows ``DEBUG`` (``SLEEP``: a frozen server) from loopback (Redis 7)."""
    binary = shutil.which("redis-server")
    if binary is None:
        raise FileNotFoundError(SKIP_REASON)

    def log_path(port: int) -> Path:
        return log_dir / f"redis-{port}.log"

    def start(port: int) -> subprocess.Popen[bytes]:
        return _start(binary, port, log_dir, debug=debug)

    def output(port: int) -> str:
        return log_path(port).read_text(errors="replace")

    with on_a_free_port(start, output=output, name="redis-server", ready=_wait_ready) as (proc, port):
        yield RedisServer(proc, port, log_path(port))


@contextlib.contextmanager
def started_again(server: RedisServer) -> Iterator[RedisServer]:
    """``server``'s redis-server started again on its port (after the test killed it), in
    its directory: what it wrote there with ``SAVE`` is loaded again, as a Redis with
    persistence comes back with its data; without it, it comes back empty. Stopped after."""
    binary = shutil.which("redis-server")
    assert binary is not None and server.proc.poll() is not None, "kill it first"
    again = RedisServer(_start(binary, server.port, server.log_path.parent), server.port, server.log_path)
    try:
        if not _wait_ready(again.proc, again.port):
            raise RuntimeError(f"redis-server did not start again on {server.port}:\n{again.log()}")
        yield again
    finally:
        again.proc.kill()
        again.proc.wait()


@pytest.fixture(scope="session")
def redis_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """``redis://127.0.0.1:PORT/0`` of a server started for this session (skips without one)."""
    if not redis_available():
        pytest.skip(SKIP_REASON)
    with redis_server(tmp_path_factory.mktemp("redis")) as server:
        yield server.url


class SilencingProxy:
    """Forwards 127.0.0.1:``self.port`` to the Redis on ``upstream``; see the module docstring."""

    def __init__(self, upstream: int) -> None:
        self.upstream = upstream
        self.port = 0
        self._server: asyncio.Server | None = None
        self._live: set[asyncio.StreamWriter] = set()  # client sides still forwarding
        self._writers: set[asyncio.StreamWriter] = set()

    async def __aenter__(self) -> SilencingProxy:
        self._server = await asyncio.start_server(self._accept, "127.0.0.1", 0)
        self.port = int(self._server.sockets[0].getsockname()[1])
        return self

    async def __aexit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        assert self._server is not None
        self._server.close()
        for writer in self._writers:
            writer.close()
        await self._server.wait_closed()

    def silence(self) -> None:
        self._live.clear()

    async def _accept(self, client_in: asyncio.StreamReader, client_out: asyncio.StreamWriter) -> None:
        upstream_in, upstream_out = await asyncio.open_connection("127.0.0.1", self.upstream)
        self._writers |= {client_out, upstream_out}
        self._live.add(client_out)
        await asyncio.gather(
            self._pipe(client_in, upstream_out, client_out),
            self._pipe(upstream_in, client_out, client_out),
            return_exceptions=True,
        )
        for writer in (client_out, upstream_out):
            writer.close()

    async def _pipe(
        self, source: asyncio.StreamReader, sink: asyncio.StreamWriter, client: asyncio.StreamWriter
    ) -> None:
        while data := await source.read(65536):
            if client in self._live:  # else silenced: dropped, the connection stays open
                sink.write(data)
                await sink.drain()


def _start(binary: str, port: int, log_dir: Path, *, debug: bool = False) -> subprocess.Popen[bytes]:
    with (log_dir / f"redis-{port}.log").open("ab") as log:
        return subprocess.Popen(
            [
                binary,
                "--port",
                str(port),
                "--bind",
                "127.0.0.1",
                "--protected-mode",
                "yes",
                "--save",
                "",
                "--appendonly",
                "no",
                "--daemonize",
                "no",
                "--dir",
                str(log_dir),
                *(("--enable-debug-command", "local") if debug else ()),
            ],
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=log,
        )


def _command(port: int, *args: str) -> bytes:
    request = f"*{len(args)}\r\n".encode() + b"".join(
        f"${len(a.encode())}\r\n".encode() + a.encode() + b"\r\n" for a in args
    )
    with socket.create_connection(("127.0.0.1", port), timeout=2.0) as sock:
        sock.sendall(request)
        reply = b""
        while not reply.endswith(b"\r\n"):
            chunk = sock.recv(4096)
            if not chunk:
                break
            reply += chunk
    return reply.split(b"\r\n", 1)[0]


def _wait_ready(proc: subprocess.Popen[bytes], port: int) -> bool:
    """True once the server answers PING; False when it exited first."""
    deadline = time.monotonic() + START_TIMEOUT
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            return False
        with contextlib.suppress(OSError):
            if _command(port, "PING") == b"+PONG":
                return True
        time.sleep(0.02)
    raise TimeoutError(f"redis-server did not answer PING on 127.0.0.1:{port} within {START_TIMEOUT} s")
