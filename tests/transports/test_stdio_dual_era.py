"""One stdio process, both eras: a dual-era client's ``server/discover`` probe gets a
DiscoverResult (so it stays modern); a 2025-11-25 client's ``initialize`` opens the
process's session, and its questions arrive as requests on stdout, answered on stdin.
Every message is checked against the schema of its revision."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import orjson
import pytest

from support.procs import StdioProcess, stdio_process
from support.stdio_transport import WAITING_SERVER as WAITING
from support.wire import WireChecker

pytestmark = pytest.mark.anyio
DEMO = Path(__file__).resolve().parents[2] / "examples" / "demo_server.py"
META = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {},
}


def initialize(capabilities: dict[str, Any]) -> dict[str, Any]:
    """A 2025-11-25 client's initialize request (id 1)."""
    return {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-11-25",
            "capabilities": capabilities,
            "clientInfo": {"name": "legacy", "version": "1"},
        },
    }


async def test_discover_probe_answers_modern(tmp_path: Path, wire: WireChecker) -> None:
    async with stdio_process(DEMO, log_dir=tmp_path) as server:
        probe = {"jsonrpc": "2.0", "id": 1, "method": "server/discover", "params": {"_meta": META}}
        wire.request(probe)
        await server.send(probe)
        reply, _ = await server.until(1)
        wire.response("server/discover", reply)
        assert reply["result"]["supportedVersions"][:2] == ["2026-07-28", "2025-11-25"]


async def test_a_legacy_client_elicits_over_stdio(tmp_path: Path, wire_2025: WireChecker) -> None:
    async with stdio_process(DEMO, log_dir=tmp_path) as server:
        init = initialize({"elicitation": {}})
        wire_2025.request(init)
        await server.send(init)
        reply, _ = await server.until(1)
        wire_2025.response("initialize", reply)
        assert reply["result"]["protocolVersion"] == "2025-11-25"
        await server.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        call = {
            "jsonrpc": "2.0",
            "id": 2,
            "method": "tools/call",
            "params": {"name": "book_table", "arguments": {"restaurant": "noma"}},
        }
        wire_2025.request(call)
        await server.send(call)
        for answer in ({"party_size": 3, "date": "2099-05-01", "seating": "bar"}, {"confirm": True}):
            question = await server.recv()
            wire_2025.request(question)
            assert question["method"] == "elicitation/create"
            response = {
                "jsonrpc": "2.0",
                "id": question["id"],
                "result": {"action": "accept", "content": answer},
            }
            wire_2025.response("elicitation/create", response)
            await server.send(response)
        final, _ = await server.until(2)
        wire_2025.response("tools/call", final)
        assert final["result"]["content"][0]["text"].startswith(
            "Booked #1: Noma, Copenhagen, 3 people on 2099-05-01, bar"
        )
        modern = {"jsonrpc": "2.0", "id": 3, "method": "tools/list", "params": {"_meta": META}}
        await server.send(modern)
        listed, _ = await server.until(3)
        assert listed["result"]["resultType"] == "complete", "modern requests still work beside the session"


PUSHING = Path(__file__).with_name("pushing_server.py")


async def test_a_sessions_own_messages_reach_stdout(tmp_path: Path, wire_2025: WireChecker) -> None:
    """notifications/elicitation/complete and notifications/resources/updated are not tied
    to a request: over stdio they are written as soon as they are queued."""
    async with stdio_process(PUSHING, log_dir=tmp_path) as server:
        init = initialize({"elicitation": {"url": {}}})
        await server.send(init)
        reply, _ = await server.until(1)
        assert reply["result"]["capabilities"]["resources"]["subscribe"] is True
        await server.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        messages = [
            {"jsonrpc": "2.0", "id": 2, "method": "resources/subscribe", "params": {"uri": "test://watched"}},
            {"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": "touch"}},
        ]
        for message in messages:
            wire_2025.request(message)
            await server.send(message)
        await server.until(2)
        told, before = await server.until(3)
        updated = [m for m in before if m.get("method") == "notifications/resources/updated"]
        if not updated:  # written after the tool's result, as it was queued
            updated = [await server.recv()]
        wire_2025.notification(updated[0])
        assert updated[0]["params"] == {"uri": "test://watched"}
        assert told["result"]["content"][0]["text"] == "told 1 session(s)"

        call = {"jsonrpc": "2.0", "id": 4, "method": "tools/call", "params": {"name": "sign_in"}}
        await server.send(call)
        question = await server.recv()
        wire_2025.request(question)
        assert question["params"]["elicitationId"] == "step-1"
        complete = await server.recv()  # before the client has answered at all
        wire_2025.notification(complete)
        assert complete == {
            "jsonrpc": "2.0",
            "method": "notifications/elicitation/complete",
            "params": {"elicitationId": "step-1"},
        }
        await server.send({"jsonrpc": "2.0", "id": question["id"], "result": {"action": "accept"}})
        final, _ = await server.until(4)
        assert final["result"]["content"][0]["text"] == "sign-in: accept"


