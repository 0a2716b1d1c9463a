"""A handler's own URL step asked in a task (2026-07-28, the tasks extension): the
accepted step waits in place until ``complete_elicitation`` says its page is done, and
another principal's completion does not end the wait."""

from __future__ import annotations

import anyio
import pytest

from mcp_elicit import Context, KeyRing, Principal, Server
from mcp_elicit.stores import MemoryStore

from support.memory import MemoryClient
from support.tasks import TASKS, settle, status
from support.waiting import eventually
from support.wire import WireChecker

pytestmark = pytest.mark.anyio


async def test_in_a_task_the_accepted_step_waits_in_place_until_its_page_is_done(wire: WireChecker) -> None:
    store, paid = MemoryStore(), set[str]()
    app = Server("shop", state_keys=KeyRing([b"t" * 16 + b"k" * 16]), store=store)

    @app.tool(task="optional")
    async def pay(ctx: Context) -> str:
        await ctx.start_task("paying")
        answer = await ctx.require_url("Pay for order 1", "https://pay.example.com/1", elicitation_id="pay-1")
        return f"{answer.action}: {'paid' if 'ann' in paid else 'not paid yet'}"

    caps = {"elicitation": {"url": {}}, "extensions": {TASKS: {}}}
    client = MemoryClient(app, capabilities=caps, principal=Principal("ann"), checker=wire)
    task_id = (await client.result("tools/call", {"name": "pay"}))["taskId"]
    parked = await settle(client, task_id, "input_required")
    ((key, step),) = parked["inputRequests"].items()
    assert step["params"]["mode"] == "url"
    await client.result("tasks/update", {"taskId": task_id, "inputResponses": {key: {"action": "accept"}}})
    await settle(client, task_id, "working")
    app.complete_elicitation("pay-1", "bob")  # another principal's step of the same id
    await eventually(lambda: app.url_mode.steps.marker("pay-1", "bob"), "bob's completion recorded")
    await anyio.sleep(app.url_mode.steps.recheck + 0.5)  # past the wait's next look at the store
    assert (await status(client, task_id))["status"] == "working", "bob's completion released ann"
    paid.add("ann")
    app.complete_elicitation("pay-1", Principal("ann"))
    done = await settle(client, task_id, "completed")
    assert done["result"]["content"] == [{"type": "text", "text": "accept: paid"}]
    await store.close()
