"""A handler's own ``URLElicitationRequired`` on 2026-07-28, in memory (the server core
and handlers, every message checked against the schema): a prompt's and a resource's
accepted step is held until ``complete_elicitation`` as a tool's is, and the handler
then answers in the round that waited. A step is held only once every step of the raise
was accepted: one new in the raise is asked alone (the held one is not shown again), and
a step declined while another is held ends the request. A held step stays held whatever
its place in a later raise, and the record of the steps does not grow with every step
raised. The handler run again once a page is done asks its own questions afresh (one
under the key the step had is asked), and a step it raises again is asked anew. A step
raised in a task of an ``asyncio.TaskGroup`` is the handler's own raise, as at
2025-11-25. Real HTTP, the principal rules, the times and the clients:
``tests/transports/test_url_raise_held.py``."""

from __future__ import annotations

import asyncio
import itertools
from typing import Any

import pytest

from mcp_elicit import Context, Principal, Server
from mcp_elicit.errors import URLElicitationRequired
from mcp_elicit.stores import MemoryStore

from support.memory import MemoryClient, SessionClient
from support.waiting import eventually
from support.wire import WireChecker

pytestmark = pytest.mark.anyio

URL_CAPS = {"elicitation": {"url": {}}}
ALICE = Principal("alice")


class Orders:
    """The shop's record of payments, and how often a handler looked at it."""

    def __init__(self) -> None:
        self.paid: set[str] = set()
        self.looks = 0

    def unpaid(self, orders: list[str]) -> list[str]:
        self.looks += 1
        return [o for o in orders if o not in self.paid]


def required(orders: list[str]) -> URLElicitationRequired:
    steps = [
        {
            "mode": "url",
            "message": f"Pay order {o}",
            "url": f"https://pay.example/{o}",
            "elicitationId": f"pay-{o}",
        }
        for o in orders
    ]
    return URLElicitationRequired("Pay first", {"elicitations": steps})


def shop(orders: Orders, wanted: list[str], **options: Any) -> Server:
    app = Server("shop", store=MemoryStore(), **options)

    @app.tool()
    async def pay(ctx: Context) -> str:
        if unpaid := orders.unpaid(wanted):
            raise required(unpaid)
        return f"paid {', '.join(wanted)}"

    @app.prompt()
    async def receipt(ctx: Context) -> str:
        if unpaid := orders.unpaid(wanted):
            raise required(unpaid)
        return f"Thank you for paying {', '.join(wanted)}"

    @app.resource("shop://receipt")
    async def receipt_page(ctx: Context) -> str:
        if unpaid := orders.unpaid(wanted):
            raise required(unpaid)
        return f"Paid: {', '.join(wanted)}"

    return app


READS = [("prompts/get", {"name": "receipt"}), ("resources/read", {"uri": "shop://receipt"})]


@pytest.mark.parametrize(("method", "params"), READS, ids=["prompt", "resource"])
async def test_a_prompts_or_resources_step_is_held_then_it_answers(
    wire: WireChecker, method: str, params: dict[str, Any]
) -> None:
    orders = Orders()
    app = shop(orders, ["1"], flow_wait=30.0)
    client = MemoryClient(app, capabilities=URL_CAPS, principal=ALICE, checker=wire)
    first = await client.result(method, params)
    ((key, step),) = first["inputRequests"].items()
    assert step["params"]["mode"] == "url" and step["params"]["url"] == "https://pay.example/1"
    retry = {**params, "inputResponses": {key: {"action": "accept"}}, "requestState": first["requestState"]}
    held = asyncio.ensure_future(client.result(method, retry))
    await eventually(lambda: orders.looks >= 2, "the retry's handler found the order unpaid")
    assert not held.done(), held.result()
    orders.paid.add("1")
    app.complete_elicitation("pay-1", ALICE)
    final = await asyncio.wait_for(held, 20)
    assert final.get("resultType") == "complete", final
    if method == "prompts/get":
        assert final["messages"][0]["content"]["text"] == "Thank you for paying 1"
    else:
        assert final["contents"][0]["text"] == "Paid: 1"
    await app.url_mode.close()


