"""``subscriptions/listen`` on the server (2026-07-28), in memory, and who may hear what: one
principal cannot take every subscription, and listeners and sessions hear only of resources
they may read."""

from __future__ import annotations

import asyncio

import pytest

from mcp_elicit import Principal, Server

from support.memory import MemoryClient, SessionClient
from support.subscriptions import Listener, build
from support.waiting import eventually
from support.wire import WireChecker

pytestmark = pytest.mark.anyio


async def test_one_principal_cannot_take_every_subscription(wire: WireChecker) -> None:
    """Past ``max_listeners_per_owner`` open listens, a principal's next one is refused
    (saying why) while other principals still listen; one that ends frees its slot."""
    app = build()
    app.subscriptions.max_listeners_per_owner = 2
    ann = [MemoryClient(app, principal=Principal("ann"), checker=wire) for _ in range(3)]
    bob = MemoryClient(app, principal=Principal("bob"), checker=wire)
    first, second = (Listener(c, {"toolsListChanged": True}, rid=i) for i, c in enumerate(ann[:2], 1))
    await first.until(1)
    await second.until(1)
    third = ann[2].request("subscriptions/listen", {"notifications": {"toolsListChanged": True}})
    refused = await asyncio.wait_for(third, 5)
    assert refused["error"]["code"] == -32600  # the caller's own doing, not the server's fault
    assert refused["error"]["message"].startswith("Too many subscriptions: principal 'ann' holds 2, ")
    assert refused["error"]["data"] == {"limit": "max_listeners_per_owner", "most": 2}
    others = Listener(bob, {"toolsListChanged": True}, rid=4)
    assert (await others.until(1))[0]["method"] == "notifications/subscriptions/acknowledged"
    first.answer.cancel()
    await eventually(lambda: len(app.subscriptions) == 2, "the cancelled listen to be gone")
    again = Listener(ann[2], {"toolsListChanged": True}, rid=5)
    assert (await again.until(1))[0]["method"] == "notifications/subscriptions/acknowledged"
    app.subscriptions.close_all()
    for listener in (second, others, again):
        await asyncio.wait_for(listener.answer, 5)


def per_user(shared: set[str]) -> tuple[Server, list[str]]:
    """A server with one to-do list per user, readable by its user and by whoever it is
    shared with; ``ran``: whose lists the handler served."""
    app = Server("per-user")
    ran: list[str] = []

    def readable(principal: Principal | None, user: str) -> bool:
        return principal is not None and (principal.subject == user or principal.subject in shared)

    @app.resource("todo://{user}", readable=readable)
    def todo(user: str) -> str:
        ran.append(user)
        return f"{user}'s list"

    return app, ran


async def test_a_listener_hears_only_of_resources_it_may_read(wire: WireChecker) -> None:
    """A resource's ``readable`` rule decides reading, subscribing and hearing alike: bob,
    guessing ann's URI, gets it left out of his acknowledgement and no update of it, and
    his read of it is "not found" before the handler runs; once ann's list is no longer
    shared with carol, carol stops hearing of it."""
    shared = {"carol"}
    app, ran = per_user(shared)
    ann, bob, carol = (
        MemoryClient(app, principal=Principal(n), checker=wire) for n in ("ann", "bob", "carol")
    )
    uris = {"resourceSubscriptions": ["todo://ann", "todo://bob"]}
    hers, his, theirs = Listener(ann, uris, rid=1), Listener(bob, uris, rid=2), Listener(carol, uris, rid=3)
    agreed = [(await x.until(1))[0]["params"]["notifications"] for x in (hers, his, theirs)]
    assert agreed[0] == {"resourceSubscriptions": ["todo://ann"]}
    assert agreed[1] == {"resourceSubscriptions": ["todo://bob"]}
    assert agreed[2] == {"resourceSubscriptions": ["todo://ann", "todo://bob"]}
    assert app.notify_resource_updated("todo://ann") == 2  # ann and carol
    await hers.until(2)
    await theirs.until(2)
    shared.clear()
    assert app.notify_resource_updated("todo://ann") == 1  # ann alone now
    await hers.until(3)
    await asyncio.sleep(0.05)
    assert [len(c.notifications) for c in (ann, bob, carol)] == [3, 1, 2]
    refused = await bob.request("resources/read", {"uri": "todo://ann"})
    assert refused["error"]["code"] == -32602 and refused["error"]["data"] == {"uri": "todo://ann"}
    assert (await ann.result("resources/read", {"uri": "todo://ann"}))["contents"][0]["text"] == "ann's list"
    assert ran == ["ann"], "the rule is asked, never the handler, until a read is allowed"
    app.subscriptions.close_all()
    for listener in (hers, his, theirs):
        await asyncio.wait_for(listener.answer, 5)


