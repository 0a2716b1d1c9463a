"""What ``mcp-elicit serve --log-level debug`` writes on stderr when elicitation goes
wrong, read as an operator reads it: each failure is one line naming the request (method,
tool, request id, and the session at 2025-11-25) and why, a traceback only for a
handler's bug; and nothing a person typed, no ``requestState``, at any level. A real
server over stdio, in a subprocess."""

from __future__ import annotations

import re
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from support.procs import StdioProcess, http_process, stdio_process
from support.sessions import initialize_body
from support.wire import WireChecker

pytestmark = pytest.mark.anyio

SERVER = """
from dataclasses import dataclass
from typing import Literal

from mcp_elicit import Context, Server

app = Server("signups")


@dataclass
class Person:
    name: str
    lists: list[Literal["news", "offers"]]


@app.tool()
async def signup(ctx: Context, plan: str) -> str:
    '''Asks who signs up.'''
    answer = await ctx.elicit("Who are you?", Person)
    return f"signed up ({answer.action})"


@app.tool()
async def buggy(ctx: Context, plan: str) -> str:
    '''Fails once answered: a bug of its own.'''
    await ctx.elicit("Who are you?", Person)
    raise RuntimeError("the signup database is down")


@app.prompt()
async def welcome(plan: str) -> str:
    '''Fails: a bug of its own.'''
    raise LookupError(f"no welcome text for {plan}")
"""

TYPED = "Ada-Lovelace-typed-this"  # what a person typed
META = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {"elicitation": {"form": {}}},
    "io.modelcontextprotocol/clientInfo": {"name": "t", "version": "1"},
}
GOOD = {"action": "accept", "content": {"name": TYPED, "lists": ["news"]}}
UNFIT = {"action": "accept", "content": {"name": TYPED, "lists": [TYPED]}}  # not one of the options


@pytest.fixture
async def served(tmp_path: Path) -> AsyncIterator[StdioProcess]:
    path = tmp_path / "signups.py"
    path.write_text(SERVER, encoding="utf-8")
    args = ("--log-level", "debug", "--store", "memory://")
    async with stdio_process(path, log_dir=tmp_path, args=args) as proc:
        yield proc


async def _open_2025(served: StdioProcess) -> None:
    """A 2025-11-25 session on ``served``: initialize, answered, then initialized."""
    await served.send(initialize_body())
    await served.until(0)
    await served.send({"jsonrpc": "2.0", "method": "notifications/initialized"})


def _lines(log: str, text: str) -> list[str]:
    return [line for line in log.splitlines() if text in line]


