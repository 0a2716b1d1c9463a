"""stdio (2026-07-28) with a real ``mcp-elicit serve`` subprocess on asyncio pipes. Every line
the server writes must be one JSON-RPC message, and each is checked against the official
schema (responses by the method of their request)."""

from __future__ import annotations

import asyncio
import contextlib
import os
import time
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import orjson
import pytest

from support.http import check_error, meta
from support.procs import StdioProcess, cli, stdio_process
from support.wire import REQUESTS, WireChecker

pytestmark = pytest.mark.anyio

WAITING_SERVER = Path(__file__).with_name("waiting_server.py")


class Stdio:
    """Sends requests and checks every message read against the schema."""

    def __init__(self, proc: StdioProcess, wire: WireChecker) -> None:
        self.proc = proc
        self.wire = wire
        self.methods: dict[Any, str] = {}

    async def send(self, method: str, params: dict[str, Any] | None = None, *, rid: Any, **kw: Any) -> None:
        body = dict(params or {})
        body.setdefault("_meta", meta(**kw))
        message = {"jsonrpc": "2.0", "id": rid, "method": method, "params": body}
        if REQUESTS.get(method) in self.wire.defs:  # a method of this revision: the request is checked too
            self.wire.request(message)
        self.methods[rid] = method
        await self.proc.send(message)

    def check(self, message: dict[str, Any]) -> dict[str, Any]:
        if "method" in message:
            assert "id" not in message, f"the server sent a request: {message}"
            self.wire.notification(message)
        elif "error" in message:
            check_error(self.wire, message)
        else:
            self.wire.response(self.methods[message["id"]], message)
        return message

    async def recv(self) -> dict[str, Any]:
        return self.check(await self.proc.recv())

    async def until(self, rid: Any) -> tuple[dict[str, Any], list[dict[str, Any]]]:
        response, before = await self.proc.until(rid)
        for message in before:
            self.check(message)
        return self.check(response), before

    async def until_with(
        self, method: str, params: dict[str, Any] | None = None, *, rid: Any, **kw: Any
    ) -> tuple[dict[str, Any], list[dict[str, Any]]]:
        """Send a request; its response and the messages that came before it."""
        await self.send(method, params, rid=rid, **kw)
        return await self.until(rid)

    async def call(
        self, method: str, params: dict[str, Any] | None = None, *, rid: Any, **kw: Any
    ) -> dict[str, Any]:
        response, before = await self.until_with(method, params, rid=rid, **kw)
        assert before == []
        return response


@pytest.fixture(scope="module")
def anyio_backend() -> str:
    """Module-wide, so that one server process can serve several tests."""
    return "asyncio"


