"""Handlers written as plain functions in a real process: over stdio a blocked one holds up
nothing and one stuck for good does not keep the process alive, over HTTP it keeps no other
client waiting, and a forked child starts its own workers."""

from __future__ import annotations

import asyncio
import contextlib
import errno
import os
import subprocess
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from support.http import McpHttp, meta
from support.procs import StdioProcess, http_process, stdio_process
from support.sync_handlers import BOUND
from support.wire import WireChecker

pytestmark = pytest.mark.anyio
SYNC_APP = Path(__file__).with_name("sync_app.py")


@pytest.fixture
def fifo(tmp_path: Path) -> Path:
    path = tmp_path / "hold.fifo"
    os.mkfifo(path)
    return path


async def opened_by_reader(path: Path) -> int:
    """A write end of the FIFO, once a reader has it open (the tool waits in it)."""
    for _ in range(int(BOUND / 0.02)):
        try:
            return os.open(path, os.O_WRONLY | os.O_NONBLOCK)
        except OSError as exc:
            if exc.errno != errno.ENXIO:  # ENXIO: no reader yet
                raise
        await asyncio.sleep(0.02)
    raise AssertionError("the tool never opened the FIFO")


@contextlib.asynccontextmanager
async def sync_server(tmp_path: Path) -> AsyncIterator[StdioProcess]:
    async with stdio_process(SYNC_APP, log_dir=tmp_path) as proc:
        yield proc


async def call(proc: StdioProcess, rid: int, name: str, arguments: dict[str, Any]) -> None:
    await proc.send(
        {
            "jsonrpc": "2.0",
            "id": rid,
            "method": "tools/call",
            "params": {"name": name, "arguments": arguments, "_meta": meta()},
        }
    )


async def test_over_stdio_a_blocked_sync_tool_holds_up_nothing_and_cancelled_ends_quietly(
    tmp_path: Path, fifo: Path
) -> None:
    async with sync_server(tmp_path) as proc:
        await call(proc, 1, "read_fifo", {"path": str(fifo)})
        writer = await opened_by_reader(fifo)  # the tool is in its thread, reading
        try:
            await call(proc, 2, "echo", {"text": "hi"})
            answer, before = await proc.until(2, within=BOUND)
            assert answer["result"]["content"][0]["text"] == "hi" and before == []
            await proc.send(
                {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 1}}
            )
            await call(proc, 3, "echo", {"text": "after the cancel"})
            answer, before = await proc.until(3, within=BOUND)
            assert before == []
            os.write(writer, b"too late")
        finally:
            os.close(writer)  # the tool reads to the end and returns: nobody wants it
        await call(proc, 4, "read_fifo_done", {})
        answer, before = await proc.until(4, within=BOUND)
        assert answer["result"]["content"][0]["text"] == "too late"  # it did finish
        assert before == []  # and nothing was sent for request 1
        await proc.close_stdin()
        assert await proc.rest(within=BOUND) == []
        assert await asyncio.wait_for(proc.proc.wait(), BOUND) == 0


async def test_over_stdio_a_sync_tool_stuck_for_good_does_not_keep_the_process_alive(
    tmp_path: Path, fifo: Path
) -> None:
    """The function waits on a FIFO nobody will ever write to; stdin closes; the process
    exits (the request is cancelled after the grace period, the thread left behind)."""
    async with sync_server(tmp_path) as proc:
        await call(proc, 1, "read_fifo", {"path": str(fifo)})
        writer = await opened_by_reader(fifo)
        try:
            await proc.close_stdin()
            assert await proc.rest(within=BOUND) == []
            assert await asyncio.wait_for(proc.proc.wait(), BOUND) == 0
        finally:
            os.close(writer)


async def test_over_http_a_blocked_sync_tool_does_not_keep_other_clients_waiting(
    tmp_path: Path, fifo: Path, wire: WireChecker
) -> None:
    """Two clients of one ``mcp-elicit serve --http`` process: the first one's tool waits
    on a FIFO in its thread while the second one's calls are answered."""
    with http_process(SYNC_APP, log_dir=tmp_path) as server:
        async with httpx.AsyncClient(timeout=BOUND) as first, httpx.AsyncClient(timeout=BOUND) as second:
            held = asyncio.ensure_future(
                McpHttp(first, server.url, wire).call("read_fifo", {"path": str(fifo)})
            )
            writer = await opened_by_reader(fifo)
            try:
                other = McpHttp(second, server.url, wire)
                for n in range(3):
                    reply = await other.call("echo", {"text": f"hi {n}"})
                    assert reply.result["content"][0]["text"] == f"hi {n}"
                assert not held.done()
                os.write(writer, b"written")
            finally:
                os.close(writer)
            reply = await asyncio.wait_for(held, BOUND)
            assert reply.result["content"][0]["text"] == "written"


def test_a_forked_child_starts_its_own_workers(tmp_path: Path) -> None:
    """A process forked after the pool started has none of its threads: it starts new ones
    rather than queueing jobs that nothing takes."""
    script = tmp_path / "fork.py"
    script.write_text(
        "import asyncio, os, sys\n"
        "from mcp_elicit.server.threads import run_sync\n"
        "async def twice() -> int:\n"
        "    return await asyncio.wait_for(run_sync('test', lambda: 2), 5)\n"
        "assert asyncio.run(twice()) == 2\n"
        "pid = os.fork()\n"
        "if pid == 0:\n"
        "    try:\n"
        "        os._exit(0 if asyncio.run(twice()) == 2 else 1)\n"
        "    except BaseException:\n"
        "        os._exit(2)\n"
        "sys.exit(os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1]))\n",
        encoding="utf-8",
    )
    done = subprocess.run([sys.executable, str(script)], timeout=30, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