async def _booking_question(server: StdioProcess) -> dict[str, Any]:
    """Open a 2025-11-25 session that takes forms, call the demo's book_table (id 2): its
    first question."""
    await server.send(initialize({"elicitation": {}}))
    await server.until(1)
    await server.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
    call = {
        "jsonrpc": "2.0",
        "id": 2,
        "method": "tools/call",
        "params": {"name": "book_table", "arguments": {"restaurant": "noma"}},
    }
    await server.send(call)
    question = await server.recv()
    assert question["method"] == "elicitation/create"
    return question


async def test_a_clients_refusal_reaches_the_log_inert(tmp_path: Path) -> None:
    """A 2025-11-25 client answers the server's question with an error whose message holds
    a newline and terminal escapes: the server's log quotes it, so it can neither forge a
    log line nor act on the terminal that shows the log, and cuts a long one short."""
    forged = "2026-01-01 00:00:00,000 ERROR mcp_elicit.server: forged line"
    message = "no\x1b]0;owned\x07\x1b[2J\n" + forged + "\r" + "x" * 100_000
    async with stdio_process(DEMO, log_dir=tmp_path) as server:
        question = await _booking_question(server)
        await server.send({"jsonrpc": "2.0", "id": question["id"], "error": {"code": -1, "message": message}})
        final, _ = await server.until(2)
        assert "result" in final, final  # a refused question is a cancel: the tool answers
    log = server.stderr()
    assert "the client refused elicitation/create" in log
    assert "\x1b" not in log and "\x07" not in log and "\r" not in log
    assert not any(line.startswith(forged) for line in log.splitlines())
    assert "x" * 1000 not in log


@pytest.mark.parametrize(
    "broken",
    [
        {"error": {"code": "x", "message": "no"}},
        {"error": 5},
        {"result": 5},
    ],
)
async def test_an_answer_that_does_not_decode_gives_the_question_up(
    tmp_path: Path, broken: dict[str, Any]
) -> None:
    """A 2025-11-25 client answers the server's question with a response that is not
    JSON-RPC: the question is given up as refused (a form reads as cancel), at once, as
    over HTTP, rather than left waiting for the ask timeout (ten minutes); the refusal
    names no id, since it answers no request of the client's (the id is the server's)."""
    async with stdio_process(DEMO, log_dir=tmp_path) as server:
        question = await _booking_question(server)
        await server.send({"jsonrpc": "2.0", "id": question["id"], **broken})
        final, before = await server.until(2)
        assert final["result"]["content"][0]["text"].startswith("Booking not finished"), final
        assert [m["error"]["code"] for m in before] == [-32600]
        assert "id" not in before[0], before


async def test_an_answer_too_long_to_read_gives_the_question_up(tmp_path: Path) -> None:
    """A 2025-11-25 client answers the server's question with a line over the size limit
    (a person pasted 5 MB into the form): the line is dropped unread, and the question is
    given up as refused at once (the form reads as cancel), not left waiting for the ask
    timeout; the -32600 saying so names no id, since the id is the server's own and no
    request of the client's has it."""
    async with stdio_process(DEMO, log_dir=tmp_path) as server:
        question = await _booking_question(server)
        content = {"guests": 2, "date": "2026-12-31", "notes": "x" * (5 * 1024 * 1024)}
        answer = {"jsonrpc": "2.0", "id": question["id"], "result": {"action": "accept", "content": content}}
        await server.send(answer)
        final, before = await server.until(2)
        assert final["result"]["content"][0]["text"].startswith("Booking not finished"), final
        assert [m["error"]["code"] for m in before] == [-32600], before
        assert "id" not in before[0], before
        assert "exceeds the" in before[0]["error"]["message"]


async def test_subscribing_to_a_uri_nothing_serves_is_not_found(
    tmp_path: Path, wire_2025: WireChecker
) -> None:
    """resources/subscribe answers a URI no resource or template serves as resources/read
    does (-32002 with data.uri on 2025-11-25), rather than holding a subscription that can
    never be told anything; unsubscribing from it is harmless."""
    async with stdio_process(PUSHING, log_dir=tmp_path) as server:
        await server.send(initialize({}))
        await server.until(1)
        await server.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        for rid, method in ((2, "resources/subscribe"), (3, "resources/unsubscribe")):
            message = {"jsonrpc": "2.0", "id": rid, "method": method, "params": {"uri": "test://typo"}}
            wire_2025.request(message)
            await server.send(message)
        refused, _ = await server.until(2)
        wire_2025.response("resources/subscribe", refused)
        assert refused["error"]["code"] == -32002
        assert refused["error"]["data"] == {"uri": "test://typo"}
        assert "test://typo" in refused["error"]["message"]
        unsubscribed, _ = await server.until(3)
        assert unsubscribed["result"] == {}


