"""``Client.listen`` (``subscriptions/listen``, 2026-07-28) against the project's own
server: in memory (plain and HTTP framing) and over stdio with a real process, where
every subscription shares one channel. Every message the client sends is checked."""

from __future__ import annotations

import asyncio
import sys
from collections.abc import AsyncIterator, Mapping
from typing import Any

import pytest

from client.fakes import FakeExchange, FakeTransport, discover
from client.recorder import Recorder
from mcp_elicit import Context, Form, Server
from mcp_elicit.client import Client, ElicitAnswer, Subscription
from mcp_elicit.core.client_inputs import ElicitationRequest
from mcp_elicit.errors import MethodNotFound, MissingClientCapability
from mcp_elicit.forms import Boolean
from mcp_elicit.transports.memory import connect_memory
from mcp_elicit.transports.stdio_client import connect_stdio

from support.procs import ROOT
from support.waiting import eventually
from support.wire import WireChecker

pytestmark = pytest.mark.anyio
WAITING_SERVER = ROOT / "tests" / "transports" / "waiting_server.py"


def build() -> Server:
    app = Server("listened", task_poll=0.02)

    @app.tool(task="optional")
    async def approve(ctx: Context) -> str:
        """Asks for an approval inside a task."""
        await ctx.start_task()
        answer = await ctx.elicit("Approve?", Form(ok=Boolean()), key="ok")
        return f"approved: {answer.action}"

    return app


async def next_change(changes: Subscription) -> tuple[str, dict[str, Any]]:
    return await asyncio.wait_for(anext(changes), 5)


@pytest.fixture(params=[False, True], ids=["plain", "http"])
async def listening(request: pytest.FixtureRequest) -> AsyncIterator[tuple[Client, Server, Recorder]]:
    app, recorder = build(), Recorder()
    async with connect_memory(app, http=request.param, versions=["2026-07-28"], trace=recorder) as client:
        yield client, app, recorder
    assert recorder.check(WireChecker.load("2026-07-28")) == len(recorder.sent) > 0


async def test_list_changes_arrive_while_listening(listening: tuple[Client, Server, Recorder]) -> None:
    client, app, _ = listening
    async with client.listen(tools=True, prompts=True) as changes:
        assert changes.agreed == {"toolsListChanged": True}  # no prompts here
        app.tool(name="late", description="Registered while the client listens")(lambda: "late")
        method, params = await next_change(changes)
        assert method == "notifications/tools/list_changed"
        assert params["_meta"]["io.modelcontextprotocol/subscriptionId"] == changes.id
        app.subscriptions.close_all()
        assert [m async for m in changes] == []  # the server ended it: iteration ends
        assert changes.ended_by_server
    assert len(app.subscriptions) == 0


async def test_leaving_the_block_ends_the_subscription(listening: tuple[Client, Server, Recorder]) -> None:
    client, app, _ = listening
    async with client.listen(tools=True) as changes:
        assert len(app.subscriptions) == 1
    await eventually(lambda: len(app.subscriptions) == 0, "the subscription to end")
    assert not changes.ended_by_server


async def test_a_refused_subscription_raises_the_servers_error() -> None:
    async with connect_memory(build(), versions=["2026-07-28"]) as client:
        with pytest.raises(MissingClientCapability):
            async with client.listen(task_ids=["t-1"]):
                pass


async def test_a_task_is_heard_moving_without_polling() -> None:
    class Yes:
        modes = frozenset({"form"})

        async def elicit(self, request: ElicitationRequest) -> ElicitAnswer:
            return ElicitAnswer("accept", {"ok": True})

    app = build()
    async with (
        connect_memory(app, versions=["2026-07-28"], tasks=True, answerer=Yes()) as caller,
        connect_memory(app, versions=["2026-07-28"], tasks=True) as watcher,
    ):
        call = asyncio.ensure_future(caller.call_tool("approve"))
        await eventually(lambda: len(app.tasks), "the task")
        (task_id,) = app.tasks._tasks
        async with watcher.listen(task_ids=[task_id]) as moves:
            assert moves.agreed == {"taskIds": [task_id]}
            seen = []
            while not seen or seen[-1] != "completed":
                method, params = await next_change(moves)
                assert method == "notifications/tasks" and params["taskId"] == task_id
                seen.append(params["status"])
        assert (await call)["content"][0]["text"] == "approved: accept"
    assert seen[-1] == "completed" and set(seen[:-1]) <= {"working", "input_required"}


