"""A handler's own URL step not done within ``ask_timeout`` is asked once more
(2026-07-28): a completion made since the step was first asked still releases it, even
one that lands between the round's last look and the step being asked again (a webhook
racing the round), so the person who finished the page is not kept waiting for another."""

from __future__ import annotations

from typing import Any

import pytest

from mcp_elicit import Context, KeyRing, Principal, Server
from mcp_elicit.server.url_steps import StepCompletions
from mcp_elicit.stores import MemoryStore

from support.memory import MemoryClient
from support.wire import WireChecker

pytestmark = pytest.mark.anyio


class WebhookAfterLook(MemoryStore):
    """A memory store on which ann's step ``pay-1`` is completed right after the first
    read of its marker made once ``armed``: the page's backend answers just as the round
    that found the step not done moves on."""

    def __init__(self) -> None:
        super().__init__()
        self.armed = False

    async def get(self, namespace: str, key: str) -> bytes | None:
        value = await super().get(namespace, key)
        if self.armed and namespace == "step":
            self.armed = False
            await StepCompletions(self, ttl=600.0).complete("pay-1", "ann")
        return value


async def test_a_completion_as_the_step_is_asked_again_releases_it(wire: WireChecker) -> None:
    store, now = WebhookAfterLook(), [0.0]
    app = Server(
        "shop",
        state_keys=KeyRing([b"s" * 16 + b"k" * 16]),
        store=store,
        clock=lambda: now[0],
        ask_timeout=60.0,
        state_ttl=3600.0,
        flow_wait=0.0,
    )

    @app.tool()
    async def pay(ctx: Context) -> str:
        answer = await ctx.require_url("Pay for order 1", "https://pay.example.com/1", elicitation_id="pay-1")
        return f"pay: {answer.action}"

    client = MemoryClient(
        app, capabilities={"elicitation": {"url": {}}}, principal=Principal("ann"), checker=wire
    )

    async def retry(result: dict[str, Any]) -> dict[str, Any]:
        answers = {key: {"action": "accept"} for key in result.get("inputRequests", {})}
        params = {"name": "pay", "requestState": result["requestState"]}
        return await client.result("tools/call", {**params, "inputResponses": answers} if answers else params)

    first = await client.result("tools/call", {"name": "pay"})
    ((key, _),) = first["inputRequests"].items()
    now[0] = 61.0  # the person accepts once the step's time is over
    store.armed = True
    again = await retry(first)
    ((key_again, _),) = again["inputRequests"].items()
    assert key_again == f"{key}#2", again
    final = await retry(again)
    assert final.get("resultType") == "complete", "released: not held for another ask_timeout"
    assert final["content"] == [{"type": "text", "text": "pay: accept"}]
