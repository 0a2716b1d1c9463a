"""stdio (2026-07-28) with a real ``mcp-elicit serve`` subprocess: requests past the ordinary.
Nothing is sent for a request once it is cancelled or answered, oversized and deeply nested
requests are answered, the server's log keeps a client's text inert, and a client that
floods requests without reading is held back."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path
from typing import Any

import orjson
import pytest

from support.http import meta
from support.procs import StdioProcess, cli, stdio_process
from support.stdio_transport import WAITING_SERVER, Stdio
from support.wire import WireChecker

pytestmark = pytest.mark.anyio


@pytest.fixture(scope="module")
def anyio_backend() -> str:
    """Module-wide, so that one server process can serve several tests."""
    return "asyncio"


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


def _cancel_and_reuse(rid: str) -> bytes:
    """A client's cancel of ``rid`` and its next request under the same id, in one write:
    the server reads both in one chunk, before the cancelled handler has run again."""
    cancel = {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": rid}}
    params = {"name": "echo", "arguments": {"text": "the next one"}, "_meta": meta()}
    again = {"jsonrpc": "2.0", "id": rid, "method": "tools/call", "params": params}
    return orjson.dumps(cancel) + b"\n" + orjson.dumps(again) + b"\n"


@pytest.mark.parametrize("tool", ["wait", "stubborn"])
async def test_a_cancelled_requests_id_is_free_at_once(own_waiting: Stdio, tool: str) -> None:
    """Once the client cancelled a request, it has given it up and may send the next one
    under its id straight away: that one is answered, whether the cancelled handler ends
    at once (wait) or catches its cancellation and returns later (stubborn), and nothing
    of the cancelled one (its result, its late progress) is sent under the id."""
    waiting = own_waiting
    await waiting.send("tools/call", {"name": tool}, rid="r", progressToken="r")
    assert (await waiting.recv())["method"] == "notifications/progress"
    waiting.methods["r"] = "tools/call"
    await waiting.proc.send(_cancel_and_reuse("r"))
    again, before = await waiting.until("r")
    assert "result" in again, again
    assert again["result"]["content"][0]["text"] == "the next one"
    assert before == []
    await asyncio.sleep(0.5)  # the stubborn tool has returned by now
    echo = await waiting.call("tools/call", {"name": "echo", "arguments": {"text": "hi"}}, rid=2)
    assert echo["result"]["content"][0]["text"] == "hi"
    await waiting.proc.close_stdin()
    assert [waiting.check(m) for m in await waiting.proc.rest()] == []
    assert "Traceback" not in waiting.proc.stderr()


async def test_a_cancelled_handler_that_goes_on_sends_nothing_under_its_reused_id(
    own_waiting: Stdio, tmp_path: Path
) -> None:
    """The client cancels a request and sends the next one under its id, which is still
    running when the cancelled handler (it catches its cancellation) reports progress and
    returns: neither reaches the client, whose request under that id owns it now."""
    waiting, told = own_waiting, tmp_path / "told"
    await waiting.send(
        "tools/call", {"name": "stubborn_until", "arguments": {"path": str(told)}}, rid="r", progressToken="r"
    )
    assert (await waiting.recv())["params"]["message"] == "started"
    cancel = {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": "r"}}
    again = {
        "jsonrpc": "2.0",
        "id": "r",
        "method": "tools/call",
        "params": {"name": "wait", "_meta": meta(progressToken="r")},
    }
    await waiting.proc.send(orjson.dumps(cancel) + b"\n" + orjson.dumps(again) + b"\n")
    started = await waiting.recv()
    assert started["params"] == {"progressToken": "r", "progress": 0, "total": 1, "message": "started"}
    told.touch()  # the cancelled handler reports and returns now, the next "r" still waiting
    echo = await waiting.call("tools/call", {"name": "echo", "arguments": {"text": "hi"}}, rid=2)
    assert echo["result"]["content"][0]["text"] == "hi"
    await waiting.proc.send(cancel)  # the next "r" too
    await waiting.proc.close_stdin()
    assert [waiting.check(m) for m in await waiting.proc.rest()] == []
    assert "Traceback" not in waiting.proc.stderr()


async def test_a_request_refused_for_cancelled_ones_still_ending_says_so(
    own_waiting: Stdio, tmp_path: Path
) -> None:
    """A cancelled request still counts against the limit of requests in flight while its
    handler goes on (it caught the cancellation): one more request is refused, saying that
    some of those in flight were cancelled and are still ending, not only to read answers
    (there are none to read for those). Once they have ended, it is taken."""
    waiting, told = own_waiting, tmp_path / "told"
    await waiting.send(
        "tools/call", {"name": "stubborn_until", "arguments": {"path": str(told)}}, rid="s", progressToken="s"
    )
    assert (await waiting.recv())["params"]["message"] == "started"
    filler = b"".join(
        orjson.dumps(
            {"jsonrpc": "2.0", "id": i, "method": "tools/call", "params": {"name": "wait", "_meta": meta()}}
        )
        + b"\n"
        for i in range(1023)
    )
    cancel = {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": "s"}}
    one_more = {
        "jsonrpc": "2.0",
        "id": "m",
        "method": "tools/call",
        "params": {"name": "echo", "arguments": {"text": "hi"}, "_meta": meta()},
    }
    waiting.methods["m"] = "tools/call"
    await waiting.proc.send(filler + orjson.dumps(cancel) + b"\n" + orjson.dumps(one_more) + b"\n")
    refused, before = await waiting.until("m")
    assert before == []
    assert refused["error"]["code"] == -32600, refused
    message = refused["error"]["message"]
    assert message.startswith(
        "Invalid request: 1024 requests are in flight, the most this server takes at once"
    ), message
    assert "1 of them cancelled and still ending" in message, message
    told.touch()
    for _ in range(200):  # until the cancelled handler has ended, freeing its place (10 s)
        taken = await waiting.call("tools/call", one_more["params"], rid="m")
        if "result" in taken:
            break
        await asyncio.sleep(0.05)
    assert taken["result"]["content"][0]["text"] == "hi"
