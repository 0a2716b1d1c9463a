"""stdio and this process's stderr, with a real ``mcp-elicit serve`` subprocess: what tool code
writes to stderr reaches it while its reader is there, and fails nothing once the reader has
gone away (a client that closed its end of the pipe, or died), nor when the server started
without one (``2>&-``). The servers run as a client starts them, with buffered stdio."""

from __future__ import annotations

import asyncio
import os
import select
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any, BinaryIO

import pytest

from support.http import meta
from support.procs import ROOT, StdioProcess, cli

pytestmark = pytest.mark.anyio

WAITING_SERVER = Path(__file__).with_name("waiting_server.py")


def _env() -> dict[str, str]:
    """This environment as a client passes it on: no PYTHONUNBUFFERED, so stderr's bytes may
    wait in Python's buffer, as they do for a server a client starts."""
    env = dict(os.environ)
    env.pop("PYTHONUNBUFFERED", None)
    env.pop("MCP_ELICIT_STATE_KEYS", None)
    return env


def call(rid: int, name: str, progress: str | None = None, **arguments: Any) -> dict[str, Any]:
    extra = {"progressToken": progress} if progress is not None else {}
    params = {"name": name, "arguments": arguments, "_meta": meta(**extra)}
    return {"jsonrpc": "2.0", "id": rid, "method": "tools/call", "params": params}


def read_until(fd: int, wanted: list[str], within: float = 10.0) -> str:
    """What comes on ``fd`` until every line of ``wanted`` has (at most ``within`` seconds)."""
    got = b""
    deadline = time.monotonic() + within
    while not all(line in got.decode(errors="replace").splitlines() for line in wanted):
        left = deadline - time.monotonic()
        assert left > 0, f"not all of {wanted} came on stderr:\n{got.decode(errors='replace')}"
        if select.select([fd], [], [], left)[0]:
            chunk = os.read(fd, 65536)
            assert chunk, f"stderr ended before all of {wanted} came:\n{got.decode(errors='replace')}"
            got += chunk
    return got.decode(errors="replace")


@asynccontextmanager
async def heard(tmp_path: Path) -> AsyncIterator[tuple[StdioProcess, BinaryIO]]:
    """The waiting server with its stderr on a pipe whose read end the test holds (and may
    close); the process is stopped, or killed, at the end."""
    read_end, write_end = os.pipe()
    proc = await asyncio.create_subprocess_exec(
        *cli(),
        "serve",
        str(WAITING_SERVER),
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=write_end,
        cwd=ROOT,
        env=_env(),
    )
    os.close(write_end)
    log = os.fdopen(read_end, "rb", buffering=0)
    unread = tmp_path / "unread.stderr"  # StdioProcess quotes it in errors; the pipe is read instead
    unread.touch()
    server = StdioProcess(proc, unread)
    try:
        yield server, log
    finally:
        log.close()  # when the test has not
        await server.stop()


async def test_what_tool_code_writes_to_stderr_fails_nothing_once_its_reader_went_away(
    tmp_path: Path,
) -> None:
    """A tool writes to stderr with print(), sys.stderr.write(), logging, a write to fd 2 and
    a child process: while stderr's reader is there, every line reaches it; once it has gone
    away, the same tool still answers (the first time and the next), nothing of it is lost on
    stdout, and the server exits 0 when stdin closes."""
    async with heard(tmp_path) as (server, stderr):
        await server.send(call(1, "grumble", text="heard"))
        said, _ = await server.until(1)
        assert said["result"]["content"][0]["text"] == "heard", said
        wanted = ["print: heard", "write: heard", "fd 2: heard", "child: heard"]
        log = read_until(stderr.fileno(), wanted)
        assert "logging: heard" in log, log
        assert "Traceback" not in log, log
        stderr.close()  # stderr's reader goes away
        for rid in (2, 3):  # the second time too: the first one's trouble is not left behind
            await server.send(call(rid, "grumble", text="unheard " * 2000))
            said, _ = await server.until(rid, within=10.0)
            assert "isError" not in said["result"], said
            assert said["result"]["content"][0]["text"] == "unheard " * 2000
        await server.close_stdin()
        assert await server.rest() == []
        assert await asyncio.wait_for(server.proc.wait(), 10) == 0


async def test_the_log_at_the_servers_stop_reaches_stderr_while_it_is_read(tmp_path: Path) -> None:
    """What is logged as the process exits, after the server stopped, still reaches stderr
    while its reader is there, and the process exits 0."""
    async with heard(tmp_path) as (server, stderr):
        await server.send(call(1, "grumble", text="heard"))
        said, _ = await server.until(1)
        assert said["result"]["content"][0]["text"] == "heard", said
        await server.close_stdin()
        assert await server.rest() == []
        assert await asyncio.wait_for(server.proc.wait(), 10) == 0
        log = read_until(stderr.fileno(), ["print: heard", "child: heard"])
        log += stderr.read().decode(errors="replace")  # the process has exited: to the end
        assert "logging at exit: heard" in log, log
        assert "Traceback" not in log and "Logging error" not in log, log


@pytest.mark.parametrize("running", [True, False], ids=["logged-while-serving", "silent-until-exit"])
async def test_the_log_at_the_servers_stop_fails_nothing_once_stderrs_reader_went_away(
    tmp_path: Path, running: bool
) -> None:
    """stderr's reader went away while the server ran; what the server logs as it stops,
    and what is logged as the process exits, go nowhere: no "Logging error", and the
    process exits 0 (not 120, Python's status when it cannot flush stderr at exit). Also
    when nothing was written to stderr between its reader's end and the server's stop."""
    async with heard(tmp_path) as (server, stderr):
        await server.send(call(1, "grumble", text="heard"))
        said, _ = await server.until(1)
        assert said["result"]["content"][0]["text"] == "heard", said
        read_until(stderr.fileno(), ["print: heard", "child: heard"])
        stderr.close()  # stderr's reader goes away
        if running:  # a request running at stdin's end: its cancel is logged as the server stops
            await server.send(call(2, "wait", progress="w", seconds=30))
            started = await server.recv()
            assert started["method"] == "notifications/progress", started
        await server.close_stdin()
        assert await server.rest(within=10) == []
        assert await asyncio.wait_for(server.proc.wait(), 10) == 0


async def test_what_tool_code_writes_to_stderr_fails_nothing_when_started_without_it(tmp_path: Path) -> None:
    """Started with fd 2 closed (``2>&-``), there is no stderr: what tool code writes to it
    goes nowhere, the tool answers, nothing of it reaches stdout, and the process exits 0."""
    command = ["sh", "-c", 'exec "$@" 2>&-', "sh", *cli(), "serve", str(WAITING_SERVER)]
    proc = await asyncio.create_subprocess_exec(
        *command, stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE, cwd=ROOT, env=_env()
    )
    none = tmp_path / "none.stderr"
    none.touch()
    server = StdioProcess(proc, none)
    try:
        for rid in (1, 2):
            await server.send(call(rid, "grumble", text="nobody"))
            said, _ = await server.until(rid, within=10.0)
            assert "isError" not in said["result"], said
            assert said["result"]["content"][0]["text"] == "nobody"
        await server.close_stdin()
        assert await server.rest() == []
        assert await asyncio.wait_for(proc.wait(), 10) == 0
    finally:
        await server.stop()