@pytest.fixture(scope="module")
async def _shared_conformance(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[Stdio]:
    async with stdio_process(log_dir=tmp_path_factory.mktemp("stdio")) as proc:
        yield Stdio(proc, WireChecker.load("2026-07-28"))
        assert "Traceback" not in proc.stderr(), proc.stderr()


@pytest.fixture(scope="module")
async def _shared_waiting(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[Stdio]:
    async with stdio_process(WAITING_SERVER, log_dir=tmp_path_factory.mktemp("stdio")) as proc:
        yield Stdio(proc, WireChecker.load("2026-07-28"))
        assert "Traceback" not in proc.stderr(), proc.stderr()


@pytest.fixture
def conformance(_shared_conformance: Stdio) -> Iterator[Stdio]:
    """The conformance server over stdio, shared by the tests that leave it as they found it."""
    yield _shared_conformance
    assert _shared_conformance.proc.proc.returncode is None


@pytest.fixture
def waiting(_shared_waiting: Stdio) -> Iterator[Stdio]:
    """The waiting server over stdio, shared likewise."""
    yield _shared_waiting
    assert _shared_waiting.proc.proc.returncode is None


@pytest.fixture
async def own_conformance(tmp_path: Path, wire: WireChecker) -> AsyncIterator[Stdio]:
    """A conformance server process of this test's own (for tests that end it)."""
    async with stdio_process(log_dir=tmp_path) as proc:
        yield Stdio(proc, wire)


@pytest.fixture
async def own_waiting(tmp_path: Path, wire: WireChecker) -> AsyncIterator[Stdio]:
    async with stdio_process(WAITING_SERVER, log_dir=tmp_path) as proc:
        yield Stdio(proc, wire)


async def test_requests_and_results(conformance: Stdio) -> None:
    discover = await conformance.call("server/discover", rid=1)
    assert discover["result"]["supportedVersions"][0] == "2026-07-28"
    tools = await conformance.call("tools/list", rid="two")
    assert "test_simple_text" in [t["name"] for t in tools["result"]["tools"]]
    call = await conformance.call("tools/call", {"name": "test_simple_text"}, rid=3)
    assert call["result"]["content"][0]["text"] == "This is a simple text response for testing."
    read = await conformance.call("resources/read", {"uri": "test://static-text"}, rid=4)
    assert read["result"]["contents"][0]["uri"] == "test://static-text"
    prompt = await conformance.call(
        "prompts/get", {"name": "test_prompt_with_arguments", "arguments": {"arg1": "x", "arg2": "y"}}, rid=5
    )
    assert prompt["result"]["messages"][0]["content"]["type"] == "text"


async def test_progress_notifications_come_before_the_result(conformance: Stdio) -> None:
    await conformance.send("tools/call", {"name": "test_tool_with_progress"}, rid=1, progressToken="p")
    response, before = await conformance.until(1)
    assert [n["params"]["progress"] for n in before] == [0, 50, 100]
    assert {n["params"]["progressToken"] for n in before} == {"p"}
    assert response["result"]["content"][0]["text"] == "Progress complete"


async def test_elicitation_round_trip(conformance: Stdio) -> None:
    params = {"name": "test_input_required_result_elicitation"}
    first = (await conformance.call("tools/call", params, rid=1))["result"]
    assert first["resultType"] == "input_required"
    assert first["inputRequests"]["user_name"]["method"] == "elicitation/create"
    retry = {
        **params,
        "inputResponses": {"user_name": {"action": "accept", "content": {"name": "Grace"}}},
        "requestState": first["requestState"],
    }
    second = (await conformance.call("tools/call", retry, rid=2))["result"]
    assert second["content"][0]["text"] == "Hello, Grace!"


async def test_protocol_errors_carry_the_request_id(conformance: Stdio) -> None:
    await conformance.proc.send({"jsonrpc": "2.0", "id": "m", "method": "tools/list", "params": {}})
    conformance.methods["m"] = "tools/list"
    no_meta, _ = await conformance.until("m")
    assert no_meta["error"]["code"] == -32602
    ping = await conformance.call("ping", rid="p")
    assert (ping["id"], ping["error"]["code"]) == ("p", -32601)
    unknown = await conformance.call("no/such", rid=7)
    assert (unknown["id"], unknown["error"]["code"]) == (7, -32601)
    await conformance.send(
        "tools/list", {"_meta": {**meta(), "io.modelcontextprotocol/protocolVersion": "2099-01-01"}}, rid=8
    )
    version, _ = await conformance.until(8)
    assert version["error"]["code"] == -32022
    assert version["error"]["data"]["requested"] == "2099-01-01"
    capability = await conformance.call("tools/call", {"name": "test_missing_capability"}, rid=9)
    assert capability["error"]["code"] == -32021


async def test_a_slow_request_does_not_hold_up_a_fast_one(conformance: Stdio) -> None:
    await conformance.send("tools/call", {"name": "test_tool_with_progress"}, rid="slow")
    await conformance.send("tools/list", rid="fast")
    first = await conformance.recv()
    assert first["id"] == "fast"
    second = await conformance.recv()
    assert second["id"] == "slow"


async def test_cancelled_request_gets_no_response(own_waiting: Stdio) -> None:
    waiting = own_waiting
    await waiting.send("tools/call", {"name": "wait"}, rid="w", progressToken="w")
    started = await waiting.recv()
    assert started["method"] == "notifications/progress"
    await waiting.proc.send(
        {
            "jsonrpc": "2.0",
            "method": "notifications/cancelled",
            "params": {"requestId": "w", "reason": "test"},
        }
    )
    echo = await waiting.call("tools/call", {"name": "echo", "arguments": {"text": "hi"}}, rid=2)
    assert echo["result"]["content"][0]["text"] == "hi"
    # the id is free again once its request is cancelled
    again = await waiting.call("tools/call", {"name": "wait", "arguments": {"seconds": 0}}, rid="w")
    assert again["result"]["content"][0]["text"] == "waited 0"
    await waiting.proc.close_stdin()
    rest = [waiting.check(m) for m in await waiting.proc.rest()]
    assert rest == []
    assert [m.get("id") for m in waiting.proc.received if "method" not in m] == [2, "w"]
    assert "request 'w' cancelled by the client" in waiting.proc.stderr()


async def test_cancelling_an_unknown_request_is_harmless(waiting: Stdio) -> None:
    for rid in ["nope", 12, None, {"x": 1}]:
        await waiting.proc.send(
            {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": rid}}
        )
    echo = await waiting.call("tools/call", {"name": "echo", "arguments": {"text": "still here"}}, rid=1)
    assert echo["result"]["content"][0]["text"] == "still here"


async def test_a_cancel_naming_true_does_not_cancel_request_1(waiting: Stdio) -> None:
    """A requestId of true names no request (an id is a string or an integer), though
    Python holds True == 1: request 1 runs on and is answered."""
    await waiting.send("tools/call", {"name": "wait", "arguments": {"seconds": 0.5}}, rid=1, progressToken=1)
    await waiting.recv()  # its progress: it is running
    await waiting.proc.send(
        {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": True}}
    )
    answered, _ = await waiting.until(1)
    assert answered["result"]["content"][0]["text"] == "waited 0.5"


async def test_an_id_in_flight_cannot_be_reused(waiting: Stdio) -> None:
    await waiting.send("tools/call", {"name": "wait"}, rid=5, progressToken=5)
    await waiting.recv()  # its progress: it is running
    await waiting.proc.send(
        {"jsonrpc": "2.0", "id": 5, "method": "tools/call", "params": {"name": "echo", "_meta": meta()}}
    )
    duplicate = await waiting.recv()
    assert (duplicate["id"], duplicate["error"]["code"]) == (5, -32600)
    await waiting.proc.send(
        {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 5}}
    )


async def test_bad_lines_are_answered_and_the_server_goes_on(conformance: Stdio) -> None:
    proc = conformance.proc
    cases: list[tuple[bytes, int, Any]] = [
        (b"this is not json\n", -32700, None),
        (b'{"jsonrpc": "2.0", "id": 1, \n', -32700, None),
        (b"\xff\xfe\xfd\n", -32700, None),
        (b"[]\n", -32600, None),
        (b'[{"jsonrpc": "2.0", "id": 1, "method": "tools/list"}]\n', -32600, None),
        (b"42\n", -32600, None),
        (b'{"jsonrpc": "1.0", "id": 3, "method": "tools/list"}\n', -32600, 3),
        (b'{"id": "no-version", "method": "tools/list"}\n', -32600, "no-version"),
        (b'{"jsonrpc": "2.0", "id": 4, "method": 5}\n', -32600, 4),
        (b'{"jsonrpc": "2.0", "id": 5, "method": "tools/list", "params": [1]}\n', -32600, 5),
        (b'{"jsonrpc": "2.0", "id": 1.5, "method": "tools/list"}\n', -32600, None),
        (b'{"jsonrpc": "2.0", "id": true, "method": "tools/list"}\n', -32600, None),
        (b'{"jsonrpc": "2.0", "id": null, "method": "tools/list"}\n', -32600, None),
        (b'{"jsonrpc": "2.0", "id": 6}\n', -32600, 6),
        (b"[" * 5000 + b"]" * 5000 + b"\n", -32700, None),
        (b'{"pad": "' + b"x" * (4 * 1024 * 1024) + b'"}\n', -32600, None),  # over the line limit
    ]
    for line, code, rid in cases:
        await proc.send(line)
        answer = await conformance.recv()
        assert answer["error"]["code"] == code, (line[:60], answer)
        assert answer.get("id") == rid, (line[:60], answer)
        if rid is None:
            assert "id" not in answer
    # blank lines, CRLF, a posted response and an unknown notification produce nothing
    await proc.send(b"\n\r\n   \n")
    await proc.send(b'{"jsonrpc": "2.0", "id": 99, "result": {}}\n')
    await proc.send(b'{"jsonrpc": "2.0", "method": "notifications/whatever"}\n')
    message = {"jsonrpc": "2.0", "id": "ok", "method": "tools/list", "params": {"_meta": meta()}}
    conformance.methods["ok"] = "tools/list"
    await proc.send(orjson.dumps(message) + b"\r\n")
    assert "tools" in (await conformance.recv())["result"]


async def test_a_message_split_across_writes_is_read_whole(conformance: Stdio) -> None:
    message = {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {"_meta": meta()}}
    conformance.methods[1] = "tools/list"
    data = orjson.dumps(message) + b"\n"
    for i in range(0, len(data), 7):
        await conformance.proc.send(data[i : i + 7])
    assert "tools" in (await conformance.recv())["result"]


async def test_stdout_is_only_json_rpc_and_logs_go_to_stderr(own_conformance: Stdio) -> None:
    conformance = own_conformance
    await conformance.call("tools/call", {"name": "test_tool_with_logging"}, rid=1)
    await conformance.send(
        "tools/call",
        {"name": "test_tool_with_logging"},
        rid=2,
        **{"io.modelcontextprotocol/logLevel": "debug"},
    )
    response, before = await conformance.until(2)
    assert [n["method"] for n in before] == ["notifications/message"] * 3
    assert response["result"]["content"][0]["text"] == "Logging complete"
    await conformance.proc.close_stdin()
    assert await conformance.proc.rest() == []  # rest() asserts each line is a JSON-RPC object
    stderr = conformance.proc.stderr()
    assert "INFO mcp_elicit.server: requestState is sealed" in stderr  # the start-up log line
    assert "Traceback" not in stderr


async def test_closing_stdin_ends_the_process(own_conformance: Stdio) -> None:
    conformance = own_conformance
    await conformance.call("tools/list", rid=1)
    started = time.monotonic()
    await conformance.proc.close_stdin()
    assert await conformance.proc.rest() == []
    assert await conformance.proc.proc.wait() == 0
    assert time.monotonic() - started < 2.0


async def test_closing_stdin_with_a_request_in_flight_still_exits(own_waiting: Stdio) -> None:
    waiting = own_waiting
    await waiting.send("tools/call", {"name": "wait"}, rid=1, progressToken=1)
    await waiting.recv()
    started = time.monotonic()
    await waiting.proc.close_stdin()
    assert await waiting.proc.rest(within=10) == []  # cancelled after the grace period: no response
    assert await waiting.proc.proc.wait() == 0
    assert time.monotonic() - started < 5.0


async def test_closing_stdin_with_a_task_running_cancels_it_and_exits(own_conformance: Stdio) -> None:
    """The tasks extension over stdio: the call is answered with a task at once, the task
    is polled, and when stdin closes the process exits at once, its running task
    cancelled (no grace period waits for it, nothing is reported pending)."""
    conformance = own_conformance
    tasks = {"extensions": {"io.modelcontextprotocol/tasks": {}}}
    params = {"name": "slow_compute", "arguments": {"seconds": 60, "label": "stdio"}}
    created = await conformance.call("tools/call", params, rid=1, capabilities=tasks)
    assert created["result"]["resultType"] == "task"
    task_id = created["result"]["taskId"]
    polled = await conformance.call("tasks/get", {"taskId": task_id}, rid=2, capabilities=tasks)
    assert polled["result"]["status"] == "working" and polled["result"]["statusMessage"] == "computing stdio"
    started = time.monotonic()
    await conformance.proc.close_stdin()
    assert await conformance.proc.rest() == []
    assert await conformance.proc.proc.wait() == 0
    assert time.monotonic() - started < 3.0
    assert (
        "Task was destroyed" not in conformance.proc.stderr() and "Traceback" not in conformance.proc.stderr()
    )


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


async def test_a_cancelled_request_gets_no_response_even_if_its_tool_returns(own_waiting: Stdio) -> None:
    """A tool that catches the cancellation, reports progress, logs and returns anyway:
    neither its result nor its notifications are sent (the client has given the request
    up, and may be reusing its id)."""
    waiting = own_waiting
    await waiting.send(
        "tools/call",
        {"name": "stubborn"},
        rid="s",
        progressToken="s",
        **{"io.modelcontextprotocol/logLevel": "debug"},
    )
    assert (await waiting.recv())["method"] == "notifications/progress"
    await waiting.proc.send(
        {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": "s"}}
    )
    echo = await waiting.call("tools/call", {"name": "echo", "arguments": {"text": "hi"}}, rid=2)
    assert echo["result"]["content"][0]["text"] == "hi"
    await asyncio.sleep(0.5)  # the tool has returned by now
    await waiting.proc.close_stdin()
    assert [waiting.check(m) for m in await waiting.proc.rest()] == []


async def test_nothing_is_sent_for_a_request_once_it_is_answered(waiting: Stdio) -> None:
    """Work a tool left behind that reports progress or logs after the tool returned: the
    request is over (its progress must stop with it, and the client may reuse its id for
    another request), so none of it reaches stdout."""
    response, before = await waiting.until_with(
        "tools/call",
        {"name": "lingering"},
        rid="l",
        progressToken="l",
        **{"io.modelcontextprotocol/logLevel": "debug"},
    )
    assert response["result"]["content"][0]["text"] == "returned"
    assert [m["method"] for m in before] == ["notifications/progress"]
    await asyncio.sleep(0.5)  # the work left behind has reported by now
    echo = await waiting.call("tools/call", {"name": "echo", "arguments": {"text": "hi"}}, rid="e")
    assert echo["result"]["content"][0]["text"] == "hi"


async def test_an_oversized_request_is_answered_with_its_id(conformance: Stdio) -> None:
    """The id is read from the start of the line, so the client learns at once which of its
    requests was too big (an id after the oversized part cannot be known)."""
    pad = "x" * (4 * 1024 * 1024)
    conformance.methods["big"] = "tools/call"
    params = {"name": "test_simple_text", "arguments": {"pad": pad}, "_meta": meta()}
    await conformance.proc.send({"jsonrpc": "2.0", "id": "big", "method": "tools/call", "params": params})
    answer = await conformance.recv()
    assert (answer["id"], answer["error"]["code"]) == ("big", -32600)
    assert "exceeds the 4194304 byte limit" in answer["error"]["message"]
    await conformance.proc.send({"jsonrpc": "2.0", "method": "tools/call", "params": params, "id": "late"})
    answer = await conformance.recv()
    assert "id" not in answer and answer["error"]["code"] == -32600


@pytest.mark.parametrize("depth", [300, 1000])
async def test_arguments_nested_as_deep_as_json_goes(conformance: Stdio, depth: int) -> None:
    """A request that asks a question binds its requestState to its arguments: arguments
    nested deeper than the encoder follows (orjson 255 levels, the standard library about
    1000) are refused as nested too deeply (-32602), never an internal error; less deep,
    the state is bound as to any other arguments."""
    deep = b"[" * depth + b"]" * depth
    message = orjson.dumps(
        {
            "jsonrpc": "2.0",
            "id": "deep",
            "method": "tools/call",
            "params": {"name": "test_input_required_result_elicitation", "arguments": {}, "_meta": meta()},
        }
    ).replace(b'"arguments":{}', b'"arguments":{"deep":' + deep + b"}")
    conformance.methods["deep"] = "tools/call"
    await conformance.proc.send(message + b"\n")
    answer, _ = await conformance.until("deep")
    if depth < 900:
        assert answer["result"]["resultType"] == "input_required"
    else:
        assert answer["error"]["code"] == -32602, answer
        assert "nested too deeply" in answer["error"]["message"]


_LOGGING_SERVER = '''
import logging

from mcp_elicit import Server

server = Server("logs")
log = logging.getLogger("logs")


@server.tool()
def remember(note: str) -> str:
    """Log the note."""
    log.warning("note: %s", note)
    return "noted"
'''


async def test_what_a_client_sends_reaches_the_servers_log_inert(tmp_path: Path, wire: WireChecker) -> None:
    """`serve` logs what a tool logs, and tools log what clients send: a note holding a
    newline and terminal escapes can neither forge a log line nor act on the operator's
    terminal (the escapes are shown, the newline is not kept)."""
    forged = "2026-01-01 00:00:00,000 ERROR mcp_elicit.server: forged line"
    target = tmp_path / "logging_server.py"
    target.write_text(_LOGGING_SERVER)
    async with stdio_process(target, log_dir=tmp_path) as proc:
        stdio = Stdio(proc, wire)
        note = "hi\x1b]0;owned\x07\x1b[2J\n" + forged + "\r\u2028end"
        reply = await stdio.call("tools/call", {"name": "remember", "arguments": {"note": note}}, rid=1)
        assert reply["result"]["content"][0]["text"] == "noted"
    log = proc.stderr()
    assert "note: hi\\x1b]0;owned\\x07\\x1b[2J " + forged in log
    assert "\x1b" not in log and "\x07" not in log and "\r" not in log and "\u2028" not in log
    assert not any(line.startswith(forged) for line in log.splitlines())


async def test_a_client_that_floods_requests_without_reading_is_held_back(tmp_path: Path) -> None:
    """A client that writes requests and never reads the answers: the server stops reading
    once its stdout is full and as many requests as it takes at once are in flight, instead
    of taking (and holding in memory) every request the client writes. Read at last, every
    request has exactly one answer: its result, or a refusal naming the limit."""
    answers_out, answers_in = os.pipe()  # a plain pipe: nothing reads it until the end
    answers_file = os.fdopen(answers_out, "rb")
    with (tmp_path / "stderr").open("wb") as err:
        proc = await asyncio.create_subprocess_exec(
            *cli(), "serve", str(WAITING_SERVER), stdin=asyncio.subprocess.PIPE, stdout=answers_in, stderr=err
        )
    os.close(answers_in)
    assert proc.stdin is not None
    text = "x" * 2048
    sent, held_back = 0, False
    try:
        while sent < 6000:  # about 13 MB of requests: well beyond what pipes and buffers hold
            params = {"name": "echo", "arguments": {"text": text}, "_meta": meta()}
            request = {"jsonrpc": "2.0", "id": sent, "method": "tools/call", "params": params}
            proc.stdin.write(orjson.dumps(request) + b"\n")
            sent += 1
            try:
                await asyncio.wait_for(proc.stdin.drain(), 10.0)
            except TimeoutError:
                held_back = True
                break
        assert held_back, f"the server took all {sent} requests while its answers went unread"
        with answers_file:
            drained = asyncio.ensure_future(proc.stdin.drain())  # reading lets the server read on
            answers: dict[Any, dict[str, Any]] = {}
            while len(answers) < sent:
                message = orjson.loads(await asyncio.to_thread(answers_file.readline))
                assert message["id"] not in answers
                answers[message["id"]] = message
            await drained
            proc.stdin.close()
            assert await asyncio.wait_for(proc.wait(), 30.0) == 0
            assert answers_file.read() == b""
    finally:
        answers_file.close()
        if proc.returncode is None:
            proc.kill()
            await proc.wait()
    refused = [m for m in answers.values() if "error" in m]
    assert all(m["result"]["content"][0]["text"] == text for m in answers.values() if "result" in m)
    assert refused and all(m["error"]["code"] == -32600 for m in refused)
    assert "1024 requests are in flight" in refused[0]["error"]["message"]
    assert "Traceback" not in (tmp_path / "stderr").read_text()


async def test_what_tool_code_writes_after_stderrs_reader_went_away_fails_nothing(tmp_path: Path) -> None:
    """The log's reader went away while the server runs (``server 2>&1 | head``, a closed
    log viewer): print(), a write to fd 1 and a child process's output now go nowhere, and
    the tool that wrote them still answers, as does every later one."""
    read_end, write_end = os.pipe()
    proc = await asyncio.create_subprocess_exec(
        *cli(),
        "serve",
        str(WAITING_SERVER),
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=write_end,
    )
    os.close(write_end)
    unread = tmp_path / "unread.stderr"  # what it logs is not kept: its reader goes away
    unread.touch()
    server = StdioProcess(proc, unread)
    try:
        params = {"name": "echo", "arguments": {"text": "before"}, "_meta": meta()}
        await server.send({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": params})
        said, _ = await server.until(1)
        assert said["result"]["content"][0]["text"] == "before"
        os.close(read_end)  # the log's reader goes away
        read_end = -1
        for rid in (2, 3):  # the second time too: the first one's trouble is not left behind
            params = {"name": "chatter", "arguments": {"text": "noise " * 2000}, "_meta": meta()}
            await server.send({"jsonrpc": "2.0", "id": rid, "method": "tools/call", "params": params})
            said, _ = await server.until(rid)
            assert "isError" not in said["result"], said
            assert said["result"]["content"][0]["text"] == "noise " * 2000
        await server.close_stdin()
        assert await server.rest() == []
        assert await asyncio.wait_for(proc.wait(), 10) == 0
    finally:
        if read_end >= 0:
            os.close(read_end)
        await server.stop()
