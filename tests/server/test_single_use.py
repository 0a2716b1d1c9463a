"""Single-use requestState: a one-time action's state is redeemed once, on any instance
sharing the store (memory within a process; a SQLite file; a real Redis across processes),
in memory and over HTTP (uvicorn on 127.0.0.1)."""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx
import orjson
import pytest

from mcp_elicit import Boolean, Context, Form, KeyRing, Server
from mcp_elicit.stores import MemoryStore, RedisStore, SqliteStore, Store
from mcp_elicit.transports.http_server import StreamableHTTP

from support.http import parse_sse
from support.memory import MemoryClient
from support.procs import uvicorn_server
from support.url_mode import Mcp, _fill_page
from support.wire import WireChecker

pytestmark = pytest.mark.anyio
KEYS = KeyRing([bytes(range(90, 122))])
PAID: list[str] = []
REFUSED = {"code": -32602, "message": "Invalid or expired requestState"}


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


@pytest.fixture(params=["memory", "sqlite", "redis"])
async def store(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[Store]:
    if request.param == "memory":
        shared: Store = MemoryStore()
    elif request.param == "sqlite":
        shared = SqliteStore(tmp_path / "state.db")
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


async def test_states_in_flight_when_a_memory_store_restarts_are_refused(
    wire: WireChecker, caplog: pytest.LogCaptureFixture
) -> None:
    """The same key after a restart, the memory store empty: a state redeemed before is not
    accepted again, nor one handed out before and not yet redeemed (the client starts the
    call again); the store cannot tell which was used, and the log does not call both a
    replay (the warning after a Redis restart would point at an attack that is not one)."""
    params: dict[str, Any] = {"name": "pay", "arguments": {"amount": 30}}
    answers = {"confirm": {"action": "accept", "content": {"ok": True}}}
    before = MemoryClient(instance(MemoryStore()), checker=wire)
    redeemed = {**params, "inputResponses": answers}
    redeemed["requestState"] = (await before.result("tools/call", params))["requestState"]
    pending = {**params, "inputResponses": answers}
    pending["requestState"] = (await before.result("tools/call", params))["requestState"]
    PAID.clear()
    assert (await before.result("tools/call", redeemed))["content"][0]["text"] == "paid 30"
    after = MemoryClient(instance(MemoryStore()), checker=wire)  # restarted: the store is empty
    for retry in (redeemed, pending):
        with caplog.at_level(logging.WARNING, logger="mcp_elicit.server"):
            assert (await after.request("tools/call", retry))["error"] == REFUSED
    assert PAID == ["30"], "the one-time action ran once"
    said = [r.getMessage() for r in caplog.records if "requestState refused" in r.getMessage()]
    assert len(said) == 2 and all(
        "single-use state redeemed before, or its record lost with the store's data" in m for m in said
    ), said


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


def summarised(store: Store) -> Server:
    """An instance whose one-time action follows a form, a model's summary and a last go."""
    app = Server("transfers", state_keys=KEYS, store=store)

    @app.tool(single_use_state=True)
    async def transfer(ctx: Context, amount: int) -> str:
        await ctx.elicit(f"Transfer {amount} EUR?", Form(ok=Boolean()), key="confirm")
        summary = await ctx.sample(f"Summarise a transfer of {amount} EUR", key="summary")
        await ctx.elicit("Go?", Form(go=Boolean()), key="go")
        PAID.append(f"{amount}: {getattr(summary.content, 'text', '?')}")
        return f"sent {amount}"

    return app


async def post(
    http: httpx.AsyncClient, url: str, wire: WireChecker, params: dict[str, Any]
) -> dict[str, Any]:
    """One tools/call over HTTP (2026-07-28, with sampling); its result, or its error."""
    meta = {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {"elicitation": {"form": {}}, "sampling": {}},
        "io.modelcontextprotocol/clientInfo": {"name": "single-use", "version": "1"},
    }
    message = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {**params, "_meta": meta}}
    headers = {
        "accept": "application/json, text/event-stream",
        "content-type": "application/json",
        "mcp-protocol-version": "2026-07-28",
        "mcp-method": "tools/call",
        "mcp-name": params["name"],
    }
    response = await http.post(url, content=orjson.dumps(message), headers=headers)
    assert response.status_code == 200, response.text
    texts = parse_sse(response.text) if response.headers["content-type"].startswith("text/event") else None
    reply: dict[str, Any] = orjson.loads(texts[-1]) if texts else response.json()
    wire.response("tools/call", reply)
    return dict(reply.get("result") or reply["error"])


