"""The relay on a real Redis: servers sharing one, started and stopped together, stop
whenever they are stopped (their relays subscribing, or listening), leaving no task
running and no connection open; a task that ends while Redis is down reaches the other
instances once it is back; an outage is said once; a URL step completed on one instance
reaches the session waiting on it on another."""

from __future__ import annotations

import asyncio
import logging
import uuid
from pathlib import Path

import orjson
import pytest

from mcp_elicit import Context, KeyRing, Principal, Server
from mcp_elicit.stores import RedisStore

from support.memory import MemoryClient, SessionClient, instances
from support.redis import redis_available, redis_server, started_again
from support.server_sessions import build as build_sessions
from support.tasks import WITH_TASKS, settle
from support.waiting import eventually, hang_guard
from support.wire import WireChecker

pytestmark = pytest.mark.anyio

#: Loop turns let pass between the start and the stop: the relays are still connecting and
#: subscribing at first, then listening. Each stop is cancelled at another point.
TURNS = range(30)


@pytest.mark.parametrize("count", [1, 4])
async def test_servers_sharing_a_redis_stop_together_at_any_point_of_their_start(
    redis_url: str, count: int
) -> None:
    # redis-py writes a command with asyncio.wait_for, which on Python 3.11 returns a
    # write that ends in the same turn as a cancellation and drops the cancellation: a
    # relay stopped while it subscribed went on subscribing, and its stop waited for ever.
    from redis.asyncio import Redis

    admin = Redis.from_url(redis_url)
    try:
        connected = len(await admin.client_list())
        running = asyncio.all_tasks()

        async def closed() -> bool:  # Redis drops a closed connection a moment later
            return len(await admin.client_list()) == connected

        for turns in TURNS:
            store = f"{redis_url}?prefix=test-{uuid.uuid4().hex[:12]}"
            servers = [Server("s", store=store) for _ in range(count)]
            await asyncio.gather(*(server.start() for server in servers))
            for _ in range(turns):
                await asyncio.sleep(0)
            async with hang_guard(f"stopped after {turns} turns", 10.0):  # fails a stop that hangs
                await asyncio.gather(*(server.stop() for server in servers))
            assert asyncio.all_tasks() == running, f"stopped after {turns} turns: a task is left"
            await eventually(closed, f"stopped after {turns} turns: every connection is closed")
    finally:
        await admin.aclose()


