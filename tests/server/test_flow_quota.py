"""One principal holds at most ``max_flows_per_principal`` hosted URL-mode flows open at
once, over real HTTP: past it, its next ask is refused with a message naming the limit,
while other principals still get pages, and a flow that ends makes room again."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import httpx
import pytest

from mcp_elicit import Context, KeyRing, Server
from mcp_elicit.errors import ConfigError, PrincipalLimitReached
from mcp_elicit.server.flows import FlowQuota, Flows
from mcp_elicit.stores import MemoryStore, SqliteStore, Store
from mcp_elicit.transports.http_server import StreamableHTTP

from support.gated_store import HeldLookup
from support.principals import Tokens
from support.procs import uvicorn_server
from support.wire import WireChecker

pytestmark = pytest.mark.anyio
META = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {"elicitation": {"url": {}}},
}


def build(store: Store, **options: Any) -> Server:
    app = Server(
        "flow-quota",
        state_keys=KeyRing([bytes(range(40, 72))]),
        store=store,
        flow_wait=0.05,
        auth=Tokens(),
        **options,
    )

    @app.tool()
    async def use_key(ctx: Context, name: str) -> str:
        answer = await ctx.secret(name, message="Enter the key")
        return f"{name}: {answer.action}"

    return app


class Caller:
    def __init__(self, http: httpx.AsyncClient, url: str, wire: WireChecker, who: str) -> None:
        self.http, self.url, self.wire, self.who, self.ids = http, url, wire, who, 0

    async def call(self, name: str, **extra: Any) -> dict[str, Any]:
        self.ids += 1
        body = {
            "jsonrpc": "2.0",
            "id": self.ids,
            "method": "tools/call",
            "params": {"name": "use_key", "arguments": {"name": name}, "_meta": META, **extra},
        }
        self.wire.request(body)
        headers = {
            "accept": "application/json, text/event-stream",
            "authorization": f"Bearer tok-{self.who}",
            "mcp-protocol-version": "2026-07-28",
            "mcp-method": "tools/call",
            "mcp-name": "use_key",
        }
        response = await self.http.post(self.url, json=body, headers=headers)
        self.status = response.status_code
        message: dict[str, Any] = response.json()
        self.wire.response("tools/call", message)
        return message


async def test_one_principal_cannot_open_flows_without_bound(wire: WireChecker) -> None:
    store = MemoryStore()
    app = build(store, max_flows_per_principal=2)
    async with uvicorn_server(StreamableHTTP(app)) as running, httpx.AsyncClient(timeout=10) as http:
        alice = Caller(http, running.url, wire, "alice")
        opened = [(await alice.call(f"key-{n}"))["result"] for n in range(2)]
        assert [r["resultType"] for r in opened] == ["input_required"] * 2
        refused = await alice.call("key-2")
        # alice's own doing, as for sessions and subscriptions: -32600, HTTP 429
        assert (refused["error"]["code"], alice.status) == (-32600, 429)
        assert refused["error"]["data"] == {"limit": "max_flows_per_principal", "most": 2}
        message = refused["error"]["message"]
        assert message.startswith(
            "Too many URL-mode pages open: principal 'alice' holds 2, the limit for one principal "
            "(max_flows_per_principal); "
        ), message
        # another principal is not held back by alice's flows
        bob = (await Caller(http, running.url, wire, "bob").call("key-0"))["result"]
        assert bob["resultType"] == "input_required"
        # one of alice's ends (declined in the client): there is room for one more
        ((key, _),) = opened[0]["inputRequests"].items()
        declined = await alice.call(
            "key-0", inputResponses={key: {"action": "decline"}}, requestState=opened[0]["requestState"]
        )
        assert declined["result"]["content"][0]["text"] == "key-0: decline"
        assert (await alice.call("key-2"))["result"]["resultType"] == "input_required"
        assert "error" in await alice.call("key-3")
    await store.close()


async def test_a_flow_ending_while_an_ask_looks_at_the_flows_does_not_lift_the_limit(
    wire: WireChecker,
) -> None:
    """An ask at the limit looks the caller's flows up in the store; the flow it looks at
    ends meanwhile (the caller then holds none, and is forgotten) and another ask takes
    the room it left. The looking ask must count that one and be refused, not start a
    flow past the limit."""
    store = HeldLookup(MemoryStore(), "flow", "id:")
    app = build(store, max_flows_per_principal=1)
    async with uvicorn_server(StreamableHTTP(app)) as running, httpx.AsyncClient(timeout=10) as http:
        alice = Caller(http, running.url, wire, "alice")
        first = (await alice.call("key-0"))["result"]
        assert first["resultType"] == "input_required"
        store.arm()  # the next ask's look at key-0's flow waits
        looking = asyncio.ensure_future(Caller(http, running.url, wire, "alice").call("key-1"))
        async with asyncio.timeout(10):
            await store.waiting.wait()
        ((key, _),) = first["inputRequests"].items()
        declined = await alice.call(
            "key-0", inputResponses={key: {"action": "decline"}}, requestState=first["requestState"]
        )
        assert declined["result"]["content"][0]["text"] == "key-0: decline"
        # key-0's flow ended: there is room for one, which this ask takes
        assert (await alice.call("key-2"))["result"]["resultType"] == "input_required"
        store.release()
        late = await looking
        assert "error" in late, f"alice holds 2 flows past her limit of 1: {late}"
        assert late["error"]["data"] == {"limit": "max_flows_per_principal", "most": 1}
    await store.close()


async def test_a_sweep_while_an_ask_looks_at_the_flows_does_not_lift_the_limit() -> None:
    """The same with a sweep: while an ask at the limit looks its caller's flow up, the flow
    expires and a sweep (other callers having doubled) forgets the caller; its next ask
    starts one. The looking ask must count that one and be refused."""
    now = [1_000_000.0]
    store = HeldLookup(MemoryStore(clock=lambda: now[0]), "flow", "id:")
    flows = Flows(store, ttl=60, clock=lambda: now[0])
    quota = FlowQuota(1, clock=lambda: now[0])
    started, _ = await flows.start("secret", "key-0", "alice")
    quota.opened(started)
    store.arm()
    looking = asyncio.ensure_future(quota.admit("alice", flows))
    async with asyncio.timeout(10):
        await store.waiting.wait()
    now[0] += 61  # alice's flow expired; other callers come, enough for a sweep
    for n in range(300):
        quota.opened((await flows.start("secret", "key", f"user-{n}"))[0])
        quota.ended(await quota.admit(f"late-{n}", flows), f"late-{n}")
    assert len(quota) == 300, "no sweep forgot alice"  # the users, each with an open flow
    ticket = await quota.admit("alice", flows)  # room: her flow expired
    quota.ended(ticket, "alice")
    quota.opened((await flows.start("secret", "key-1", "alice"))[0])
    store.release()
    with pytest.raises(PrincipalLimitReached):
        await looking
    await store.close()


async def test_asks_at_the_same_time_cannot_all_pass(wire: WireChecker, tmp_path: Path) -> None:
    """Starting a flow writes to the store (SQLite, in a thread: requests interleave there),
    so the place is taken before: six asks at once, two pages."""
    store = SqliteStore(tmp_path / "flows.db")
    app = build(store, max_flows_per_principal=2)
    async with uvicorn_server(StreamableHTTP(app)) as running, httpx.AsyncClient(timeout=10) as http:
        alice = Caller(http, running.url, wire, "alice")
        answers = await asyncio.gather(*(alice.call(f"key-{n}") for n in range(6)))
        assert sorted("error" in a for a in answers) == [False] * 2 + [True] * 4
    await store.close()


async def test_a_flow_that_expired_makes_room() -> None:
    """A flow nobody came back for (its client went away) holds its place until it
    expires, not for good."""
    now = [1_000_000.0]
    store = MemoryStore()
    app = build(store, max_flows_per_principal=1, flow_ttl=60, clock=lambda: now[0])
    async with uvicorn_server(StreamableHTTP(app)) as running, httpx.AsyncClient(timeout=10) as http:
        alice = Caller(http, running.url, WireChecker.load("2026-07-28"), "alice")
        assert (await alice.call("key-0"))["result"]["resultType"] == "input_required"
        assert "error" in await alice.call("key-1")
        now[0] += 61
        assert (await alice.call("key-1"))["result"]["resultType"] == "input_required"
    await store.close()


async def test_a_sweep_of_expired_callers_leaves_one_at_its_limit_held() -> None:
    """Callers that started a flow and never came back are forgotten once their flows
    expired (a sweep, when the callers counted have doubled), but a caller at its limit
    whose flows are still open is held there through the sweep."""
    now = [1_000_000.0]
    store = MemoryStore(clock=lambda: now[0])
    app = build(store, max_flows_per_principal=2, flow_ttl=600, clock=lambda: now[0])
    wire = WireChecker.load("2026-07-28")

    async def callers(first: int, count: int) -> None:
        for batch in range(first, first + count, 25):
            callers = [Caller(http, running.url, wire, f"user-{n}") for n in range(batch, batch + 25)]
            opened = await asyncio.gather(*(c.call("key") for c in callers))
            assert all(o["result"]["resultType"] == "input_required" for o in opened)

    async with uvicorn_server(StreamableHTTP(app)) as running, httpx.AsyncClient(timeout=10) as http:
        await callers(0, 300)  # past the first sweep's 256 callers: nothing has expired yet
        now[0] += 400
        hog = Caller(http, running.url, wire, "hog")
        assert [(await hog.call(f"key-{n}"))["result"]["resultType"] for n in range(2)] == [
            "input_required"
        ] * 2
        now[0] += 250  # the first 300 callers' flows have expired; hog's have not
        await callers(300, 300)  # the callers counted double: a sweep
        assert len(app.url_mode.quota) < 400, "no sweep forgot the callers whose flows expired"
        refused = await hog.call("key-2")
        assert (refused["error"]["code"], hog.status) == (-32600, 429), refused
        now[0] += 400  # hog's flows have expired now
        assert (await hog.call("key-2"))["result"]["resultType"] == "input_required"
    await store.close()


@pytest.mark.parametrize("value", [0, -1, 1.5, True, None])
def test_a_flow_limit_that_is_not_a_whole_number_above_zero_is_refused(value: Any) -> None:
    with pytest.raises(
        ConfigError, match=r"^max_flows_per_principal .*: expected a whole number above zero$"
    ):
        Server("s", max_flows_per_principal=value)
    assert Server("s").url_mode.max_flows_per_principal == 100