async def test_a_2026_requests_failures_are_named_and_quote_nothing(
    served: StdioProcess, wire: WireChecker
) -> None:
    states: list[str] = []

    async def call(rid: int, name: str, **extra: Any) -> dict[str, Any]:
        params = {"name": name, "arguments": {"plan": "gold"}, "_meta": META, **extra}
        message = {"jsonrpc": "2.0", "id": rid, "method": "tools/call", "params": params}
        wire.request(message)
        await served.send(message)
        response, _ = await served.until(rid)
        wire.response("tools/call", response)
        if "requestState" in response.get("result", {}):
            states.append(response["result"]["requestState"])
        return response

    first = (await call(1, "signup"))["result"]
    forged = first["requestState"][:-8] + "AAAAAAA="
    refused = await call(2, "signup", requestState=forged, inputResponses={"elicit-1": GOOD})
    assert refused["error"]["message"] == "Invalid or expired requestState"
    again = await call(3, "signup", requestState=first["requestState"], inputResponses={"elicit-1": UNFIT})
    done = await call(
        4, "signup", requestState=again["result"]["requestState"], inputResponses={"elicit-1": UNFIT}
    )
    assert done["result"]["content"][0]["text"] == "signed up (cancel)"
    asked = (await call(5, "buggy"))["result"]
    failed = await call(6, "buggy", requestState=asked["requestState"], inputResponses={"elicit-1": GOOD})
    assert failed["result"]["isError"] is True
    unknown = await call(7, "sign-up")
    assert unknown["error"]["code"] == -32602
    prompt = {"name": "welcome", "arguments": {"plan": "gold"}, "_meta": META}
    message = {"jsonrpc": "2.0", "id": 8, "method": "prompts/get", "params": prompt}
    wire.request(message)
    await served.send(message)
    response, _ = await served.until(8)
    wire.response("prompts/get", response)
    assert response["error"] == {"code": -32603, "message": "Internal error"}
    await served.stop()
    log = served.stderr()

    (line,) = _lines(log, "requestState refused")
    assert " WARNING " in line and "tools/call 'signup' (request 2): requestState refused (" in line, line
    assert "(authentication failed: forged or altered, or sealed for another" in line, line
    (line,) = _lines(log, "treating it as cancel")
    assert " INFO " in line, line
    assert "tools/call 'signup' (request 4): the client's answer to elicitation/create did not fit" in line
    (line,) = _lines(log, "tool buggy failed")
    assert " ERROR " in line and line.endswith("tool buggy failed (request 6)"), line
    (line,) = _lines(log, "answered with error")  # a client's mistake: told to it, at debug here
    assert " DEBUG " in line, line
    assert "tools/call 'sign-up' (request 7): answered with error -32602: Unknown tool: sign-up" in line
    (line,) = _lines(log, "prompts/get")
    assert " ERROR " in line and line.endswith("prompts/get 'welcome' (request 8) failed"), line
    assert log.count("Traceback") == 2, log  # the bugs', alone
    assert "the signup database is down" in log and "no welcome text for gold" in log
    assert TYPED not in log  # not at debug either
    assert not [state for state in [*states, forged] if state in log]


async def test_a_2025_sessions_failures_name_the_session(
    served: StdioProcess, wire_2025: WireChecker
) -> None:
    await _open_2025(served)
    unknown = {"jsonrpc": "2.0", "id": 3, "method": "prompts/get", "params": {"name": "goodbye"}}
    await served.send(unknown)
    assert (await served.until(3))[0]["error"]["code"] == -32602
    for rid, name in ((1, "signup"), (2, "buggy")):
        call = {
            "jsonrpc": "2.0",
            "id": rid,
            "method": "tools/call",
            "params": {"name": name, "arguments": {"plan": "x"}},
        }
        wire_2025.request(call)
        await served.send(call)
        while True:
            message = await served.recv()
            if message.get("method") == "elicitation/create":  # answered twice with what does not fit
                await served.send({"jsonrpc": "2.0", "id": message["id"], "result": UNFIT})
            elif message.get("id") == rid:
                wire_2025.response("tools/call", message)
                break
    await served.stop()
    log = served.stderr()

    said = _lines(log, "treating it as cancel")
    assert len(said) == 2, log
    for line, rid, name in zip(said, (1, 2), ("signup", "buggy"), strict=True):
        found = re.search(
            rf"tools/call '{name}' \(request {rid}, session (\S{{8}})\): the client's answer", line
        )
        assert found is not None and " INFO " in line, line
    (line,) = _lines(log, "tool buggy failed")
    assert re.search(r" ERROR .*tool buggy failed \(request 2, session \S{8}\)$", line), line
    (line,) = _lines(log, "answered with error")
    assert re.search(
        r" DEBUG .*prompts/get 'goodbye' \(request 3, session \S{8}\): answered with error -32602", line
    )
    assert log.count("Traceback") == 1
    assert TYPED not in log


STEP_SERVER = """
from mcp_elicit import Context, Server

app = Server("payments", ask_timeout=0.5, flow_wait=0.1)


@app.tool()
async def pay(ctx: Context) -> str:
    '''A page of its own, completed by a webhook that never comes.'''
    answer = await ctx.require_url("Pay here", "https://pay.example/checkout?token=ONE-TIME-7", elicitation_id="pay-7")
    return f"paid ({answer.action})"
"""


