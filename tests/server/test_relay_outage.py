"""The relay while the store is down: a task's change the store did not take is written
again once it is back, and told then to the listeners of other instances, which missed
the message sent meanwhile."""

from __future__ import annotations

import asyncio

import pytest

from mcp_elicit import Context, KeyRing, Principal, Server
from mcp_elicit.stores.memory import MemoryStore

from support.memory import MemoryClient, instances
from support.tasks import WITH_TASKS
from support.waiting import eventually
from support.wire import WireChecker

pytestmark = pytest.mark.anyio


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
