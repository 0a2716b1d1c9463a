"""Tasks on the server (the ``io.modelcontextprotocol/tasks`` extension), over a client in memory: several instances sharing a store. Any
instance answers for a task, listeners elsewhere hear it, and a task's TTL, results and
cancellation hold on every instance, also when one of them dies or stops."""

from __future__ import annotations

import asyncio
from collections import Counter
from typing import Any

import pytest

from mcp_elicit import Context, Principal, Server
from mcp_elicit.sealing import KeyRing
from mcp_elicit.stores.memory import MemoryStore

from support.memory import MemoryClient, accept, instances
from support.tasks import WITH_TASKS, build, settle, status
from support.waiting import eventually
from support.wire import WireChecker

pytestmark = pytest.mark.anyio


def ann_on(wire: WireChecker, *servers: Server) -> list[MemoryClient]:
    """A client of ann's, declaring the tasks extension, on each of ``servers``."""
    ann = Principal("ann")
    return [MemoryClient(server, capabilities=WITH_TASKS, principal=ann, checker=wire) for server in servers]


async def deploy(client: MemoryClient) -> str:
    """Start the ``deploy`` tool as a task through ``client``; its id."""
    return str(
        (await client.result("tools/call", {"name": "deploy", "arguments": {"service": "api"}}))["taskId"]
    )


async def test_any_instance_sharing_the_store_answers_for_a_task(wire: WireChecker) -> None:
    """The task runs where it was created; tasks/get, tasks/update and tasks/cancel work
    through any instance sharing the store, for the task's owner only."""
    a, b = build(), build()  # one server: the same name and keys
    async with instances(a, b, store=MemoryStore()) as store:
        here, there = ann_on(wire, a, b)
        task_id = await deploy(here)
        assert len(b.tasks) == 0  # the handler runs on a only
        assert (await status(there, task_id))["taskId"] == task_id  # known there at once
        parked = await settle(there, task_id, "input_required")
        assert parked["inputRequests"]["go"]["params"]["message"] == "Deploy api now?"
        ack = await there.result(
            "tasks/update", {"taskId": task_id, "inputResponses": {"go": accept(go=True)("go", {})}}
        )
        assert set(ack) <= {"resultType", "_meta"}
        await settle(there, task_id, "working")
        a.gate.set()  # type: ignore[attr-defined]
        done = await settle(there, task_id, "completed")
        assert done["result"]["content"] == [{"type": "text", "text": "api: deployed (task)"}]

        bob = MemoryClient(b, capabilities=WITH_TASKS, principal=Principal("bob"), checker=wire)
        for method, params in (
            ("tasks/get", {"taskId": task_id}),
            ("tasks/cancel", {"taskId": task_id}),
        ):
            error = (await bob.request(method, params))["error"]
            assert error["code"] == -32602 and "not yours" in error["message"]

        other = (await here.result("tools/call", {"name": "deploy", "arguments": {"service": "db"}}))[
            "taskId"
        ]
        await settle(there, other, "input_required")
        await there.result("tasks/cancel", {"taskId": other})
        assert (await settle(here, other, "cancelled"))["status"] == "cancelled"
        unknown = (await there.request("tasks/get", {"taskId": "no-such-task"}))["error"]
        assert unknown["code"] == -32602
        # nothing of the task lies in the store in the clear
        sealed = await store.get("tasks", task_id)
        assert sealed is not None and b"deployed" not in sealed and b"Deploy api" not in sealed


async def test_another_instance_delivers_an_answer_as_large_as_a_tool_call_takes(wire: WireChecker) -> None:
    """A tasks/update within the inputResponses limits reaches the task through any
    instance (it was "Internal error" past what a requestState carries)."""
    a, b = build(), build()
    async with instances(a, b, store=MemoryStore()):
        here, there = ann_on(wire, a, b)
        task_id = await deploy(here)
        await settle(there, task_id, "input_required")
        large = {"go": {"action": "decline", "_meta": {"note": "x" * 250_000}}}
        ack = await there.result("tasks/update", {"taskId": task_id, "inputResponses": large})
        assert set(ack) <= {"resultType", "_meta"}
        done = await settle(there, task_id, "completed")
        assert done["result"]["content"][0]["text"] == "api: not deployed (decline)"


