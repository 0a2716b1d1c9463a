"""The relay while the store is down: a task's change the store did not take is written
again once it is back, and told then to the listeners of other instances, which missed
the message sent meanwhile; its state is sealed once, at the change, not again at every
look of the writer while the store stays down."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from mcp_elicit import Context, KeyRing, Principal, Server
from mcp_elicit.sealing import Binding, StateSealer
from mcp_elicit.stores.memory import MemoryStore

from support.memory import MemoryClient, instances
from support.tasks import WITH_TASKS
from support.waiting import eventually
from support.wire import WireChecker

pytestmark = pytest.mark.anyio

TASKS = 20


class OutageStore(MemoryStore):
    """A memory store that, while ``down``, fails the writes of the task mirror and every
    message sent (as a Redis that cannot be reached does), while subscriptions made before
    stay open (the listening instance hears what is sent once it is back)."""

    def __init__(self) -> None:
        super().__init__()
        self.down = False
        self.failed_writes = 0

    async def put(self, namespace: str, key: str, value: bytes, *, ttl: float | None = None) -> None:
        if self.down and namespace == "tasks":
            self.failed_writes += 1
            raise ConnectionError("the store cannot be reached")
        await super().put(namespace, key, value, ttl=ttl)

    async def publish(self, channel: str, message: bytes) -> None:
        if self.down:
            raise ConnectionError("the store cannot be reached")
        await super().publish(channel, message)


def worker(gate: asyncio.Event) -> Server:
    app = Server("tasks", state_keys=KeyRing([bytes(range(32))]))

    @app.tool(task="optional")
    async def job(ctx: Context) -> str:
        """Works until released."""
        await ctx.start_task("working")
        await gate.wait()
        return "done"

    return app


async def test_a_listener_elsewhere_hears_the_end_that_came_while_the_store_was_down(
    wire: WireChecker,
) -> None:
    """A task ends on instance a while the store is down: neither its end's write nor a
    message telling it would get through. Once the store is back, a writes the end again, and
    the listener on b hears it (before, the write was retried untold, and b's listener
    heard "working" last, for ever)."""
    gate = asyncio.Event()
    a, b = worker(gate), worker(gate)
    store = OutageStore()
    async with instances(a, b, store=store):
        ann = Principal("ann")
        here, there = (MemoryClient(s, capabilities=WITH_TASKS, principal=ann, checker=wire) for s in (a, b))
        task_id = (await here.result("tools/call", {"name": "job", "arguments": {}}))["taskId"]
        message = {
            "jsonrpc": "2.0",
            "id": 80,
            "method": "subscriptions/listen",
            "params": {"notifications": {"taskIds": [task_id]}, "_meta": there.meta()},
        }
        listening = asyncio.ensure_future(there.raw(message))
        try:

            def statuses() -> list[str]:
                return [
                    n["params"]["status"] for n in there.notifications if n["method"] == "notifications/tasks"
                ]

            await eventually(lambda: statuses() == ["working"], "the task's state, heard on b")
            store.down = True
            gate.set()

            def ended() -> bool:
                record = a.tasks.record(task_id)
                return record is not None and record.terminal

            await eventually(ended, "the end on a")
            await eventually(lambda: store.failed_writes, "a failing to write the end")
            assert statuses() == ["working"]
            store.down = False
            await eventually(lambda: statuses()[-1:] == ["completed"], "the end, heard on b")
            done = [n for n in there.notifications if n["method"] == "notifications/tasks"][-1]["params"]
            assert done["result"]["content"] == [{"type": "text", "text": "done"}]
        finally:
            listening.cancel()


async def test_states_the_store_did_not_take_are_not_sealed_again_at_every_look(
    wire: WireChecker, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Many tasks end on instance a while the store is down. Each end is sealed once, at
    the change: the writer's looks while the store stays down (one a second) write the
    same sealed states again, never sealing each task's state anew every second (with
    thousands of tasks, that was the writer's whole CPU). Once the store is back, instance
    b answers for every task with its end."""
    sealed: list[str] = []
    seal = StateSealer.seal

    def counted(self: StateSealer, payload: bytes, binding: Binding, **kwargs: Any) -> str:
        if binding.method == "relay/mirror":
            sealed.append(binding.target)
        return seal(self, payload, binding, **kwargs)

    monkeypatch.setattr(StateSealer, "seal", counted)
    gate = asyncio.Event()
    a, b = worker(gate), worker(gate)
    store = OutageStore()
    async with instances(a, b, store=store):
        ann = Principal("ann")
        here, there = (MemoryClient(s, capabilities=WITH_TASKS, principal=ann, checker=wire) for s in (a, b))
        tasks = [
            (await here.result("tools/call", {"name": "job", "arguments": {}}))["taskId"]
            for _ in range(TASKS)
        ]
        await a.relay.written()
        store.down = True
        sealed.clear()
        gate.set()

        def ended() -> bool:
            return all((record := a.tasks.record(t)) is not None and record.terminal for t in tasks)

        await eventually(ended, "every task's end on a")
        assert sorted(sealed) == sorted(tasks), "each end is sealed once, as it comes"
        looks = store.failed_writes
        await eventually(lambda: store.failed_writes >= looks + 3, "three more looks of the writer")
        assert sorted(sealed) == sorted(tasks), "the writer sealed the states again while the store was down"
        store.down = False

        async def all_ended_there() -> bool:
            for task_id in tasks:
                if (await there.result("tasks/get", {"taskId": task_id}))["status"] != "completed":
                    return False
            return True

        await eventually(all_ended_there, "every task's end, on b")
