"""stdio (2026-07-28) with a real ``mcp-elicit serve`` subprocess: its streams. Closing stdin
ends the process (with a request or task in flight too), a closed stdout stops it quietly,
and what tool code or the server module writes goes to stderr or is dropped when it is
closed."""

from __future__ import annotations

import asyncio
import contextlib
import os
from pathlib import Path

import orjson
import pytest

from support.http import meta
from support.procs import StdioProcess, cli, stdio_process
from support.stdio_transport import WAITING_SERVER, Stdio
from support.waiting import HANG_GUARD, HOURS, hang_guard
from support.wire import WireChecker

pytestmark = pytest.mark.anyio


@pytest.fixture(scope="module")
def anyio_backend() -> str:
    """Module-wide, so that one server process can serve several tests."""
    return "asyncio"


async def test_closing_stdin_ends_the_process(own_conformance: Stdio) -> None:
    conformance = own_conformance
    await conformance.call("tools/list", rid=1)
    await conformance.proc.close_stdin()
    async with hang_guard("the server exiting once its stdin closed"):
        assert await conformance.proc.rest(within=HANG_GUARD) == []
        assert await conformance.proc.proc.wait() == 0


async def test_closing_stdin_with_a_request_in_flight_still_exits(own_waiting: Stdio) -> None:
    waiting = own_waiting
    await waiting.send(
        "tools/call", {"name": "wait", "arguments": {"seconds": HOURS}}, rid=1, progressToken=1
    )
    await waiting.recv()
    await waiting.proc.close_stdin()
    async with hang_guard("the server exiting with a request that never ends in flight"):
        assert await waiting.proc.rest(within=HANG_GUARD) == []  # cancelled after the grace: no response
        assert await waiting.proc.proc.wait() == 0
    assert (
        "stdin closed: 1 request(s) still running after 2 s cancelled, unanswered: 1" in waiting.proc.stderr()
    )


async def test_closing_stdin_with_a_task_running_cancels_it_and_exits(own_conformance: Stdio) -> None:
    """The tasks extension over stdio: the call is answered with a task at once, the task
    is polled, and when stdin closes the process exits at once, its running task
    cancelled (no grace period waits for it, nothing is reported pending)."""
    conformance = own_conformance
    tasks = {"extensions": {"io.modelcontextprotocol/tasks": {}}}
    params = {"name": "slow_compute", "arguments": {"seconds": HOURS, "label": "stdio"}}
    created = await conformance.call("tools/call", params, rid=1, capabilities=tasks)
    assert created["result"]["resultType"] == "task"
    task_id = created["result"]["taskId"]
    polled = await conformance.call("tasks/get", {"taskId": task_id}, rid=2, capabilities=tasks)
    assert polled["result"]["status"] == "working" and polled["result"]["statusMessage"] == "computing stdio"
    await conformance.proc.close_stdin()
    async with hang_guard("the server exiting with a task of hours running"):
        assert await conformance.proc.rest(within=HANG_GUARD) == []
        assert await conformance.proc.proc.wait() == 0
    stderr = conformance.proc.stderr()
    assert "still running" not in stderr, "the task was cancelled at once, not waited for"
    assert "Task was destroyed" not in stderr and "Traceback" not in stderr