async def test_a_listener_on_another_instance_hears_the_task(wire: WireChecker) -> None:
    """subscriptions/listen naming a task held by another instance agrees to it, starts
    with its state, and hears each change of it."""
    a, b = build(), build()
    async with instances(a, b, store=MemoryStore()):
        here, there = ann_on(wire, a, b)
        task_id = await deploy(here)
        message = {
            "jsonrpc": "2.0",
            "id": 50,
            "method": "subscriptions/listen",
            "params": {"notifications": {"taskIds": [task_id]}, "_meta": there.meta()},
        }
        listening = asyncio.ensure_future(there.raw(message))
        try:
            await eventually(
                lambda: len(there.notifications) >= 2, "the acknowledgement and the task's state"
            )
            ack, first = there.notifications[:2]
            assert ack["params"]["notifications"] == {"taskIds": [task_id]}
            assert first["method"] == "notifications/tasks" and first["params"]["taskId"] == task_id

            def statuses() -> list[str]:
                return [
                    n["params"]["status"] for n in there.notifications if n["method"] == "notifications/tasks"
                ]

            await eventually(lambda: "input_required" in statuses(), "the question, heard on b")
            await here.result(
                "tasks/update", {"taskId": task_id, "inputResponses": {"go": accept(go=True)("go", {})}}
            )
            a.gate.set()  # type: ignore[attr-defined]
            await eventually(lambda: statuses()[-1:] == ["completed"], "the end, heard on b")
            done = [n for n in there.notifications if n["method"] == "notifications/tasks"][-1]["params"]
            assert done["result"]["content"] == [{"type": "text", "text": "api: deployed (task)"}]
            bob = MemoryClient(b, capabilities=WITH_TASKS, principal=Principal("bob"), checker=wire)
            bobs = {**message, "id": 51, "params": {**message["params"], "_meta": bob.meta()}}
            refused = asyncio.ensure_future(bob.raw(bobs))
            await eventually(lambda: len(bob.notifications) >= 1, "bob's acknowledgement")
            assert bob.notifications[0]["params"]["notifications"] == {}  # not his task: not agreed
            refused.cancel()
        finally:
            listening.cancel()


async def test_a_task_past_its_ttl_is_unknown_on_every_instance(wire: WireChecker) -> None:
    """With a store, an ended task is forgotten when its ttl has passed, on its own
    instance and on the others alike: the mirror is no longer answered from."""
    now = [1_000_000.0]
    a, b = build(clock=lambda: now[0]), build(clock=lambda: now[0])
    a.tasks.ttl_ms = 60_000
    async with instances(a, b, store=MemoryStore()):
        ann = Principal("ann")
        here = MemoryClient(a, capabilities=WITH_TASKS, principal=ann, checker=wire)
        there = MemoryClient(b, capabilities=WITH_TASKS, principal=ann, checker=wire)
        fails = {"name": "broken", "arguments": {"how": "tool"}}
        task_id = (await here.result("tools/call", fails))["taskId"]
        await settle(there, task_id, "completed")  # the end is in the mirror
        now[0] += 59.9
        for client in (here, there):
            assert (await status(client, task_id))["status"] == "completed"
        assert set(await b.relay.visible(frozenset({task_id}), "ann")) == {task_id}
        now[0] += 0.2
        for client in (here, there):
            error = (await client.request("tasks/get", {"taskId": task_id}))["error"]
            assert error["code"] == -32602 and "expired" in error["message"]
        assert await b.relay.visible(frozenset({task_id}), "ann") == {}  # nor agreed to by a listen