async def test_a_round_refusing_the_answers_hands_back_a_fresh_single_use_state(
    store: Store, wire: WireChecker
) -> None:
    """A single-use state is spent before its round runs; when the round then fails on the
    client's answers (a model's answer that does not fit, answers too large to seal), the
    -32602 carries a fresh state standing where the spent one stood, so the client corrects
    that answer alone. Each state, the fresh ones too, is redeemed once on either instance
    sharing the store, and the action runs once."""
    params: dict[str, Any] = {"name": "transfer", "arguments": {"amount": 30}}
    sampled = {"role": "assistant", "content": {"type": "text", "text": "ok"}, "model": "m"}
    confirm = {"confirm": {"action": "accept", "content": {"ok": True}}}
    PAID.clear()
    async with (
        uvicorn_server(StreamableHTTP(summarised(store)), lifespan="on") as one,
        uvicorn_server(StreamableHTTP(summarised(store)), lifespan="on") as two,
        httpx.AsyncClient(timeout=10) as http,
    ):
        first = await post(http, one.url, wire, params)
        asked = await post(
            http, two.url, wire, {**params, "requestState": first["requestState"], "inputResponses": confirm}
        )
        assert list(asked["inputRequests"]) == ["summary"]
        spent = asked["requestState"]
        wrong = {"summary": {"role": "assistant", "content": {"type": "text"}, "model": "m"}}
        large = {"summary": {**sampled, "content": {"type": "text", "text": "x" * 60_000}}}
        for bad, reason in ((wrong, "answers sampling/createMessage"), (large, "more than a requestState")):
            refused = await post(
                http, one.url, wire, {**params, "requestState": spent, "inputResponses": bad}
            )
            assert refused["code"] == -32602 and reason in refused["message"], refused
            again = await post(http, two.url, wire, {**params, "requestState": spent, "inputResponses": bad})
            assert again == REFUSED, "the state the failed round spent is spent"
            assert set(refused.get("data") or {}) == {"requestState"}, refused
            fresh = refused["data"]["requestState"]
            assert fresh != spent
            spent = fresh
        asked = await post(
            http, two.url, wire, {**params, "requestState": spent, "inputResponses": {"summary": sampled}}
        )
        assert list(asked["inputRequests"]) == ["go"]
        assert (
            await post(
                http, one.url, wire, {**params, "requestState": spent, "inputResponses": {"summary": sampled}}
            )
            == REFUSED
        )
        go = {"go": {"action": "accept", "content": {"go": True}}}
        done = await post(
            http, one.url, wire, {**params, "requestState": asked["requestState"], "inputResponses": go}
        )
        assert done["content"][0]["text"] == "sent 30"
        for url in (one.url, two.url):
            retry = {**params, "requestState": asked["requestState"], "inputResponses": go}
            assert await post(http, url, wire, retry) == REFUSED
    assert PAID == ["30: ok"], "the one-time action ran once"


def by_key(store: Store, paid: list[str], *, flow_wait: float) -> Server:
    """An instance whose one-time action follows a secret entered on its page (URL mode)."""
    app = Server("pay-by-key", state_keys=KEYS, store=store, flow_wait=flow_wait)

    @app.tool(single_use_state=True)
    async def pay(ctx: Context) -> str:
        answer = await ctx.secret("bank_key", message="Enter your bank key")
        if answer.secret is None:
            return "not paid"
        paid.append("paid")
        return "paid"

    return app


async def test_the_rounds_waiting_for_a_page_each_hand_back_a_state_redeemable_once(
    store: Store, wire: WireChecker
) -> None:
    """URL mode: the retry that waited for the page in vain, and the one a stopping
    instance answers at once, each spend their state and hand back a state-only round
    whose state the other instance redeems once; the action runs once."""
    paid: list[str] = []
    stopping = by_key(store, paid, flow_wait=3600.0)
    async with (
        uvicorn_server(StreamableHTTP(stopping)) as one,
        uvicorn_server(StreamableHTTP(by_key(store, paid, flow_wait=0.1))) as two,
        httpx.AsyncClient(timeout=10) as http,
        httpx.AsyncClient(timeout=10) as browser,
    ):
        a, b = Mcp(http, one.url, wire, tool="pay"), Mcp(http, two.url, wire, tool="pay")
        first = (await a.call())["result"]
        ((key, request),) = first["inputRequests"].items()
        accepted = {"inputResponses": {key: {"action": "accept"}}, "requestState": first["requestState"]}
        waited = (await b.call(**accepted))["result"]  # the page is not done: state only
        assert "inputRequests" not in waited and waited["requestState"], waited
        assert (await a.call(**accepted))["error"] == REFUSED
        stopping.url_mode.stop_waiting()  # the instance is stopping: it answers at once
        stopped = (await a.call(requestState=waited["requestState"]))["result"]
        assert "inputRequests" not in stopped and stopped["requestState"], stopped
        assert (await b.call(requestState=waited["requestState"]))["error"] == REFUSED
        assert (await _fill_page(browser, request["params"]["url"])).status_code == 200
        done = (await b.call(requestState=stopped["requestState"]))["result"]
        assert done["content"] == [{"type": "text", "text": "paid"}], done
        for mcp in (a, b):
            assert (await mcp.call(requestState=stopped["requestState"]))["error"] == REFUSED
    assert paid == ["paid"], "the one-time action ran once"