async def test_a_url_step_never_done_is_named_and_its_link_kept_out(
    tmp_path: Path, wire: WireChecker
) -> None:
    path = tmp_path / "payments.py"
    path.write_text(STEP_SERVER, encoding="utf-8")
    args = ("--log-level", "debug", "--store", "memory://")
    async with stdio_process(path, log_dir=tmp_path, args=args) as served:
        caps = {"elicitation": {"form": {}, "url": {}}}
        meta = {**META, "io.modelcontextprotocol/clientCapabilities": caps}
        params: dict[str, Any] = {"name": "pay", "arguments": {}, "_meta": meta}
        for rid in range(1, 200):  # each round waits for the page at most flow_wait, then the next
            message = {"jsonrpc": "2.0", "id": rid, "method": "tools/call", "params": params}
            wire.request(message)
            await served.send(message)
            response, _ = await served.until(rid)
            wire.response("tools/call", response)
            result = response["result"]
            if result["resultType"] == "complete":
                break
            answers = {key: {"action": "accept"} for key in result.get("inputRequests", {})}
            params = {**params, "requestState": result["requestState"], "inputResponses": answers}
        assert result["content"][0]["text"] == "paid (cancel)", result
        last = rid
    log = served.stderr()
    (line,) = _lines(log, "was not done within")
    assert " INFO " in line, line
    assert f"tools/call 'pay' (request {last}): the page of URL step 'pay-7' was not done" in line, line
    assert "ONE-TIME-7" not in log and "Traceback" not in log