class CountingStore(MemoryStore):
    """A memory store that counts the writes of each task's mirror."""

    def __init__(self) -> None:
        super().__init__()
        self.writes: Counter[str] = Counter()

    async def put(self, namespace: str, key: str, value: bytes, *, ttl: float | None = None) -> None:
        if namespace == "tasks":
            self.writes[key] += 1
        await super().put(namespace, key, value, ttl=ttl)


async def test_a_task_that_runs_long_unchanged_stays_known_on_every_instance(wire: WireChecker) -> None:
    """A task parked for minutes, longer than its ttl and than its mirror's lease, stays
    known on every instance: its own instance rewrites the mirror of its running tasks
    once a period, however often they are polled, and not of the ended ones; and nobody
    listening hears of it, since nothing changed."""
    now = [1_000_000.0]
    a, b = build(clock=lambda: now[0]), build(clock=lambda: now[0])
    a.tasks.ttl_ms = 60_000
    store = CountingStore()
    async with instances(a, b, store=store):
        here, there = ann_on(wire, a, b)
        parked = (await here.result("tools/call", {"name": "deploy", "arguments": {"service": "api"}}))[
            "taskId"
        ]
        await settle(there, parked, "input_required")
        ended = (await here.result("tools/call", {"name": "broken", "arguments": {"how": "tool"}}))["taskId"]
        await settle(there, ended, "completed")
        message = {
            "jsonrpc": "2.0",
            "id": 55,
            "method": "subscriptions/listen",
            "params": {"notifications": {"taskIds": [parked]}, "_meta": there.meta()},
        }
        listening = asyncio.ensure_future(there.raw(message))
        try:
            await eventually(lambda: len(there.notifications) >= 2, "the acknowledgement and the state")
            heard, ended_writes = len(there.notifications), store.writes[ended]
            for minute in range(1, 4):  # past the 3 minutes a state is kept unwritten
                written = store.writes[parked]
                now[0] += 61
                await eventually(
                    lambda written=written: store.writes[parked] > written, f"the mirror renewed ({minute})"
                )
                for _ in range(5):  # polls read the mirror, never write it
                    assert (await status(there, parked))["status"] == "input_required"
                assert store.writes[parked] == written + 1
            assert (await status(here, parked))["status"] == "input_required"
            assert store.writes[ended] == ended_writes
            await asyncio.sleep(0.05)  # what the renewals might have told has arrived
            assert len(there.notifications) == heard
        finally:
            listening.cancel()


async def test_the_running_tasks_of_an_instance_that_died_are_unknown_elsewhere(wire: WireChecker) -> None:
    """An instance stops renewing its running tasks' states (it died, and its handlers
    with it): 3 minutes later they are unknown on the other instances, even without a
    ttl, instead of shown working for days."""
    now = [1_000_000.0]
    a, b = build(clock=lambda: now[0], task_ttl=None), build(clock=lambda: now[0], task_ttl=None)
    async with instances(a, b, store=MemoryStore()):
        here, there = ann_on(wire, a, b)
        task_id = await deploy(here)
        await settle(there, task_id, "input_required")
        await a.relay.stop()  # a no longer writes to the store, as if it had died
        now[0] += 179
        assert (await status(there, task_id))["status"] == "input_required"
        now[0] += 2
        error = (await there.request("tasks/get", {"taskId": task_id}))["error"]
        assert error["code"] == -32602