async def test_a_ping_before_initialize_is_answered(tmp_path: Path, wire_2025: WireChecker) -> None:
    """2025-11-25 lets a client ping before initialize; 2026-07-28 has no ping, so a ping
    without ``_meta`` is a handshake-era one, answered with an empty result."""
    async with stdio_process(DEMO, log_dir=tmp_path) as server:
        ping = {"jsonrpc": "2.0", "id": 7, "method": "ping"}
        wire_2025.request(ping)
        await server.send(ping)
        reply, _ = await server.until(7)
        wire_2025.response("ping", reply)
        assert reply["result"] == {}
        await server.send(initialize({}))
        opened, _ = await server.until(1)
        assert opened["result"]["protocolVersion"] == "2025-11-25"


async def test_a_sessions_cancelled_request_keeps_its_id_while_its_handler_goes_on(tmp_path: Path) -> None:
    """In a 2025-11-25 session (which never reuses an id) a request the client cancelled
    keeps its id while its handler goes on (it caught the cancellation): the next request
    under it is refused (-32600), then answered once the handler has ended; nothing of the
    cancelled one (its late progress, its result) is sent."""
    told = tmp_path / "told"
    async with stdio_process(WAITING, log_dir=tmp_path) as server:
        await server.send(initialize({}))
        await server.until(1)
        await server.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        params = {"name": "stubborn_until", "arguments": {"path": str(told)}, "_meta": {"progressToken": 5}}
        await server.send({"jsonrpc": "2.0", "id": 5, "method": "tools/call", "params": params})
        assert (await server.recv())["params"]["message"] == "started"
        cancel = {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 5}}
        echo = {
            "jsonrpc": "2.0",
            "id": 5,
            "method": "tools/call",
            "params": {"name": "echo", "arguments": {"text": "hi"}},
        }
        await server.send(orjson.dumps(cancel) + b"\n" + orjson.dumps(echo) + b"\n")
        refused, before = await server.until(5)
        assert before == [] and refused["error"]["code"] == -32600, refused
        assert refused["error"]["message"] == "Invalid request: id 5 is already in use by a request in flight"
        told.touch()
        for _ in range(200):  # until the cancelled handler has ended (10 s)
            await server.send(echo)
            answer, before = await server.until(5)
            assert before == [], before
            if "result" in answer:
                break
            await asyncio.sleep(0.05)
        assert answer["result"]["content"][0]["text"] == "hi", answer
        await server.close_stdin()
        assert await server.rest() == []


async def test_a_sessions_progress_token_is_read_as_at_2026_07_28(tmp_path: Path) -> None:
    """2025-11-25 says as 2026-07-28 does that progress tokens MUST be a string or an
    integer: one of another type (or an integer past 64 bits, which the server could not
    echo) is -32602 naming the key, as at 2026-07-28, and 2.0 is the integer 2. The session
    ignored a wrong one in silence (no progress, nothing said why), and its tool failed at
    its first progress report with an integer past 64 bits."""
    async with stdio_process(log_dir=tmp_path) as server:
        await server.send(initialize({}))
        await server.until(1)
        await server.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        for rid, written in enumerate(["1.5", "true", '["p"]', str(2**70)], start=2):
            params = f'{{"name":"test_tool_with_progress","_meta":{{"progressToken":{written}}}}}'
            await server.send(
                f'{{"jsonrpc":"2.0","id":{rid},"method":"tools/call","params":{params}}}\n'.encode()
            )
            reply, before = await server.until(rid)
            assert reply["error"]["code"] == -32602, (written, reply)
            assert "progressToken" in reply["error"]["message"]
            assert before == []
        call = {"name": "test_tool_with_progress", "_meta": {"progressToken": 2.0}}
        await server.send({"jsonrpc": "2.0", "id": 9, "method": "tools/call", "params": call})
        reply, before = await server.until(9)
        assert "result" in reply and not reply["result"].get("isError"), reply
        tokens = [m["params"]["progressToken"] for m in before if m["method"] == "notifications/progress"]
        assert tokens != [] and all(t == 2 and isinstance(t, int) for t in tokens)
