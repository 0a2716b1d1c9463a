"""stdio shutdown with a real ``mcp-elicit serve`` subprocess: a client that closes stdin and
reads its answers slowly, or never, and one that sends SIGTERM. Whatever happens, the server
ends within a bounded time, says why on stderr, and exits as its help says."""

from __future__ import annotations

import asyncio
import fcntl
import os
import signal
import sys
import termios
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any, BinaryIO

import orjson
import pytest
from transports.slow_stop_server import STOPPING

from support.http import meta
from support.procs import cli, stdio_process
from support.waiting import eventually, hang_guard

pytestmark = pytest.mark.anyio

WAITING_SERVER = Path(__file__).with_name("waiting_server.py")
SLOW_STOP_SERVER = Path(__file__).with_name("slow_stop_server.py")


def echo(rid: int, text: str) -> bytes:
    params = {"name": "echo", "arguments": {"text": text}, "_meta": meta()}
    return orjson.dumps({"jsonrpc": "2.0", "id": rid, "method": "tools/call", "params": params}) + b"\n"


@asynccontextmanager
async def unread(tmp_path: Path) -> AsyncIterator[tuple[asyncio.subprocess.Process, BinaryIO]]:
    """The waiting server with its stdout on a plain pipe that nothing reads until the test
    does (its read end stays open meanwhile); the process is killed if still running."""
    answers_out, answers_in = os.pipe()
    answers = os.fdopen(answers_out, "rb")
    with (tmp_path / "stderr").open("wb") as err:
        proc = await asyncio.create_subprocess_exec(
            *cli(), "serve", str(WAITING_SERVER), stdin=asyncio.subprocess.PIPE, stdout=answers_in, stderr=err
        )
    os.close(answers_in)
    try:
        yield proc, answers
    finally:
        answers.close()
        if proc.returncode is None:
            proc.kill()
            await proc.wait()


#: Requests whose answers (over 2 KiB each) overflow a pipe (64 KiB by default on Linux):
#: once the server has them, it cannot write every answer while nobody reads.
OVERFLOWING = 40


def answered(answers: BinaryIO) -> bool:
    """Whether the server has written an answer to the pipe nobody reads (FIONREAD)."""
    waiting = fcntl.ioctl(answers.fileno(), termios.FIONREAD, b"\0\0\0\0")
    return int.from_bytes(waiting, sys.byteorder) > 0


async def flood(proc: asyncio.subprocess.Process, answers: BinaryIO) -> int:
    """Write requests until the server stops taking them (its answers are not read): at
    least ``OVERFLOWING`` of them, and once it has answered (it is serving, its signal
    handlers set). A write also waits while the server is merely slow on a loaded machine,
    or still starting (the pipe and our buffer hold some 128 KiB unread), and the wait
    alone would not tell that its answers cannot all be written."""
    assert proc.stdin is not None
    sent = 0
    async with hang_guard("the server to take the first requests"):
        while sent < 6000:
            proc.stdin.write(echo(sent, "x" * 2048))
            sent += 1
            while True:
                try:
                    await asyncio.wait_for(proc.stdin.drain(), 1.0)
                    break
                except TimeoutError:
                    if sent >= OVERFLOWING and answered(answers):
                        return sent
    raise AssertionError(f"the server took all {sent} requests while its answers went unread")


async def test_closing_stdin_without_reading_stdout_ends_the_server(tmp_path: Path) -> None:
    """A client that floods requests, never reads an answer and closes stdin: the server,
    held back writing, still notices stdin is gone; once nothing has been read from stdout
    for the grace period it stops, says why, and exits 0 (before, it waited, blocked, until
    the client exited)."""
    async with unread(tmp_path) as (proc, answers):
        await flood(proc, answers)
        assert proc.stdin is not None
        proc.stdin.transport.abort()  # closed now, what the server has not taken with it
        assert await asyncio.wait_for(proc.wait(), 15.0) == 0  # before, it waited for good
    stderr = (tmp_path / "stderr").read_text()
    assert "Traceback" not in stderr, stderr
    said = [line for line in stderr.splitlines() if "stdout" in line]
    assert len(said) == 1 and "stdin is closed and nothing was read from stdout for 2 s" in said[0], stderr
    assert "answers unwritten; stopping" in said[0], stderr