@pytest.mark.parametrize("size", [100_000, 400_000])
async def test_a_large_result_reaches_the_other_instances(wire: WireChecker, size: int) -> None:
    """A result over a requestState's 64 KiB is mirrored all the same: tasks/get on
    another instance gets it whole, and a listener there hears the end, whether its sealed
    state fits in a message (100 kB) or is announced and read from the mirror (400 kB)."""

    def reporter() -> Server:
        app = Server("tasks", state_keys=KeyRing([b"t" * 16 + b"k" * 16]))
        app.gate = asyncio.Event()  # type: ignore[attr-defined]

        @app.tool(task="optional")
        async def report(ctx: Context) -> str:
            """A long report, made as a task."""
            await ctx.start_task("writing")
            await app.gate.wait()  # type: ignore[attr-defined]
            return "".join(f"line {n}\n" for n in range(size // 6))[:size]

        return app

    a, b = reporter(), reporter()
    async with instances(a, b, store=MemoryStore()):
        here, there = ann_on(wire, a, b)
        task_id = (await here.result("tools/call", {"name": "report", "arguments": {}}))["taskId"]
        message = {
            "jsonrpc": "2.0",
            "id": 60,
            "method": "subscriptions/listen",
            "params": {"notifications": {"taskIds": [task_id]}, "_meta": there.meta()},
        }
        listening = asyncio.ensure_future(there.raw(message))
        try:
            await eventually(lambda: len(there.notifications) >= 2, "the acknowledgement and the state")
            a.gate.set()  # type: ignore[attr-defined]
            done = await settle(there, task_id, "completed")
            text = done["result"]["content"][0]["text"]
            assert len(text) == size and text.startswith("line 0\nline 1\n")

            def ended() -> list[dict[str, Any]]:
                return [
                    n["params"]
                    for n in there.notifications
                    if n["method"] == "notifications/tasks" and n["params"]["status"] == "completed"
                ]

            await eventually(lambda: bool(ended()), "the end, heard on b")
            assert ended()[-1]["result"]["content"][0]["text"] == text
        finally:
            listening.cancel()


async def test_a_request_cancelled_as_its_task_starts_cancels_the_task(wire: WireChecker) -> None:
    """The request that makes a task is cancelled (its client went away) just as the
    handler calls start_task, before the task's id was answered: nobody can follow the
    task, so it ends cancelled and is forgotten after its ttl, not left working forever."""
    now = [1_000_000.0]
    app = Server("gone", clock=lambda: now[0])
    app.tasks.ttl_ms = 60_000
    request: list[asyncio.Future[Any]] = []
    stopped = asyncio.Event()

    @app.tool(task="optional")
    async def orphan(ctx: Context) -> str:
        await ctx.start_task()
        request[0].cancel()  # the client goes away before the CreateTaskResult reaches it
        try:
            await asyncio.Event().wait()
        finally:
            stopped.set()
        return "unreachable"

    client = MemoryClient(app, capabilities=WITH_TASKS, checker=wire)
    request.append(asyncio.ensure_future(client.result("tools/call", {"name": "orphan", "arguments": {}})))
    with pytest.raises(asyncio.CancelledError):
        await request[0]
    await asyncio.wait_for(stopped.wait(), 5)  # the handler was stopped
    (running,) = app.tasks._tasks.values()
    assert running.record.status == "cancelled" and running.record.ended is not None
    now[0] += 60.1
    assert (await client.request("tasks/get", {"taskId": running.record.task_id}))["error"]["code"] == -32602
    assert len(app.tasks) == 0


class LaggingStore(MemoryStore):
    """A memory store whose task mirror lags as a remote one can: with ``lag="read"`` a
    read returns what it read only once ``go`` is set, with ``lag="write"`` a write lands
    only then."""

    def __init__(self, lag: str) -> None:
        super().__init__()
        self.lag = lag
        self.go = asyncio.Event()
        self.held = asyncio.Event()  # a read or write of the mirror is being held

    async def get(self, namespace: str, key: str) -> bytes | None:
        found = await super().get(namespace, key)
        if namespace == "tasks" and self.lag == "read":
            self.held.set()
            await self.go.wait()
        return found

    async def put(self, namespace: str, key: str, value: bytes, *, ttl: float | None = None) -> None:
        if namespace == "tasks" and self.lag == "write" and not self.go.is_set():
            self.held.set()
            await self.go.wait()
        await super().put(namespace, key, value, ttl=ttl)


@pytest.mark.parametrize("lag", ["read", "write"])
async def test_a_listener_on_another_instance_hears_the_end_that_came_while_it_started(
    wire: WireChecker, lag: str
) -> None:
    """A task ends on one instance while a listen naming it starts on another, with the
    mirror slow to read (the state read is older than the end) or to write (the end is
    not in the mirror yet): the listener still hears the end."""

    def worker() -> Server:
        app = Server("tasks", state_keys=KeyRing([b"t" * 16 + b"k" * 16]))
        app.gate = asyncio.Event()  # type: ignore[attr-defined]

        @app.tool(task="optional")
        async def job(ctx: Context) -> str:
            """Works until released."""
            await ctx.start_task("working")
            await app.gate.wait()  # type: ignore[attr-defined]
            return "done"

        return app

    a, b = worker(), worker()
    store = LaggingStore(lag)
    async with instances(a, b, store=store):
        here, there = ann_on(wire, a, b)
        store.go.set()  # the creation reaches the mirror at once
        task_id = (await here.result("tools/call", {"name": "job", "arguments": {}}))["taskId"]
        store.go.clear()
        message = {
            "jsonrpc": "2.0",
            "id": 70,
            "method": "subscriptions/listen",
            "params": {"notifications": {"taskIds": [task_id]}, "_meta": there.meta()},
        }
        if lag == "write":  # the task ends; its end is told, but not yet in the mirror
            a.gate.set()  # type: ignore[attr-defined]
            await asyncio.wait_for(store.held.wait(), 5)
            await asyncio.sleep(0.05)  # the other instance heard the end (no listener yet)
            listening = asyncio.ensure_future(there.raw(message))
            await eventually(lambda: len(there.notifications) >= 2, "the acknowledgement and a state")
        else:  # the listener read the mirror; the task ends before it is registered
            listening = asyncio.ensure_future(there.raw(message))
            await asyncio.wait_for(store.held.wait(), 5)
            a.gate.set()  # type: ignore[attr-defined]
            await eventually(lambda: a.tasks._tasks[task_id].record.terminal, "the end on a")
            await asyncio.sleep(0.05)  # the other instance heard the end
        store.go.set()
        try:

            def statuses() -> list[str]:
                return [
                    n["params"]["status"] for n in there.notifications if n["method"] == "notifications/tasks"
                ]

            await eventually(lambda: statuses()[-1:] == ["completed"], "the end, heard on b")
        finally:
            listening.cancel()


class SlowStore(MemoryStore):
    """A memory store whose writes of the task mirror take a while, as a remote one's do."""

    async def put(self, namespace: str, key: str, value: bytes, *, ttl: float | None = None) -> None:
        if namespace == "tasks":
            await asyncio.sleep(0.05)
        await super().put(namespace, key, value, ttl=ttl)


@pytest.mark.parametrize("how", ["running", "just ended"])
async def test_an_instance_that_stops_leaves_its_tasks_last_state_to_the_others(
    wire: WireChecker, how: str
) -> None:
    """The last state of a task (cancelled by the graceful stop, or ended just before it)
    reaches the store before the instance stops writing to it: the other instances read
    that, not an older state until its lease runs out."""
    a, b = build(), build()
    store = SlowStore()
    async with instances(b, store=store):
        a.configure_url_mode(store=store)
        await a.start()
        assert a.relay.listening is not None
        await asyncio.wait_for(a.relay.listening.wait(), 5)
        here, there = ann_on(wire, a, b)
        task_id = await deploy(here)
        await settle(there, task_id, "input_required")
        if how == "just ended":
            await here.result("tasks/cancel", {"taskId": task_id})  # its own instance: at once
        await a.stop()
        ended = await status(there, task_id)
        assert ended["status"] == "cancelled", ended
        shown = "The server is shutting down" if how == "running" else "Cancelled at the client's request"
        assert ended["statusMessage"] == shown