async def test_listen_over_stdio_until_the_client_cancels_it(own_waiting: Stdio) -> None:
    """On stdio every subscription shares stdout: each message carries its subscription
    id; notifications/cancelled ends it, with no response."""
    waiting = own_waiting
    await waiting.send("subscriptions/listen", {"notifications": {"toolsListChanged": True}}, rid="sub")
    ack = await waiting.recv()
    assert ack["method"] == "notifications/subscriptions/acknowledged"
    assert ack["params"]["_meta"] == {"io.modelcontextprotocol/subscriptionId": "sub"}
    grown, before = await waiting.until_with(
        "tools/call", {"name": "grow", "arguments": {"name": "sprout"}}, rid=1
    )
    changed = [m for m in before if m.get("method") == "notifications/tools/list_changed"]
    if not changed:  # the notice may come just after the answer
        changed = [await waiting.recv()]
    assert changed[0]["params"] == {"_meta": {"io.modelcontextprotocol/subscriptionId": "sub"}}
    assert grown["result"]["content"][0]["text"] == "grew sprout"
    await waiting.proc.send(
        {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": "sub"}}
    )
    echo = await waiting.call("tools/call", {"name": "echo", "arguments": {"text": "after"}}, rid=2)
    assert echo["result"]["content"][0]["text"] == "after"
    await waiting.proc.close_stdin()
    assert [waiting.check(m) for m in await waiting.proc.rest()] == []
    assert "sub" not in [m.get("id") for m in waiting.proc.received if "method" not in m]


async def test_what_tool_code_writes_to_stdout_goes_to_stderr(own_waiting: Stdio) -> None:
    """print(), a write to fd 1 and a child process's output would otherwise land between
    the JSON-RPC lines; they go to stderr, and stdout stays the protocol's alone."""
    waiting = own_waiting
    said = await waiting.call("tools/call", {"name": "chatter", "arguments": {"text": "noise"}}, rid=1)
    assert said["result"]["content"][0]["text"] == "noise"
    echo = await waiting.call("tools/call", {"name": "echo", "arguments": {"text": "after"}}, rid=2)
    assert echo["result"]["content"][0]["text"] == "after"
    await waiting.proc.close_stdin()
    assert await waiting.proc.rest() == []
    stderr = waiting.proc.stderr()
    for line in ["print: noise", "fd 1: noise", "child: noise"]:
        assert line in stderr.splitlines(), stderr


async def test_a_closed_stdout_stops_the_server_quietly(tmp_path: Path) -> None:
    """The reader of stdout went away (EPIPE): nobody can be answered, so the server stops,
    says so once on stderr and exits 0, with no traceback, while its stdin is still open."""
    read_end, write_end = os.pipe()
    os.close(read_end)
    stderr_path = tmp_path / "stdio.stderr"
    with stderr_path.open("wb") as err:
        proc = await asyncio.create_subprocess_exec(
            *cli(), "serve", str(WAITING_SERVER), stdin=asyncio.subprocess.PIPE, stdout=write_end, stderr=err
        )
    os.close(write_end)
    assert proc.stdin is not None
    try:
        request = {"jsonrpc": "2.0", "method": "tools/list", "params": {"_meta": meta()}}
        with contextlib.suppress(ConnectionError):
            for rid in range(20):
                proc.stdin.write(orjson.dumps({**request, "id": rid}) + b"\nnot json\n")
                await proc.stdin.drain()
        assert await asyncio.wait_for(proc.wait(), 10) == 0
    finally:
        if proc.returncode is None:
            proc.kill()
            await proc.wait()
        proc.stdin.close()
    stderr = stderr_path.read_text()
    assert "Traceback" not in stderr, stderr
    assert "pipe closed by peer" not in stderr, stderr
    assert len([line for line in stderr.splitlines() if "stdout" in line]) == 1, stderr


async def test_a_last_request_without_a_newline_is_answered(own_waiting: Stdio) -> None:
    """``printf '...' | server``: the last message ends with the input, not with a newline;
    it is still read (and a cut-off one gets its -32700)."""
    waiting = own_waiting
    params = {"name": "echo", "arguments": {"text": "last"}, "_meta": meta()}
    message = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": params}
    waiting.methods[1] = "tools/call"
    await waiting.proc.send(orjson.dumps(message) + b"\n" + b'{"jsonrpc": "2.0", "id": 2, "method": "too')
    await waiting.proc.close_stdin()
    rest = [waiting.check(m) for m in await waiting.proc.rest()]
    assert [m["result"]["content"][0]["text"] for m in rest if "result" in m] == ["last"]
    assert [(m.get("id"), m["error"]["code"]) for m in rest if "error" in m] == [(None, -32700)]


async def test_what_tool_code_writes_is_dropped_when_stderr_is_closed(tmp_path: Path) -> None:
    """Started with fd 2 closed (``2>&-``), the process has no log: what tool code writes
    to stdout goes nowhere, and does not reach whatever file took the number 2."""
    command = ["sh", "-c", 'exec "$@" 2>&-', "sh", *cli(), "serve", str(WAITING_SERVER)]
    proc = await asyncio.create_subprocess_exec(
        *command, stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE
    )
    server = StdioProcess(proc, tmp_path / "none.stderr")
    try:
        params = {"name": "chatter", "arguments": {"text": "noise"}, "_meta": meta()}
        await server.send({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": params})
        said, _ = await server.until(1)
        assert said["result"] == {
            "content": [{"type": "text", "text": "noise"}],
            "resultType": "complete",
            "_meta": said["result"]["_meta"],
        }
    finally:
        await server.stop()


async def test_what_the_server_module_prints_as_it_loads_goes_to_stderr(
    tmp_path: Path, wire: WireChecker
) -> None:
    """A module that prints at import (a banner, a debug line) is loaded before serving
    starts; what it prints goes to stderr too, so the first line on stdout is JSON-RPC."""
    module = tmp_path / "banner_server.py"
    module.write_text(
        "from mcp_elicit import Server\n"
        "print('banner: starting up')\n"
        "app = Server('banner')\n"
        "@app.tool(description='Echoes')\n"
        "def echo(text: str) -> str:\n"
        "    return text\n"
    )
    async with stdio_process(module, log_dir=tmp_path) as proc:
        server = Stdio(proc, wire)
        echo = await server.call("tools/call", {"name": "echo", "arguments": {"text": "hi"}}, rid=1)
        assert echo["result"]["content"][0]["text"] == "hi"
        await proc.close_stdin()
        assert await proc.rest() == []
        assert "banner: starting up" in proc.stderr().splitlines()
