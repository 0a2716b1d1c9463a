"""Single-use requestState: a one-time action's state is redeemed once, on any instance
sharing the store (memory within a process; a real Redis across processes)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest

from mcp_elicit import Boolean, Context, Form, KeyRing, Server
from mcp_elicit.stores import MemoryStore, RedisStore, Store

from support.memory import MemoryClient
from support.wire import WireChecker

pytestmark = pytest.mark.anyio
KEYS = KeyRing([bytes(range(90, 122))])
PAID: list[str] = []


def instance(store: Store) -> Server:
    app = Server("payments", state_keys=KEYS, store=store)

    @app.tool(single_use_state=True)
    async def pay(ctx: Context, amount: int) -> str:
        answer = await ctx.elicit(f"Pay {amount} EUR?", Form(ok=Boolean()), key="confirm")
        if answer.accepted and answer.content and answer.content["ok"]:
            PAID.append(f"{amount}")
            return f"paid {amount}"
        return "not paid"

    @app.tool()
    async def ordinary(ctx: Context) -> str:
        answer = await ctx.elicit("Sure?", Form(ok=Boolean()), key="confirm")
        return answer.action

    return app


@pytest.fixture(params=["memory", "redis"])
async def store(request: pytest.FixtureRequest) -> AsyncIterator[Store]:
    if request.param == "memory":
        shared: Store = MemoryStore()
    else:
        url: str = request.getfixturevalue("redis_url")
        shared = RedisStore(url, prefix=f"single-use-{id(request)}")
    yield shared
    await shared.close()


async def test_a_replayed_state_is_refused_on_either_instance(store: Store, wire: WireChecker) -> None:
    a = MemoryClient(instance(store), checker=wire)
    b = MemoryClient(instance(store), checker=wire)
    params: dict[str, Any] = {"name": "pay", "arguments": {"amount": 20}}
    first = await a.result("tools/call", params)
    retry = {
        **params,
        "inputResponses": {"confirm": {"action": "accept", "content": {"ok": True}}},
        "requestState": first["requestState"],
    }
    PAID.clear()
    done = await b.result("tools/call", retry)
    assert done["content"][0]["text"] == "paid 20"
    for client in (a, b):
        again = await client.request("tools/call", retry)
        assert again["error"] == {"code": -32602, "message": "Invalid or expired requestState"}
    assert PAID == ["20"], "the one-time action ran once"


async def test_ordinary_tools_accept_the_same_state_twice(store: Store, wire: WireChecker) -> None:
    a = MemoryClient(instance(store), checker=wire)
    first = await a.result("tools/call", {"name": "ordinary"})
    retry = {
        "name": "ordinary",
        "inputResponses": {"confirm": {"action": "decline"}},
        "requestState": first["requestState"],
    }
    assert (await a.result("tools/call", retry))["content"][0]["text"] == "decline"
    assert (await a.result("tools/call", retry))["content"][0]["text"] == "decline"


async def test_answers_without_the_state_do_not_reach_a_single_use_tool(
    store: Store, wire: WireChecker
) -> None:
    a = MemoryClient(instance(store), checker=wire)
    params: dict[str, Any] = {"name": "pay", "arguments": {"amount": 20}}
    first = await a.result("tools/call", params)
    answer = {"confirm": {"action": "accept", "content": {"ok": True}}}
    PAID.clear()
    done = await a.result(
        "tools/call", {**params, "inputResponses": answer, "requestState": first["requestState"]}
    )
    assert done["content"][0]["text"] == "paid 20"
    for _ in range(2):
        stateless = await a.result("tools/call", {**params, "inputResponses": answer})
        assert stateless["resultType"] == "input_required"
        assert list(stateless["inputRequests"]) == ["confirm"]
    assert PAID == ["20"], "leaving the spent state out did not run the action again"


async def test_ordinary_tools_still_take_answers_without_a_state(store: Store, wire: WireChecker) -> None:
    a = MemoryClient(instance(store), checker=wire)
    lenient = {"name": "ordinary", "inputResponses": {"confirm": {"action": "decline"}}}
    assert (await a.result("tools/call", lenient))["content"][0]["text"] == "decline"


async def test_a_null_state_counts_as_no_state_for_a_single_use_tool(store: Store, wire: WireChecker) -> None:
    """``"requestState": null`` is no state: the answers beside it do not reach a
    single-use tool (they did, once per store, as if a state had been redeemed)."""
    a = MemoryClient(instance(store), checker=wire)
    params: dict[str, Any] = {
        "name": "pay",
        "arguments": {"amount": 20},
        "inputResponses": {"confirm": {"action": "accept", "content": {"ok": True}}},
        "requestState": None,
    }
    PAID.clear()
    for _ in range(2):
        response = await a.request("tools/call", params, malformed=True)
        assert response["result"]["resultType"] == "input_required"
        assert list(response["result"]["inputRequests"]) == ["confirm"]
    assert PAID == [], "answers without a state ran the one-time action"