async def test_answers_owed_to_a_client_that_never_reads_are_given_up_logged(tmp_path: Path) -> None:
    """A client that closes stdin and never reads: a handler still running after the grace
    period is cancelled, the answers that do not fit in the pipe are given up once nothing
    is read for the grace period, and the log says both, before the server exits 0."""
    async with unread(tmp_path) as (proc, _answers):
        assert proc.stdin is not None
        wait = {"name": "wait", "arguments": {"seconds": 60}, "_meta": meta()}
        proc.stdin.write(
            orjson.dumps({"jsonrpc": "2.0", "id": "slow", "method": "tools/call", "params": wait})
        )
        proc.stdin.write(b"\n" + b"".join(echo(rid, "z" * 300_000) for rid in range(3)))
        await proc.stdin.drain()
        proc.stdin.close()
        assert await asyncio.wait_for(proc.wait(), 15.0) == 0
    stderr = (tmp_path / "stderr").read_text()
    assert "Traceback" not in stderr, stderr
    assert "stdin closed: 1 request(s) still running after 2 s cancelled, unanswered: 'slow'" in stderr, (
        stderr
    )
    assert "stdin is closed and nothing was read from stdout for 2 s" in stderr, stderr


async def test_answers_owed_at_stdin_end_reach_a_slow_reader(tmp_path: Path) -> None:
    """A client that closes stdin, then reads the answers slowly (taking longer than the
    grace period in all): as long as it keeps reading, every answer reaches it whole, and
    the server exits 0 once they are written."""
    text = "y" * 300_000
    async with unread(tmp_path) as (proc, answers):
        assert proc.stdin is not None
        for rid in range(4):
            proc.stdin.write(echo(rid, text))
        await proc.stdin.drain()
        proc.stdin.close()
        await asyncio.sleep(1.0)  # the client is slow: it starts reading late
        received = bytearray()
        async with asyncio.timeout(60):  # about 1.2 MB at 64 KB per 0.15 s: some 3 s
            while chunk := await asyncio.to_thread(os.read, answers.fileno(), 65536):
                received += chunk
                await asyncio.sleep(0.15)
        assert await asyncio.wait_for(proc.wait(), 10.0) == 0
    messages: list[dict[str, Any]] = [orjson.loads(line) for line in bytes(received).splitlines()]
    assert sorted(m["id"] for m in messages) == [0, 1, 2, 3]
    assert all(m["result"]["content"][0]["text"] == text for m in messages)
    assert "Traceback" not in (tmp_path / "stderr").read_text()


@pytest.mark.parametrize(
    ("sig", "status", "name"), [(signal.SIGTERM, 0, "SIGTERM"), (signal.SIGINT, 130, "SIGINT")]
)
async def test_a_stop_signal_ends_a_server_held_back_writing(
    tmp_path: Path, sig: signal.Signals, status: int, name: str
) -> None:
    """The spec's last word to a stdio server before SIGKILL is SIGTERM: it stops the server
    at once, even while it is held back writing to a stdout nobody reads, saying so, and
    it exits 0 (stopped, as for stdin closed); Ctrl-C (SIGINT) likewise, exiting 130."""
    async with unread(tmp_path) as (proc, answers):
        await flood(proc, answers)
        proc.send_signal(sig)  # its stdin open: held back, it would wait for a reader for good
        assert await asyncio.wait_for(proc.wait(), 10.0) == status
    stderr = (tmp_path / "stderr").read_text()
    assert "Traceback" not in stderr, stderr
    assert f"{name} received; stopping" in stderr, stderr


async def test_a_server_whose_stdin_is_already_at_its_end_stops_quietly(tmp_path: Path) -> None:
    """Started on an empty pipe whose writer is gone (``: | mcp-elicit serve app.py``, a
    client that exits at once), the server has nothing to serve: it exits 0 without a
    traceback (before: the pipe, closed at its end while the server set up stdout, made
    ``fileno()`` raise, and the server exited 1)."""
    read_end, write_end = os.pipe()
    os.close(write_end)
    with (tmp_path / "stderr").open("wb") as err, os.fdopen(read_end, "rb") as stdin:
        proc = await asyncio.create_subprocess_exec(
            *cli(), "serve", str(WAITING_SERVER), stdin=stdin, stdout=asyncio.subprocess.PIPE, stderr=err
        )
    try:
        assert await asyncio.wait_for(proc.wait(), 20.0) == 0, (tmp_path / "stderr").read_text()
    finally:
        if proc.returncode is None:
            proc.kill()
            await proc.wait()
    assert "Traceback" not in (tmp_path / "stderr").read_text()


