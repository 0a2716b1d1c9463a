"""Elicitation over multi round-trip requests (2026-07-28), in memory: the request state.
Tampered, rebound, expired or foreign state is refused, a changed question is a clear error,
and answers too nested or too large for the state are refused."""

from __future__ import annotations

from typing import Any

import orjson
import pytest

from mcp_elicit import Context, Form, Principal, Server, String
from mcp_elicit.sealing import KeyRing
from mcp_elicit.wire import jsonrpc

from support.elicitation import BOOKING, Clock, build
from support.memory import MemoryClient
from support.wire import WireChecker

pytestmark = pytest.mark.anyio


async def _state(client: MemoryClient, arguments: dict[str, Any] | None = None) -> str:
    first = await client.result(
        "tools/call", {"name": "book", "arguments": arguments or {"restaurant": "Noma"}}
    )
    return str(first["requestState"])


def _retry(state: str, **changes: Any) -> dict[str, Any]:
    params = {"name": "book", "arguments": {"restaurant": "Noma"}, "requestState": state}
    params["inputResponses"] = {"elicit-1": {"action": "accept", "content": BOOKING}}
    params.update(changes)
    return params


async def _rejected(client: MemoryClient, params: dict[str, Any]) -> None:
    response = await client.request("tools/call", params, malformed=True)
    assert response["error"] == {"code": -32602, "message": "Invalid or expired requestState"}


@pytest.mark.parametrize(
    "edit", [lambda s: s + "-TAMPERED", lambda s: s[:-2], lambda s: s.replace("v2.", "v1."), lambda s: ""]
)
async def test_tampered_state_is_refused(client: MemoryClient, edit: Any) -> None:
    await _rejected(client, _retry(edit(await _state(client))))


async def test_state_is_bound_to_arguments_target_and_principal(wire: WireChecker) -> None:
    app = build()
    alice = MemoryClient(app, checker=wire, principal=Principal("alice"))
    state = await _state(alice)
    await _rejected(alice, _retry(state, arguments={"restaurant": "Other"}))
    await _rejected(alice, _retry(state, name="wizard"))
    await _rejected(MemoryClient(app, checker=wire, principal=Principal("bob")), _retry(state))
    await _rejected(MemoryClient(app, checker=wire), _retry(state))
    ok = await alice.result("tools/call", _retry(state))
    assert ok["resultType"] == "complete"


async def test_state_expires(wire: WireChecker) -> None:
    clock = Clock()
    client = MemoryClient(build(clock), checker=wire)
    state = await _state(client)
    clock.now += 599
    assert (await client.result("tools/call", _retry(state)))["resultType"] == "complete"
    clock.now += 2
    await _rejected(client, _retry(state))


async def test_state_from_another_server_key_is_refused(wire: WireChecker) -> None:
    state = await _state(MemoryClient(build(), checker=wire))
    other = build()
    other.set_state_keys(KeyRing([bytes(range(100, 132))]))
    await _rejected(MemoryClient(other, checker=wire), _retry(state))


async def test_a_changed_question_is_a_clear_error(wire: WireChecker) -> None:
    app = Server("changing", state_keys=KeyRing([bytes(range(50, 82))]))
    asked = {"n": 0}

    @app.tool()
    async def fickle(ctx: Context) -> str:
        asked["n"] += 1
        await ctx.elicit(f"Question number {asked['n']}?", Form(x=String()), key="q")
        return "done"

    client = MemoryClient(app, checker=wire)
    first = await client.result("tools/call", {"name": "fickle"})
    response = await client.request(
        "tools/call",
        {
            "name": "fickle",
            "inputResponses": {"q": {"action": "accept", "content": {"x": "1"}}},
            "requestState": first["requestState"],
        },
    )
    assert response["error"]["code"] == -32603
    assert "changed between rounds" in response["error"]["message"]


def _nested(levels: int) -> str:
    return "[" * levels + "1" + "]" * levels


async def _send_text(client: MemoryClient, method: str, params: dict[str, Any], swap: dict[str, str]) -> Any:
    """Send a request whose JSON is written out here (``swap`` puts raw JSON in place of
    string placeholders): values nested deeper than an encoder goes can still arrive."""
    body = {**params, "_meta": client.meta()}
    text = orjson.dumps({"jsonrpc": "2.0", "id": 1, "method": method, "params": body}).decode()
    for placeholder, raw in swap.items():
        text = text.replace(f'"{placeholder}"', raw)
    decoded = jsonrpc.decode(text)
    assert isinstance(decoded, jsonrpc.Request)
    payload, _ = await client.server.respond(decoded, channel=client)
    response = orjson.loads(payload)
    assert client.checker is not None
    client.checker.response(method, response)
    return response


@pytest.mark.parametrize(
    ("name", "answers"),
    [
        ("book", {"elicit-1": {"action": "accept", "content": BOOKING, "x": "DEEP"}}),
        (
            "sample_then_ask",
            {
                "sample-1": {
                    "role": "assistant",
                    "model": "m",
                    "content": {"type": "text", "text": "hi"},
                    "_meta": {"x": "DEEP"},
                }
            },
        ),
    ],
)
@pytest.mark.parametrize("levels", [250, 300])
async def test_deeply_nested_input_responses_are_refused(
    wire: WireChecker, name: str, answers: dict[str, Any], levels: int
) -> None:
    app = build()

    @app.tool()
    async def sample_then_ask(ctx: Context) -> str:
        await ctx.sample("Say hi", max_tokens=5)
        answer = await ctx.elicit("Name?", Form(name=String()))
        return answer.action

    client = MemoryClient(app, checker=wire, capabilities={"elicitation": {}, "sampling": {}})
    params = {"name": name, "arguments": {"restaurant": "N"}, "inputResponses": answers}
    response = await _send_text(client, "tools/call", params, {"DEEP": _nested(levels)})
    assert response["error"]["code"] == -32602
    assert "inputResponses" in response["error"]["message"]
    assert "nested" in response["error"]["message"]


async def test_answers_too_large_for_the_state_are_refused_with_a_reason(client: MemoryClient) -> None:
    """An answer within the inputResponses limit but too large to carry in the next
    round's requestState fails the request with -32602 saying so (it was an internal
    error); a smaller answer then goes through. A handler remembering too much is the
    server's own fault: -32603 saying what."""
    long_name = {"name": {"action": "accept", "content": {"name": "x" * 100_000}}}
    response = await client.request(
        "tools/call", {"name": "wizard", "inputResponses": long_name}, malformed=True
    )
    assert response["error"]["code"] == -32602
    message = response["error"]["message"]
    assert "requestState" in message and "answer" in message and "bytes" in message
    short_name = {"name": {"action": "accept", "content": {"name": "x" * 1000}}}
    again = await client.request(
        "tools/call", {"name": "wizard", "inputResponses": short_name}, malformed=True
    )
    assert list(again["result"]["inputRequests"]) == ["color"]
    app = build()

    @app.tool()
    async def hoarder(ctx: Context) -> str:
        ctx.remember("bulk", lambda: "y" * 100_000)
        answer = await ctx.elicit("Name?", Form(name=String()))
        return answer.action

    own_fault = await MemoryClient(app, checker=client.checker).request("tools/call", {"name": "hoarder"})
    assert own_fault["error"]["code"] == -32603
    assert "the handler remembers" in own_fault["error"]["message"]