async def test_listen_over_stdio_routes_by_subscription_id() -> None:
    """stdio carries every notification on one channel: the client hands this
    subscription's to it, by id, and cancels it on leaving."""
    recorder = Recorder()
    async with connect_stdio(
        [sys.executable, "-m", "mcp_elicit", "serve", str(WAITING_SERVER)],
        versions=["2026-07-28"],
        trace=recorder,
    ) as client:
        async with client.listen(tools=True) as changes:
            assert changes.agreed == {"toolsListChanged": True}
            grown = await client.call_tool("grow", {"name": "sprout"})
            assert grown["content"][0]["text"] == "grew sprout"
            method, params = await next_change(changes)
            assert method == "notifications/tools/list_changed"
            assert params["_meta"]["io.modelcontextprotocol/subscriptionId"] == changes.id
        assert [t["name"] for t in await client.list_tools()][-1] == "sprout"
    cancels = [m for m in recorder.sent if m.get("method") == "notifications/cancelled"]
    assert [c["params"]["requestId"] for c in cancels] == [changes.id]
    assert recorder.check(WireChecker.load("2026-07-28")) == len(recorder.sent)


async def test_a_2025_11_25_server_has_no_listen() -> None:
    async with connect_memory(build(), versions=["2025-11-25"]) as client:
        with pytest.raises(MethodNotFound, match="exists from 2026-07-28 on"):
            client.listen(tools=True)


@pytest.mark.parametrize("stamped", [True, False], ids=["stamped", "unstamped"])
async def test_a_stdio_subscription_ends_at_the_servers_notice_alone(stamped: bool) -> None:
    """Over stdio a server tears a subscription down with ``notifications/cancelled`` naming
    the listen request (the Cancellation pattern's MUST); the answer after it is only a
    SHOULD. The request id names the subscription, with or without the subscription id in
    ``_meta`` (the spec's own example has none): the iteration ends at the notice, as ended
    by the server, and leaving sends no cancel of its own. Before: an unstamped notice
    went to no subscription, and with no answer after it the iteration waited for ever."""
    exchanges: list[FakeExchange] = []

    def serve(message: dict[str, Any], headers: dict[str, str]) -> list[Any]:
        return [discover(message)] if message["method"] == "server/discover" else []

    class Stdio(FakeTransport):
        async def exchange(self, message: Mapping[str, Any], headers: Mapping[str, str]) -> FakeExchange:
            exchange = await super().exchange(message, headers)
            if message["method"] == "subscriptions/listen":
                exchange.hang = True  # stdio: the answer would come on the shared channel
                exchanges.append(exchange)
                rid = message["id"]
                meta = {"_meta": {"io.modelcontextprotocol/subscriptionId": rid}}
                ack = {"notifications": {"toolsListChanged": True}, **meta}
                notice = {"requestId": rid, "reason": "stopping", **(meta if stamped else {})}
                for method, params in (
                    ("notifications/subscriptions/acknowledged", ack),
                    ("notifications/cancelled", notice),
                ):
                    asyncio.get_running_loop().call_soon(
                        asyncio.ensure_future,
                        self.push({"jsonrpc": "2.0", "method": method, "params": params}),
                    )
            return exchange

    transport = Stdio(serve, http=False)
    async with Client(transport, versions=["2026-07-28"]) as client:
        async with client.listen(tools=True) as changes:
            heard = await asyncio.wait_for(_rest(changes), 5)
            assert heard == [] and changes.ended_by_server
    assert [m for m, _ in transport.sent if m.get("method") == "notifications/cancelled"] == []


async def _rest(changes: Subscription) -> list[tuple[str, dict[str, Any]]]:
    return [change async for change in changes]