async def test_a_session_subscribes_only_to_resources_it_may_read(wire_2025: WireChecker) -> None:
    """2025-11-25: ``resources/subscribe`` to a resource the caller may not read is -32002,
    as its read is; a session that may no longer read one stops hearing of it."""
    shared = {"carol"}
    app, ran = per_user(shared)
    ann, bob, carol = (
        SessionClient(app, principal=Principal(n), checker=wire_2025) for n in ("ann", "bob", "carol")
    )
    for client in (ann, bob, carol):
        await client.open()
    refused = await bob.request("resources/subscribe", {"uri": "todo://ann"}, malformed=True)
    assert refused["error"]["code"] == -32002 and refused["error"]["data"] == {"uri": "todo://ann"}
    assert not bob.session.subscriptions
    for client in (ann, carol):
        assert await client.result("resources/subscribe", {"uri": "todo://ann"}) == {}
    assert app.notify_resource_updated("todo://ann") == 2
    shared.clear()
    assert app.notify_resource_updated("todo://ann") == 1
    assert ran == []


async def test_a_readable_rule_is_a_plain_function_and_one_that_fails_says_no(
    wire: WireChecker, caplog: pytest.LogCaptureFixture
) -> None:
    """``readable=`` runs at every update, so it may not await (refused when registered);
    a rule that raises at an update counts as no for that subscriber, logged."""
    app = Server("rules")

    async def waits(principal: Principal | None, user: str) -> bool:
        return True

    with pytest.raises(ValueError, match="readable= takes a plain function"):
        app.resource("todo://{user}", readable=waits)(lambda user: user)
    broken = {"now": False}

    def flaky(principal: Principal | None, user: str) -> bool:
        if broken["now"]:
            raise RuntimeError("the directory is down")
        return True

    app.resource("todo://{user}", readable=flaky)(lambda user: user)
    listener = Listener(
        MemoryClient(app, principal=Principal("ann"), checker=wire), {"resourceSubscriptions": ["todo://ann"]}
    )
    await listener.until(1)
    assert app.notify_resource_updated("todo://ann") == 1
    broken["now"] = True
    assert app.notify_resource_updated("todo://ann") == 0
    assert "readable rule of resource 'todo://{user}' failed" in caplog.text
    app.subscriptions.close_all()
    await asyncio.wait_for(listener.answer, 5)


async def test_a_resource_the_caller_may_not_read_is_not_listed(wire: WireChecker) -> None:
    """``resources/list`` names a fixed resource only to callers its ``readable`` rule lets
    read it (to anyone else it does not exist), and such a list, which differs by caller,
    is ``cacheScope: "private"`` even on a server whose lists are public."""
    app = Server("listing", cache_ttl_ms=60_000, cache_scope="public")
    app.resource("notes://team")(lambda: "everyone's")
    app.resource(
        "notes://admin", readable=lambda principal: principal is not None and principal.subject == "root"
    )(lambda: "root's")
    ann, root = (MemoryClient(app, principal=Principal(n), checker=wire) for n in ("ann", "root"))
    seen = await ann.result("resources/list", {})
    assert [r["uri"] for r in seen["resources"]] == ["notes://team"]
    assert seen["cacheScope"] == "private"
    seen = await root.result("resources/list", {})
    assert [r["uri"] for r in seen["resources"]] == ["notes://team", "notes://admin"]
    assert seen["cacheScope"] == "private"
    public = Server("public", cache_ttl_ms=60_000, cache_scope="public")
    public.resource("notes://team")(lambda: "everyone's")
    assert (await MemoryClient(public, checker=wire).result("resources/list", {}))["cacheScope"] == "public"
