"""stdio (2026-07-28) with a real ``mcp-elicit serve`` subprocess on asyncio pipes. Every line
the server writes must be one JSON-RPC message, and each is checked against the official
schema (responses by the method of their request)."""

from __future__ import annotations

import re
from typing import Any

import orjson
import pytest

from support.http import meta
from support.stdio_transport import Stdio

pytestmark = pytest.mark.anyio


@pytest.fixture(scope="module")
def anyio_backend() -> str:
    """Module-wide, so that one server process can serve several tests."""
    return "asyncio"


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


@pytest.mark.parametrize(
    "bad",
    [{"progressToken": 1.5}, {"io.modelcontextprotocol/logLevel": "loud"}],
    ids=["progressToken", "logLevel"],
)
async def test_an_unsupported_version_is_told_before_what_its_meta_holds(
    conformance: Stdio, bad: dict[str, Any]
) -> None:
    """A version the server does not speak is -32022 whatever else ``_meta`` holds: what a
    progressToken or a logLevel may be is that version's to say, and the client needs the
    supported versions to retry. (It was -32602 about the optional field, over stdio where
    no version header stands in.) A 2025-11-25 request without a session is told so."""
    versions = {"2099-01-01": -32022, "2025-11-25": -32600}
    for rid, (version, code) in enumerate(versions.items(), start=20):
        params = {"_meta": {**meta(), "io.modelcontextprotocol/protocolVersion": version, **bad}}
        await conformance.proc.send({"jsonrpc": "2.0", "id": rid, "method": "tools/list", "params": params})
        conformance.methods[rid] = "tools/list"
        reply, _ = await conformance.until(rid)
        assert reply["error"]["code"] == code, reply


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
    # the start-up log line: a per-process key, or the default key file when an earlier
    # server of this test session (sharing its data directory) made one
    assert re.search(r"INFO mcp_elicit\.server: requestState (is|and URL-mode secrets are) sealed", stderr), (
        stderr
    )
    assert "Traceback" not in stderr


@pytest.mark.parametrize(
    ("written", "echoed"),
    [
        (str(2**70), None),
        ("-9223372036854775809", None),
        ("1e300", None),
        (str(2**64 - 1), 2**64 - 1),
        ("-9223372036854775808", -(2**63)),
        ("-1", -1),
        ("1e18", None),
    ],
    ids=["2**70", "below int64", "1e300", "2**64-1", "int64 min", "-1", "1e18"],
)
async def test_an_integer_token_past_64_bits_is_invalid_params(
    conformance: Stdio, written: str, echoed: int | None
) -> None:
    """A progressToken is echoed in every notifications/progress, and this server writes
    integers of at most 64 bits (as it reads request ids): a larger one was taken, and the
    tool failed at its first progress report (the encoder refused the token) with a result
    that said nothing of why. It is -32602 naming the key, as a request id that large is
    -32600; one within 64 bits is echoed as sent."""
    meta_json = orjson.dumps(meta()).decode()[:-1] + f',"progressToken":{written}}}'
    line = (
        '{"jsonrpc":"2.0","id":"big","method":"tools/call","params":'
        f'{{"name":"test_tool_with_progress","_meta":{meta_json}}}}}\n'
    )
    conformance.methods["big"] = "tools/call"
    await conformance.proc.send(line.encode())
    reply, before = await conformance.until("big")
    if echoed is None:
        assert reply["error"]["code"] == -32602, reply
        assert "progressToken" in reply["error"]["message"]
        assert "64 bits" in reply["error"]["message"]
        said = reply["error"]["message"]
        if written == "1e18":  # within 64 bits: refused as a float past 2**53, not exact
            assert "fraction or an exponent" in said and "2**53" in said, reply
        else:  # said as the integer it is (how many bits), not as the float it was read as
            assert re.search(r"not an integer outside -2\*\*63\.\.2\*\*64-1 \(\d+ bits\)", said), reply
            assert "e+" not in said, reply
        assert before == []
        return
    assert "result" in reply and not reply["result"].get("isError"), reply
    assert [m["params"]["progressToken"] for m in before] == [echoed] * len(before) != []