@pytest.mark.parametrize("second", ["accept", "decline"])
async def test_a_step_new_in_the_raise_is_asked_alone_while_another_is_held(
    wire: WireChecker, second: str
) -> None:
    orders, wanted = Orders(), ["a"]
    app = shop(orders, wanted, flow_wait=0.05)
    client = MemoryClient(app, capabilities=URL_CAPS, principal=ALICE, checker=wire)
    first = await client.result("tools/call", {"name": "pay"})
    ((key_a, step_a),) = first["inputRequests"].items()
    wanted.append("b")  # the handler now raises a step for each order: a (accepted) and b (new)
    retry = {
        "name": "pay",
        "inputResponses": {key_a: {"action": "accept"}},
        "requestState": first["requestState"],
    }
    asking_b = await client.result("tools/call", retry)
    ((key_b, step_b),) = asking_b["inputRequests"].items()
    assert step_b["params"]["url"] == "https://pay.example/b", "b alone: a is not shown again"
    assert key_b != key_a
    retry = {
        "name": "pay",
        "inputResponses": {key_b: {"action": second}},
        "requestState": asking_b["requestState"],
    }
    answer = await client.result("tools/call", retry)
    if second == "decline":
        assert answer["isError"] is True
        assert answer["content"][0]["text"] == (
            "The user did not complete a step this request needs (decline): Pay order b (https://pay.example/b)"
        )
        await app.url_mode.close()
        return
    assert answer["resultType"] == "input_required" and "inputRequests" not in answer, "both held"
    for order in ("a", "b"):
        orders.paid.add(order)
        app.complete_elicitation(f"pay-{order}", ALICE)
    for _ in range(200):  # state-only rounds until the pages are seen done (a hang guard)
        if answer.get("resultType") != "input_required":
            break
        assert "inputRequests" not in answer, answer
        answer = await client.result("tools/call", {"name": "pay", "requestState": answer["requestState"]})
    assert answer["content"][0]["text"] == "paid a, b"
    assert step_a["params"]["url"] == "https://pay.example/a"
    await app.url_mode.close()


async def test_a_held_step_stays_held_when_a_step_before_it_is_no_longer_raised(wire: WireChecker) -> None:
    """Orders a and b, both accepted and held; a is paid first, so the handler then raises
    b alone (first in its raise now, where a was): b is still held, not shown again, and
    its completion releases it."""
    orders = Orders()
    app = shop(orders, ["a", "b"], flow_wait=0.05)
    client = MemoryClient(app, capabilities=URL_CAPS, principal=ALICE, checker=wire)
    first = await client.result("tools/call", {"name": "pay"})
    assert len(first["inputRequests"]) == 2
    answers = {key: {"action": "accept"} for key in first["inputRequests"]}
    answer = await client.result(
        "tools/call", {"name": "pay", "inputResponses": answers, "requestState": first["requestState"]}
    )
    assert answer["resultType"] == "input_required" and "inputRequests" not in answer, "both held"
    orders.paid.add("a")
    app.complete_elicitation("pay-a", ALICE)
    answer = await client.result("tools/call", {"name": "pay", "requestState": answer["requestState"]})
    assert answer["resultType"] == "input_required" and "inputRequests" not in answer, "b still held"
    orders.paid.add("b")
    app.complete_elicitation("pay-b", ALICE)
    for _ in range(200):  # state-only rounds until b's page is seen done (a hang guard)
        if answer.get("resultType") != "input_required":
            break
        assert "inputRequests" not in answer, "b was shown again while its page was open"
        answer = await client.result("tools/call", {"name": "pay", "requestState": answer["requestState"]})
    assert answer["content"][0]["text"] == "paid a, b"
    await app.url_mode.close()


def linking(linked: list[bool], looks: list[int]) -> Server:
    """``link`` raises its step until ``linked``, then sends the person to the docs
    (``ctx.elicit_url``: a question of its own, keyed as the raised step was);
    ``relink`` raises its step whatever its record says."""
    app = Server("linker", store=MemoryStore(), flow_wait=30.0)
    step = {"message": "Link your account", "url": "https://link.example/", "elicitationId": "link-1"}

    @app.tool()
    async def link(ctx: Context) -> str:
        looks.append(1)
        if not linked:
            raise URLElicitationRequired("Link first", {"elicitations": [step]})
        docs = await ctx.elicit_url("Read what linking allows", "https://docs.example/")
        return f"linked, docs {docs.action}"

    @app.tool()
    async def relink(ctx: Context) -> str:
        looks.append(1)
        raise URLElicitationRequired("Link first", {"elicitations": [step]})

    return app


async def held_retry(client: MemoryClient, name: str, looks: list[int]) -> asyncio.Future[dict[str, Any]]:
    """The step asked and accepted: the accepted retry, held (its handler raised the step
    again), whose answer the test awaits once it completed the page."""
    first = await client.result("tools/call", {"name": name})
    ((key, _),) = first["inputRequests"].items()
    retry = {
        "name": name,
        "inputResponses": {key: {"action": "accept"}},
        "requestState": first["requestState"],
    }
    held = asyncio.ensure_future(client.result("tools/call", retry))
    await eventually(lambda: len(looks) >= 2, "the retry's handler raised the step again")
    assert not held.done(), held.result()
    return held


async def test_the_run_after_the_release_asks_its_own_questions_afresh(wire: WireChecker) -> None:
    """Run again in the round that carried the step's accept, the handler asks a question
    of its own under the key the raised step had: it is asked, not taken for the step."""
    linked: list[bool] = []
    looks: list[int] = []
    app = linking(linked, looks)
    client = MemoryClient(app, capabilities=URL_CAPS, principal=ALICE, checker=wire)
    held = await held_retry(client, "link", looks)
    linked.append(True)
    app.complete_elicitation("link-1", ALICE)
    answer = await asyncio.wait_for(held, 20)
    assert answer["resultType"] == "input_required", answer
    ((key, docs),) = answer["inputRequests"].items()
    assert docs["params"] == {
        "mode": "url",
        "message": "Read what linking allows",
        "url": "https://docs.example/",
    }
    final = await client.result(
        "tools/call",
        {
            "name": "link",
            "inputResponses": {key: {"action": "accept"}},
            "requestState": answer["requestState"],
        },
    )
    assert final["content"][0]["text"] == "linked, docs accept"
    await app.url_mode.close()


