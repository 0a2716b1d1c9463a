"""A session is asked only in the words of the revision it negotiated.

2025-11-25 added to form elicitation its ``mode``, titled single-selects as ``oneOf``,
multi-selects (``array``) and a ``default`` on strings, numbers and single-selects. A
2025-06-18 session was sent them all, which its client cannot read: it now gets a form as
2025-06-18 says it (no ``mode``; a titled single-select as ``enum`` + ``enumNames``; a
default on a boolean only), and a form that revision cannot say at all (a multi-select) is
not sent: the handler is refused with -32021 naming the revision and the field (in the
data too, as ``requiredProtocolVersion``: the client had declared the capability). 2025-03-26
has no elicitation: its session is asked nothing, whatever its client declared.

Real servers (``mcp-elicit serve`` over stdio and over HTTP on 127.0.0.1), raw sessions,
the exact messages. There is no official schema file here for 2025-06-18: its messages are
asserted whole; the 2025-11-25 ones are also checked against that revision's schema.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from support.http_sessions import _events
from support.procs import StdioProcess, http_process, stdio_process
from support.sessions import open_session
from support.wire import WireChecker

pytestmark = pytest.mark.anyio
SERVER = Path(__file__).with_name("old_revisions_server.py")
DECLARED = {"elicitation": {"form": {}, "url": {}}}  # all a 2025-11-25 client may declare

#: The order form as 2025-06-18 says it.
ORDER_2025_06_18 = {
    "type": "object",
    "properties": {
        "size": {"type": "string", "enum": ["s", "l"], "enumNames": ["Small", "Large"]},
        "note": {"type": "string", "maxLength": 40},
        "count": {"type": "integer", "minimum": 1},
        "gift": {"type": "boolean", "default": False},
        "color": {"type": "string", "enum": ["red", "blue"]},
    },
    "required": ["size", "count", "gift", "color"],
}
#: The same form as 2025-11-25 says it (unchanged).
ORDER_2025_11_25 = {
    "type": "object",
    "properties": {
        "size": {
            "type": "string",
            "oneOf": [{"const": "s", "title": "Small"}, {"const": "l", "title": "Large"}],
            "default": "s",
        },
        "note": {"type": "string", "maxLength": 40, "default": "none"},
        "count": {"type": "integer", "minimum": 1, "default": 1},
        "gift": {"type": "boolean", "default": False},
        "color": {"type": "string", "enum": ["red", "blue"], "default": "red"},
    },
    "required": ["size", "count", "gift", "color"],
}
ANSWER = {"size": "l", "count": 2, "gift": True, "color": "blue"}


def call(rid: int, name: str) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": rid, "method": "tools/call", "params": {"name": name, "arguments": {}}}


def text(rid: int, said: str) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": rid, "result": {"content": [{"type": "text", "text": said}]}}


@pytest.fixture
async def stdio(tmp_path: Path) -> AsyncIterator[StdioProcess]:
    async with stdio_process(SERVER, log_dir=tmp_path) as server:
        yield server
        assert "Traceback" not in server.stderr(), server.stderr()


async def initialize(server: StdioProcess, version: str, capabilities: dict[str, Any]) -> None:
    await server.send(
        {
            "jsonrpc": "2.0",
            "id": 0,
            "method": "initialize",
            "params": {
                "protocolVersion": version,
                "capabilities": capabilities,
                "clientInfo": {"name": "old", "version": "1"},
            },
        }
    )
    reply, before = await server.until(0)
    assert before == []
    assert reply["result"]["protocolVersion"] == version
    await server.send({"jsonrpc": "2.0", "method": "notifications/initialized"})


# ---- 2025-06-18 ----------------------------------------------------------------------------


async def test_a_2025_06_18_session_gets_its_own_form(stdio: StdioProcess) -> None:
    await initialize(stdio, "2025-06-18", DECLARED)
    await stdio.send(call(1, "order"))
    question = await stdio.recv()
    assert question == {
        "jsonrpc": "2.0",
        "id": question["id"],
        "method": "elicitation/create",
        "params": {"message": "Your order?", "requestedSchema": ORDER_2025_06_18},
    }
    # the answer as 2025-06-18 defines it: an action, and values that are strings, numbers, booleans
    await stdio.send(
        {"jsonrpc": "2.0", "id": question["id"], "result": {"action": "accept", "content": ANSWER}}
    )
    final, before = await stdio.until(1)
    assert before == []
    assert final == text(1, 'accept {"color": "blue", "count": 2, "gift": true, "size": "l"}')


async def test_a_2025_06_18_session_is_not_sent_a_multi_select(
    stdio: StdioProcess, wire_2025: WireChecker
) -> None:
    await initialize(stdio, "2025-06-18", DECLARED)
    await stdio.send(call(1, "toppings"))
    refused, before = await stdio.until(1)
    assert before == [], "no elicitation/create went out"
    # no schema for 2025-06-18 here; its error is one as 2025-11-25 defines it (data open)
    wire_2025.response("tools/call", refused)
    assert refused == {
        "jsonrpc": "2.0",
        "id": 1,
        "error": {
            "code": -32021,
            "message": (
                "This request needs a multi-select (field 'toppings'), which MCP 2025-06-18 "
                "elicitation does not have: multi-selects came with 2025-11-25, before it a "
                "form field holds one string, number or boolean. What is missing is that "
                "revision, not a capability the client could declare"
            ),
            # the client declared elicitation (form): what it lacks is the revision
            "data": {
                "requiredCapabilities": {"elicitation": {"form": {}}},
                "requiredProtocolVersion": "2025-11-25",
            },
        },
    }
    # the session goes on: a form it can say is still asked
    await stdio.send(call(2, "order"))
    question = await stdio.recv()
    assert question["params"] == {"message": "Your order?", "requestedSchema": ORDER_2025_06_18}
    await stdio.send({"jsonrpc": "2.0", "id": question["id"], "result": {"action": "decline"}})
    final, _ = await stdio.until(2)
    assert final == text(2, "decline null")


async def test_a_2025_06_18_session_is_offered_no_url_mode(stdio: StdioProcess) -> None:
    await initialize(stdio, "2025-06-18", DECLARED)
    await stdio.send(call(1, "can_ask"))
    assert (await stdio.until(1)) == (text(1, "form=True url=False"), [])
    await stdio.send(call(2, "pay"))
    refused, before = await stdio.until(2)
    assert before == []
    assert refused["error"]["code"] == -32021
    assert "MCP 2025-06-18 does not have" in refused["error"]["message"]


# ---- 2025-03-26 ----------------------------------------------------------------------------


async def test_a_2025_03_26_session_is_asked_nothing_whatever_its_client_declared(
    stdio: StdioProcess, wire_2025: WireChecker
) -> None:
    await initialize(stdio, "2025-03-26", DECLARED)
    await stdio.send(call(1, "can_ask"))
    assert (await stdio.until(1)) == (text(1, "form=False url=False"), [])
    await stdio.send(call(2, "order"))
    refused, before = await stdio.until(2)
    assert before == [], "no elicitation/create went out"
    wire_2025.response("tools/call", refused)
    assert refused == {
        "jsonrpc": "2.0",
        "id": 2,
        "error": {
            "code": -32021,
            "message": (
                "This request needs the client capability elicitation.form, which MCP 2025-03-26 "
                "does not have: elicitation came with 2025-06-18"
            ),
            "data": {
                "requiredCapabilities": {"elicitation": {"form": {}}},
                "requiredProtocolVersion": "2025-06-18",
            },
        },
    }
    await stdio.send(call(3, "pay"))
    refused, before = await stdio.until(3)
    assert before == []
    assert refused["error"]["code"] == -32021
    assert "MCP 2025-03-26 does not have" in refused["error"]["message"]


# ---- 2025-11-25: unchanged -----------------------------------------------------------------


async def test_a_2025_11_25_session_still_gets_the_whole_form(
    stdio: StdioProcess, wire_2025: WireChecker
) -> None:
    await initialize(stdio, "2025-11-25", DECLARED)
    await stdio.send(call(1, "order"))
    question = await stdio.recv()
    wire_2025.request(question)
    assert question["params"] == {
        "mode": "form",
        "message": "Your order?",
        "requestedSchema": ORDER_2025_11_25,
    }
    await stdio.send({"jsonrpc": "2.0", "id": question["id"], "result": {"action": "cancel"}})
    assert (await stdio.until(1))[0] == text(1, "cancel null")
    await stdio.send(call(2, "toppings"))
    question = await stdio.recv()
    wire_2025.request(question)
    assert question["params"]["requestedSchema"]["properties"]["toppings"]["type"] == "array"


async def test_required_fields_left_out_take_the_defaults_the_form_was_sent_with(stdio: StdioProcess) -> None:
    """A client's callback that returns only what it set leaves out fields with defaults. At
    2025-11-25, where every default is sent, a required field left out takes its default
    (an optional one stays out); at 2025-06-18 only the boolean's was sent, so the others
    are still "is required" and the question is asked again, with the reason."""
    await initialize(stdio, "2025-11-25", DECLARED)
    await stdio.send(call(1, "order"))
    question = await stdio.recv()
    await stdio.send({"jsonrpc": "2.0", "id": question["id"], "result": {"action": "accept", "content": {}}})
    final, before = await stdio.until(1)
    assert before == []
    assert final == text(1, 'accept {"color": "red", "count": 1, "gift": false, "size": "s"}')


async def test_at_2025_06_18_only_the_defaults_sent_are_taken(stdio: StdioProcess) -> None:
    await initialize(stdio, "2025-06-18", DECLARED)
    await stdio.send(call(1, "order"))
    question = await stdio.recv()
    content = {"size": "l", "color": "blue"}  # count (default 1, not sent) and gift left out
    await stdio.send(
        {"jsonrpc": "2.0", "id": question["id"], "result": {"action": "accept", "content": content}}
    )
    again = await stdio.recv()
    assert again["method"] == "elicitation/create"
    assert "count: is required" in again["params"]["message"]
    assert "gift" not in again["params"]["message"]
    await stdio.send(
        {
            "jsonrpc": "2.0",
            "id": again["id"],
            "result": {"action": "accept", "content": {**content, "count": 3}},
        }
    )
    final, _ = await stdio.until(1)
    assert final == text(1, 'accept {"color": "blue", "count": 3, "gift": false, "size": "l"}')


# ---- the same over HTTP --------------------------------------------------------------------


async def test_over_http_each_session_is_asked_in_its_own_words(
    tmp_path: Path, wire_2025: WireChecker
) -> None:
    with http_process(SERVER, log_dir=tmp_path) as running:
        async with httpx.AsyncClient(timeout=10) as http:
            old = await open_session(
                http, running.url, wire_2025, version="2025-06-18", capabilities=DECLARED
            )
            async with http.stream("POST", running.url, json=call(1, "order"), headers=old) as stream:
                events = _events(stream)
                question = await asyncio.wait_for(anext(events), 10)
                assert question == {
                    "jsonrpc": "2.0",
                    "id": question["id"],
                    "method": "elicitation/create",
                    "params": {"message": "Your order?", "requestedSchema": ORDER_2025_06_18},
                }
                answer = {
                    "jsonrpc": "2.0",
                    "id": question["id"],
                    "result": {"action": "accept", "content": ANSWER},
                }
                assert (await http.post(running.url, json=answer, headers=old)).status_code == 202
                final = await asyncio.wait_for(anext(events), 10)
            assert final == text(1, 'accept {"color": "blue", "count": 2, "gift": true, "size": "l"}')
            refused = (await http.post(running.url, json=call(2, "toppings"), headers=old)).json()
            assert refused["error"]["code"] == -32021
            assert "field 'toppings'" in refused["error"]["message"]

            older = await open_session(
                http, running.url, wire_2025, version="2025-03-26", capabilities=DECLARED
            )
            refused = (await http.post(running.url, json=call(1, "order"), headers=older)).json()
            assert refused["error"]["code"] == -32021
            assert "MCP 2025-03-26 does not have" in refused["error"]["message"]
        assert running.alive, running.stderr()