async def test_a_stop_signal_while_the_server_stops_after_stdin_ended_is_quiet(tmp_path: Path) -> None:
    """A client that closes stdin, then sends SIGTERM as the server is stopping (what
    ``mcp-elicit call`` does when interrupted): stdout's pipe is closed by then, and the
    signal stops what is left without a traceback (before: asyncio logged an
    AttributeError from aborting the closed pipe), exiting 0."""
    stderr_path = tmp_path / "stderr"
    with stderr_path.open("wb") as err:
        proc = await asyncio.create_subprocess_exec(
            *cli(),
            "serve",
            str(SLOW_STOP_SERVER),
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=err,
        )
    try:
        assert proc.stdin is not None and proc.stdout is not None
        discover = {"jsonrpc": "2.0", "id": 1, "method": "server/discover", "params": {"_meta": meta()}}
        proc.stdin.write(orjson.dumps(discover) + b"\n")
        async with asyncio.timeout(20):
            assert orjson.loads(await proc.stdout.readline())["id"] == 1  # serving
            proc.stdin.close()
        # its stop has begun, and lasts 3 s
        await eventually(lambda: STOPPING in stderr_path.read_text(), "the server's stop")
        proc.send_signal(signal.SIGTERM)
        assert await asyncio.wait_for(proc.wait(), 20.0) == 0, stderr_path.read_text()
    finally:
        if proc.returncode is None:
            proc.kill()
            await proc.wait()
    stderr = stderr_path.read_text()
    assert "SIGTERM received; stopping" in stderr, stderr
    assert "Traceback" not in stderr, stderr


def _stop_by_signal(proc: asyncio.subprocess.Process) -> None:
    proc.send_signal(signal.SIGTERM)


def _stop_by_closing_stdout(proc: asyncio.subprocess.Process) -> None:
    transport = proc._transport  # type: ignore[attr-defined]  # the test's end of the pipes
    transport.get_pipe_transport(1).close()  # the client's end of stdout: nobody reads it now


@pytest.mark.parametrize(
    ("stop", "said"),
    [
        (_stop_by_signal, "SIGTERM received; stopping"),
        (_stop_by_closing_stdout, "stdout was closed by its reader"),
    ],
)
async def test_stopped_in_stdins_grace_period_the_server_cancels_what_runs_at_once(
    tmp_path: Path, stop: Callable[[asyncio.subprocess.Process], None], said: str
) -> None:
    """SIGTERM, or stdout's reader going away, after stdin ended while a request still
    runs in the grace period that end gives it: nobody can be answered any more, and the
    request is cancelled at once (as the signal's log line says, '1 request(s) in flight
    cancelled unanswered'), not left to run on, unanswered, for the rest of the grace
    period (before: it ran on, and could finish, while the server waited for it)."""
    told = tmp_path / "told"
    async with stdio_process(WAITING_SERVER, log_dir=tmp_path) as server:
        listen = {"notifications": {"toolsListChanged": True}, "_meta": meta()}
        await server.send({"jsonrpc": "2.0", "id": "sub", "method": "subscriptions/listen", "params": listen})
        assert (await server.recv())["method"] == "notifications/subscriptions/acknowledged"
        params = {"name": "until_told", "arguments": {"path": str(told)}, "_meta": meta(progressToken=1)}
        await server.send({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": params})
        assert (await server.recv())["method"] == "notifications/progress"  # it runs
        await server.close_stdin()
        await server.until("sub")  # answered as stdin's end is seen: the grace period has begun
        stop(server.proc)
        await eventually(lambda: said in server.stderr(), "the server's stop")
        told.touch()  # a request still running would now return
        assert await asyncio.wait_for(server.proc.wait(), 20.0) == 0
    stderr = server.stderr()
    assert "until_told: cancelled" in stderr, stderr
    assert "until_told: told" not in stderr, stderr
    assert "Traceback" not in stderr, stderr


@pytest.mark.parametrize(("fd", "name"), [(0, "stdin"), (1, "stdout")])
async def test_started_without_stdin_or_stdout_the_server_says_so_and_stops(
    tmp_path: Path, fd: int, name: str
) -> None:
    """Started with fd 0 or fd 1 closed (``0<&-``, ``>&-``), there is nothing to read or
    nobody to answer: the server says which, and exits 0 as after stdin's end or stdout's
    reader going away (before: a traceback and exit 1; without stdout the event loop's own
    descriptor took number 1 and was overwritten)."""
    command = ["sh", "-c", f'exec "$@" {fd}<&-' if fd == 0 else 'exec "$@" >&-', "sh", *cli(), "serve"]
    with (tmp_path / "stderr").open("wb") as err:
        proc = await asyncio.create_subprocess_exec(
            *command,
            str(WAITING_SERVER),
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.DEVNULL,
            stderr=err,
        )
        try:
            assert await asyncio.wait_for(proc.wait(), 20.0) == 0
        finally:
            if proc.returncode is None:
                proc.kill()
                await proc.wait()
    stderr = (tmp_path / "stderr").read_text()
    assert "Traceback" not in stderr, stderr
    assert f"{name} is not open (fd {fd} was closed when the process started)" in stderr, stderr