async def test_a_step_raised_again_in_the_run_after_its_release_is_shown_again(wire: WireChecker) -> None:
    """The page completed but the handler found no record: the step is asked anew in that
    round, not taken as accepted again on the strength of the accept that round carried."""
    looks: list[int] = []
    app = linking([], looks)
    client = MemoryClient(app, capabilities=URL_CAPS, principal=ALICE, checker=wire)
    held = await held_retry(client, "relink", looks)
    app.complete_elicitation("link-1", ALICE)
    answer = await asyncio.wait_for(held, 20)
    assert answer["resultType"] == "input_required", answer
    assert "inputRequests" in answer, "asked anew, not held again"
    ((_, step),) = answer["inputRequests"].items()
    assert step == {
        "method": "elicitation/create",
        "params": {"mode": "url", "message": "Link your account", "url": "https://link.example/"},
    }
    await app.url_mode.close()


async def test_the_state_does_not_grow_with_every_step_raised(wire: WireChecker) -> None:
    """A handler that makes its step's URL anew in each run (a fresh nonce): each is a
    new step, asked, and the records of those no longer raised are dropped."""
    app = Server("nonces", store=MemoryStore(), flow_wait=0.05)
    runs = itertools.count()

    @app.tool()
    async def sign(ctx: Context) -> str:
        step = {"message": "Sign in", "url": f"https://id.example/?n={next(runs)}", "elicitationId": "sign"}
        raise URLElicitationRequired("Sign in first", {"elicitations": [step]})

    client = MemoryClient(app, capabilities=URL_CAPS, principal=ALICE, checker=wire)
    answer = await client.result("tools/call", {"name": "sign"})
    sizes = []
    for _ in range(12):
        ((key, _),) = answer["inputRequests"].items()
        retry = {
            "name": "sign",
            "inputResponses": {key: {"action": "accept"}},
            "requestState": answer["requestState"],
        }
        answer = await client.result("tools/call", retry)
        sizes.append(len(answer["requestState"]))
    assert max(sizes[2:]) <= sizes[1] + 8, sizes  # the same record: only its time's digits vary
    await app.url_mode.close()


def checking_in_tasks(orders: Orders) -> Server:
    """A tool and a prompt that check order 1 in a task of an ``asyncio.TaskGroup`` (as a
    handler checking several things at once does), raising its step there."""
    app = Server("tasks", store=MemoryStore(), flow_wait=30.0)

    async def check() -> None:
        if orders.unpaid(["1"]):
            raise required(["1"])

    @app.tool()
    async def pay(ctx: Context) -> str:
        async with asyncio.TaskGroup() as group:
            group.create_task(check())
        return "paid 1"

    @app.prompt()
    async def receipt(ctx: Context) -> str:
        async with asyncio.TaskGroup() as group:
            group.create_task(check())
        return "Thank you for paying 1"

    return app


@pytest.mark.parametrize(
    ("method", "params"),
    [("tools/call", {"name": "pay"}), ("prompts/get", {"name": "receipt"})],
    ids=["tool", "prompt"],
)
async def test_a_step_raised_in_a_task_group_is_asked_and_held(
    wire: WireChecker, wire_2025: WireChecker, method: str, params: dict[str, Any]
) -> None:
    """Raised in a sibling task, the step is the handler's own raise, as it is at
    2025-11-25 (-32042 naming it), not an internal error."""
    orders = Orders()
    app = checking_in_tasks(orders)
    session = SessionClient(app, capabilities=URL_CAPS, principal=ALICE, checker=wire_2025)
    await session.open()
    error = (await session.request(method, params))["error"]
    assert error["code"] == -32042 and error["data"]["elicitations"][0]["elicitationId"] == "pay-1"
    client = MemoryClient(app, capabilities=URL_CAPS, principal=ALICE, checker=wire)
    first = await client.result(method, params)
    ((key, step),) = first.get("inputRequests", {}).items()
    assert step["params"]["url"] == "https://pay.example/1"
    looks = orders.looks
    retry = {**params, "inputResponses": {key: {"action": "accept"}}, "requestState": first["requestState"]}
    held = asyncio.ensure_future(client.result(method, retry))
    await eventually(lambda: orders.looks > looks, "the retry's handler found the order unpaid")
    assert not held.done(), held.result()
    orders.paid.add("1")
    app.complete_elicitation("pay-1", ALICE)
    final = await asyncio.wait_for(held, 20)
    assert final.get("resultType") == "complete", final
    await app.url_mode.close()