async def test_what_a_client_sends_stays_one_short_line(served: StdioProcess, wire_2025: WireChecker) -> None:
    """A method that forges a line, and a 20,000-character request id cancelled by the
    client: each is said in one line of bounded length, the session named as its spans
    name it (the start of a digest), whatever the client put there."""
    await _open_2025(served)
    forged = "made/up\r\n2026-01-01 00:00:00 ERROR mcp_elicit.server forged\x1b[2K\u202e\x00"
    await served.send({"jsonrpc": "2.0", "id": 1, "method": forged})
    assert (await served.until(1))[0]["error"]["code"] == -32601
    long_id = "r" * 20_000
    call = {
        "jsonrpc": "2.0",
        "id": long_id,
        "method": "tools/call",
        "params": {"name": "signup", "arguments": {"plan": "x"}},
    }
    wire_2025.request(call)
    await served.send(call)
    while (await served.recv()).get("method") != "elicitation/create":
        pass
    cancel = {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": long_id}}
    await served.send(cancel)
    await served.send({"jsonrpc": "2.0", "id": 2, "method": "ping"})
    await served.until(2)
    await served.stop()
    log = served.stderr()

    assert not [line for line in log.splitlines() if "forged" in line and "made/up" not in line], log
    (line,) = _lines(log, "Method not found")
    assert re.search(r" DEBUG .*\(request 1, session [0-9a-f]{8}\): answered with error -32601", line), line
    assert "made/up\\r\\n2026-01-01" in line and "\\x1b[2K\\u202e\\x00" in line, line
    said = _lines(log, "request 'rrrr")
    assert said and all(len(line) < 1_000 for line in said), [len(line) for line in said]
    assert re.search(r"cancelled by the client|ended with its session", said[-1]), said
    assert max(len(line) for line in log.splitlines()) < 2_000


async def test_an_unreadable_message_and_a_stray_response_are_each_a_debug_line(
    served: StdioProcess, wire_2025: WireChecker
) -> None:
    """A line that is not JSON (-32700), one that is JSON but no message (-32600), and a
    response to no question of the server's (dropped, unanswered): an operator reading the
    debug log sees each, named by the transport and session, never what the client sent."""
    not_json = b'{"jsonrpc": "2.0", "id": 1, "method": "ping", "token": "SECRET-1'
    await served.send(not_json + b"\n")
    assert (await served.recv())["error"]["code"] == -32700
    stray = {"jsonrpc": "2.0", "id": "no-such-question", "result": {"token": "SECRET-2"}}
    await served.send(stray)  # outside a session (2026-07-28): no question is ever waiting
    await _open_2025(served)
    await served.send(b'["SECRET-3"]\n')
    assert (await served.recv())["error"]["code"] == -32600
    await served.send({"jsonrpc": "2.0", "id": 7, "error": {"code": -1, "message": "SECRET-4"}})
    await served.send({"jsonrpc": "2.0", "id": 2, "method": "ping"})
    await served.until(2)
    await served.stop()
    log = served.stderr()

    assert "SECRET" not in log
    unread = _lines(log, "the server cannot read")
    assert len(unread) == 2, log
    assert re.search(
        rf" DEBUG .*stdio: a message of {len(not_json)} bytes the server cannot read; answered with error -32700$",
        unread[0],
    )
    assert re.search(
        r" DEBUG .*stdio, session [0-9a-f]{8}: a message of 12 bytes the server cannot read; "
        r"answered with error -32600$",
        unread[1],
    )
    strays = _lines(log, "which no question of the server's waits for")
    assert len(strays) == 2, log
    assert re.search(r" DEBUG .*stdio: a response to request 'no-such-question', which", strays[0])
    assert re.search(r" DEBUG .*stdio, session [0-9a-f]{8}: an error response to request 7, which", strays[1])


async def test_an_oversized_line_is_a_debug_line_of_its_size_and_the_limit(served: StdioProcess) -> None:
    """A line past the server's limit (4 MiB) is answered -32600 and not read: the debug
    log says so in one short line, its size and the limit, never what it held."""
    pad = "SECRET-\r\nERROR forged " + "x" * (4 * 1024 * 1024)
    sizes = []
    for rid in ("big-1", "big-2"):
        await served.send({"jsonrpc": "2.0", "id": rid, "method": "ping", "params": {"pad": pad}})
        answer, _ = await served.until(rid)
        assert answer["error"]["code"] == -32600
        said = re.search(r"message of (\d+) bytes", answer["error"]["message"])
        assert said is not None, answer
        sizes.append(int(said[1]))
        if rid == "big-1":
            await _open_2025(served)
    await served.send({"jsonrpc": "2.0", "id": 2, "method": "ping"})
    await served.until(2)
    await served.stop()
    log = served.stderr()

    assert "SECRET" not in log and "forged" not in log
    over = _lines(log, "byte limit")
    assert len(over) == 2, log
    ending = "the server cannot read (over its 4194304 byte limit); answered with error -32600"
    assert re.search(rf" DEBUG .*stdio: a message of {sizes[0]} bytes {re.escape(ending)}$", over[0]), over
    assert re.search(
        rf" DEBUG .*stdio, session [0-9a-f]{{8}}: a message of {sizes[1]} bytes {re.escape(ending)}$", over[1]
    ), over
    assert all(len(line) < 300 for line in over)


def test_over_http_too(tmp_path: Path) -> None:
    """The same two lines over HTTP: a body that is not JSON (-32700, outside a session),
    and a response POSTed in a 2025-11-25 session that answers no question (202, dropped)."""
    app = tmp_path / "signups.py"
    app.write_text(SERVER, encoding="utf-8")
    args = ("--log-level", "debug", "--store", "memory://")
    headers = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}
    with http_process(app, log_dir=tmp_path, args=args) as served, httpx.Client(timeout=20) as http:
        not_json = b'{"jsonrpc": "2.0", "id": 1, "token": "SECRET-1'
        answer = http.post(served.url, content=not_json, headers=headers)
        assert answer.status_code == 400 and answer.json()["error"]["code"] == -32700
        opened = http.post(served.url, json=initialize_body(), headers=headers)
        assert opened.status_code == 200, opened.text
        session = {**headers, "Mcp-Session-Id": opened.headers["mcp-session-id"]}
        session["MCP-Protocol-Version"] = "2025-11-25"
        stray = {"jsonrpc": "2.0", "id": 9, "result": {"token": "SECRET-2"}}
        assert http.post(served.url, json=stray, headers=session).status_code == 202
    log = served.stderr()

    assert "SECRET" not in log
    (line,) = _lines(log, "the server cannot read")
    assert re.search(rf" DEBUG .*HTTP: a message of {len(not_json)} bytes the server cannot read; ", line), (
        line
    )
    (line,) = _lines(log, "which no question of the server's waits for")
    assert re.search(r" DEBUG .*HTTP, session [0-9a-f]{8}: a response to request 9, which", line), line