@pytest.mark.skipif(not redis_available(), reason="redis-server is not installed")
async def test_a_task_that_ends_while_redis_is_down_is_seen_ended_elsewhere_once_it_is_back(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """Redis (with its data kept, as with persistence) goes down while a task runs on
    instance a and the task ends meanwhile: a could not write its end to the store. Once
    Redis is back, instance b answers for the task with its end (the result), not with the
    state Redis kept from before, which it would give until that state's lease ran out and
    then call the task unknown: a client following it through b would never get the result."""

    def worker(gate: asyncio.Event) -> Server:
        app = Server("tasks", state_keys=KeyRing([bytes(range(32))]))

        @app.tool(task="optional")
        async def job(ctx: Context) -> str:
            await ctx.start_task("working")
            await gate.wait()
            return "done"

        return app

    gate = asyncio.Event()
    a, b = worker(gate), worker(gate)
    with redis_server(tmp_path) as redis:
        store = RedisStore(redis.url)
        try:
            async with instances(a, b, store=store):
                here, there = (
                    MemoryClient(s, capabilities=WITH_TASKS, principal=Principal("ann")) for s in (a, b)
                )
                task_id = (await here.result("tools/call", {"name": "job"}))["taskId"]
                assert (await there.result("tasks/get", {"taskId": task_id}))["status"] == "working"
                assert redis.command("SAVE") == b"+OK"  # the working state, kept
                redis.proc.kill()
                redis.proc.wait()
                gate.set()
                done = await settle(here, task_id, "completed")  # on a, which holds it

                def write_failed() -> bool:
                    return any(
                        r.name == "mcp_elicit.server"
                        and "state" in r.getMessage()
                        and "could not be" in r.getMessage()
                        for r in caplog.records
                    )

                await eventually(write_failed, "instance a failing to write the task's end")
                with started_again(redis):
                    seen: dict[str, object] = {}

                    async def ended_there() -> bool:
                        seen.update(await there.result("tasks/get", {"taskId": task_id}))
                        return seen["status"] == "completed"

                    # the lease of the state Redis kept is 3 minutes: far past this bound
                    await eventually(ended_there, "instance b answering with the task's end")
                    assert seen["result"] == done["result"]
        finally:
            await store.close()


@pytest.mark.skipif(not redis_available(), reason="redis-server is not installed")
async def test_the_relay_says_an_outage_once_not_once_per_message_or_request(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """While Redis is down, every resource update an instance publishes and every tasks/get
    for another instance's task fails: the log says each once (which store, why), then
    that it works again once Redis is back, not one line per message or request."""
    caplog.set_level(logging.INFO, logger="mcp_elicit.server")

    def said(text: str) -> list[str]:
        return [r.getMessage() for r in caplog.records if text in r.getMessage()]

    def worker(gate: asyncio.Event) -> Server:
        app = Server("tasks", state_keys=KeyRing([bytes(range(32))]))

        @app.tool(task="optional")
        async def job(ctx: Context) -> str:
            await ctx.start_task("working")
            await gate.wait()
            return "done"

        return app

    gate = asyncio.Event()
    a, b = worker(gate), worker(gate)
    with redis_server(tmp_path) as redis:
        store = RedisStore(redis.url)
        try:
            async with instances(a, b, store=store):
                here, there = (
                    MemoryClient(s, capabilities=WITH_TASKS, principal=Principal("ann")) for s in (a, b)
                )
                task_id = (await here.result("tools/call", {"name": "job"}))["taskId"]
                assert redis.command("SAVE") == b"+OK"  # Redis comes back with the task's state
                redis.proc.kill()
                redis.proc.wait()
                for _ in range(5):
                    a.notify_resource_updated("test://board")
                    failed = await there.request("tasks/get", {"taskId": task_id})
                    assert failed["error"]["code"] == -32603, failed
                await a.relay.written()  # the messages tried
                with started_again(redis):
                    a.notify_resource_updated("test://board")
                    assert (await there.result("tasks/get", {"taskId": task_id}))["taskId"] == task_id

                    await eventually(lambda: said("are sent through the store"), "the messages sent again")
                    lines = {kind: said(kind) for kind in KINDS}
                gate.set()
        finally:
            await store.close()
    where = f"redis://127.0.0.1:{redis.port}/0"
    for kind, found in lines.items():
        assert len(found) == 1 and where in found[0], (kind, found)  # once each, naming the store
    assert "is Redis running at that address?" in lines["could not be read"][0]
    assert "after 5 failed calls" in lines["are read from the store"][0]


KINDS = ("could not be sent", "could not be read", "are sent through the store", "are read from the store")


async def test_a_step_completed_elsewhere_reaches_the_session_waiting_on_it(
    redis_url: str, wire_2025: WireChecker
) -> None:
    """A 2025-11-25 session lives on the instance that opened it; the page's backend that
    completes its URL step (``complete_elicitation``) may call another instance, or run in a
    process that never serves (same server, same keys, same store). The session waiting on
    the step hears ``notifications/elicitation/complete`` either way; another principal's
    session waiting on the same id does not."""
    keys = KeyRing([bytes(range(32))])
    store_url = f"{redis_url}?prefix=test-{uuid.uuid4().hex[:12]}"
    a, b = build_sessions(state_keys=keys), build_sessions(state_keys=keys)
    webhook = build_sessions(state_keys=keys, store=store_url)  # never started
    url_caps = {"elicitation": {"url": {}}}
    store = RedisStore(store_url)
    try:
        async with instances(a, b, store=store):
            alice, bob = (
                SessionClient(a, capabilities=url_caps, principal=Principal(who), checker=wire_2025)
                for who in ("alice", "bob")
            )
            for completing in (b, webhook):
                for client in (alice, bob):
                    if client.session is None:
                        await client.open()
                    assert (await client.request("tools/call", {"name": "connect"}))["error"][
                        "code"
                    ] == -32042
                assert not completing.complete_elicitation("e-1", "alice"), "no session there waits on it"
                async with hang_guard("the completion reaching the session on the other instance"):
                    pushed = orjson.loads(await alice.session.next_pushed(None))
                wire_2025.notification(pushed)
                assert pushed["method"] == "notifications/elicitation/complete", pushed
                assert pushed["params"] == {"elicitationId": "e-1"}
                assert a.complete_elicitation("e-1", "bob")  # bob's still waited: alice's completion was hers
                assert orjson.loads(await bob.session.next_pushed(0.1))["params"] == {"elicitationId": "e-1"}
    finally:
        await webhook.stop()
        await store.close()
