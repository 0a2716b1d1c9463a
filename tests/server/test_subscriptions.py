"""``subscriptions/listen`` on the server (2026-07-28), in memory: the acknowledgement,
list changes, resource updates, task status (the tasks extension), graceful closure,
and what a 2025-11-25 session gets instead. Every message is checked against the schema."""

from __future__ import annotations

import asyncio
from typing import Any

import orjson
import pytest

from mcp_elicit import Context, Form, Principal, Server
from mcp_elicit.errors import ConfigError
from mcp_elicit.forms import Boolean
from mcp_elicit.server.subscriptions import Subscriptions
from mcp_elicit.stores.memory import MemoryStore

from support.memory import MemoryClient, SessionClient, instances
from support.waiting import eventually
from support.wire import WireChecker

pytestmark = pytest.mark.anyio
SUB = "io.modelcontextprotocol/subscriptionId"
TASKS = {"elicitation": {}, "extensions": {"io.modelcontextprotocol/tasks": {}}}


def build() -> Server:
    app = Server("listen")

    @app.tool(task="optional")
    async def approve(ctx: Context) -> str:
        """Asks for an approval inside a task."""
        await ctx.start_task("waiting for approval")
        answer = await ctx.elicit("Approve?", Form(ok=Boolean()), key="ok")
        return f"approved: {answer.action}"

    @app.resource("file:///notes.txt")
    def notes() -> str:
        return "notes"

    return app


class Listener:
    """One listen request running in the background, its notifications collected."""

    def __init__(self, client: MemoryClient, notifications: dict[str, Any], rid: int = 100) -> None:
        self.client = client
        self.rid = rid
        message = {
            "jsonrpc": "2.0",
            "id": rid,
            "method": "subscriptions/listen",
            "params": {"notifications": notifications, "_meta": client.meta()},
        }
        self.answer = asyncio.ensure_future(client.raw(message))

    async def until(self, count: int) -> list[dict[str, Any]]:
        await eventually(
            lambda: len(self.client.notifications) >= count or self.answer.done(), f"{count} notifications"
        )
        return self.client.notifications


async def test_the_acknowledgement_comes_first_and_names_what_was_agreed(wire: WireChecker) -> None:
    app = build()
    client = MemoryClient(app, checker=wire)
    asked = {
        "toolsListChanged": True,
        "promptsListChanged": True,
        "resourceSubscriptions": ["file:///notes.txt"],
    }
    listener = Listener(client, asked)
    (ack,) = await listener.until(1)
    assert ack == {
        "jsonrpc": "2.0",
        "method": "notifications/subscriptions/acknowledged",
        "params": {
            "_meta": {SUB: 100},
            # no prompts on this server: not agreed
            "notifications": {"toolsListChanged": True, "resourceSubscriptions": ["file:///notes.txt"]},
        },
    }
    caps = (await client.result("server/discover"))["capabilities"]
    assert caps["tools"] == {"listChanged": True}
    assert caps["resources"] == {"listChanged": True, "subscribe": True}
    app.subscriptions.close_all()
    final = await asyncio.wait_for(listener.answer, 5)
    assert final["result"] == {
        "resultType": "complete",
        "_meta": {SUB: 100, "io.modelcontextprotocol/serverInfo": {"name": "listen", "version": "0.1.0"}},
    }


async def test_a_uri_nothing_serves_is_left_out_of_the_acknowledgement(wire: WireChecker) -> None:
    """A listen naming URIs no resource or template serves is agreed without them (the
    acknowledgement is the subset the server honours): the client sees at once which of
    its URIs will never be told anything, and the others are still honoured."""
    app = build()

    @app.resource("file:///logs/{day}.txt")
    def log_of(day: int) -> str:
        return f"log of {day}"

    client = MemoryClient(app, checker=wire)
    asked = ["file:///notes.txt", "file:///typo.txt", "file:///logs/3.txt", "file:///logs/monday.txt"]
    listener = Listener(client, {"resourceSubscriptions": asked})
    (ack,) = await listener.until(1)
    assert ack["params"]["notifications"] == {
        "resourceSubscriptions": ["file:///logs/3.txt", "file:///notes.txt"]
    }
    assert app.notify_resource_updated("file:///typo.txt") == 0
    assert app.notify_resource_updated("file:///logs/3.txt") == 1
    app.subscriptions.close_all()
    await asyncio.wait_for(listener.answer, 5)


async def test_changes_reach_the_listeners_that_asked_for_them(wire: WireChecker) -> None:
    app = build()
    tools_only = MemoryClient(app, checker=wire)
    updates_only = MemoryClient(app, checker=wire)
    a = Listener(tools_only, {"toolsListChanged": True}, rid=1)
    b = Listener(updates_only, {"resourceSubscriptions": ["file:///notes.txt"]}, rid=2)
    await a.until(1)
    await b.until(1)

    @app.tool()
    def late() -> str:
        """Registered while clients listen."""
        return "late"

    app.remove_tool("late")
    assert app.notify_resource_updated("file:///other.txt") == 0
    assert app.notify_resource_updated("file:///notes.txt") == 1
    await a.until(3)
    await b.until(2)
    assert [(m["method"], m["params"]["_meta"][SUB]) for m in tools_only.notifications[1:]] == [
        ("notifications/tools/list_changed", 1),
        ("notifications/tools/list_changed", 1),
    ]
    (update,) = updates_only.notifications[1:]
    assert update["method"] == "notifications/resources/updated"
    assert update["params"] == {"uri": "file:///notes.txt", "_meta": {SUB: 2}}
    # a listener that is gone gets nothing more
    a.answer.cancel()
    await asyncio.sleep(0)
    assert len(app.subscriptions) == 1
    assert app.notify_list_changed("tools") == 0
    app.subscriptions.close_all()
    await asyncio.wait_for(b.answer, 5)
    assert len(app.subscriptions) == 0


async def test_a_task_listener_sees_the_question_at_once_without_polling(wire: WireChecker) -> None:
    app = build()
    caller = MemoryClient(app, capabilities=TASKS, checker=wire)
    task_id = (await caller.result("tools/call", {"name": "approve", "arguments": {}}))["taskId"]
    watcher = MemoryClient(app, capabilities=TASKS, checker=wire)
    listener = Listener(watcher, {"taskIds": [task_id, "someone-elses"]})
    seen = await listener.until(2)
    assert seen[0]["params"]["notifications"] == {"taskIds": [task_id]}
    assert seen[1]["method"] == "notifications/tasks" and seen[1]["params"]["taskId"] == task_id

    await eventually(
        lambda: any(m["params"].get("status") == "input_required" for m in watcher.notifications[1:]),
        "the task to be heard asking",
    )
    parked = next(m for m in watcher.notifications if m["params"].get("status") == "input_required")
    assert parked["params"]["inputRequests"]["ok"]["params"]["message"] == "Approve?"
    assert parked["params"]["_meta"] == {SUB: 100}
    await caller.result("tasks/update", {"taskId": task_id, "inputResponses": {"ok": {"action": "decline"}}})
    await eventually(
        lambda: watcher.notifications[-1]["params"].get("status") == "completed",
        "the task to be heard ending",
    )
    done = watcher.notifications[-1]["params"]
    assert done["status"] == "completed" and done["result"]["content"][0]["text"] == "approved: decline"
    app.subscriptions.close_all()
    await asyncio.wait_for(listener.answer, 5)


async def test_task_ids_need_the_extension_and_only_the_owner_sees_a_task(wire: WireChecker) -> None:
    app = build()
    ann = MemoryClient(app, capabilities=TASKS, principal=Principal("ann"), checker=wire)
    task_id = (await ann.result("tools/call", {"name": "approve", "arguments": {}}))["taskId"]
    plain = MemoryClient(app, checker=wire)
    refused = await plain.request("subscriptions/listen", {"notifications": {"taskIds": [task_id]}})
    assert refused["error"]["code"] == -32021
    bob = MemoryClient(app, capabilities=TASKS, principal=Principal("bob"), checker=wire)
    listener = Listener(bob, {"taskIds": [task_id]})
    (ack,) = await listener.until(1)
    assert ack["params"]["notifications"] == {}
    await asyncio.sleep(0.05)
    assert len(bob.notifications) == 1  # nothing of ann's task
    app.subscriptions.close_all()
    await asyncio.wait_for(listener.answer, 5)
    bad = await plain.request(
        "subscriptions/listen", {"notifications": {"toolsListChanged": 1}}, malformed=True
    )
    assert bad["error"]["code"] == -32602


async def test_a_2025_11_25_session_gets_list_changes_on_its_stream_and_no_listen(
    wire_2025: WireChecker,
) -> None:
    app = build()
    client = SessionClient(app, checker=wire_2025)
    init = await client.open()
    assert init["result"]["capabilities"]["tools"] == {"listChanged": True}
    assert app.notify_list_changed("tools") == 1
    pushed = await client.session.next_pushed(1.0)
    message = orjson.loads(pushed)
    wire_2025.notification(message)
    assert message == {"jsonrpc": "2.0", "method": "notifications/tools/list_changed"}
    listen = await client.request("subscriptions/listen", {"notifications": {}}, malformed=True)
    assert listen["error"]["code"] == -32601


async def test_adding_and_removing_prompts_and_resources_is_announced(wire: WireChecker) -> None:
    app = build()

    @app.prompt()
    def hello() -> str:
        """Says hello."""
        return "hello"

    client = MemoryClient(app, checker=wire)
    listener = Listener(client, {"promptsListChanged": True, "resourcesListChanged": True})
    (ack,) = await listener.until(1)
    assert ack["params"]["notifications"] == {"promptsListChanged": True, "resourcesListChanged": True}

    @app.prompt()
    def bye() -> str:
        """Says goodbye."""
        return "bye"

    @app.resource("file:///{name}.md")
    def page(name: str) -> str:
        return name

    assert app.names("prompts") == ["hello", "bye"]
    assert app.names("resources") == ["file:///notes.txt", "file:///{name}.md"]
    app.remove_prompt("bye")
    app.remove_resource("file:///{name}.md")
    app.remove_resource("file:///notes.txt")
    with pytest.raises(KeyError):
        app.remove_resource("file:///never.txt")
    seen = await listener.until(6)
    assert [m["method"] for m in seen[1:]] == [
        "notifications/prompts/list_changed",
        "notifications/resources/list_changed",
        "notifications/prompts/list_changed",
        "notifications/resources/list_changed",
        "notifications/resources/list_changed",
    ]
    assert app.names("prompts") == ["hello"] and app.names("resources") == []
    app.subscriptions.close_all()
    await asyncio.wait_for(listener.answer, 5)


# ---- across instances --------------------------------------------------------------------


async def test_instances_sharing_a_store_hear_each_others_resource_updates(wire: WireChecker) -> None:
    a, b = build(), build()
    async with instances(a, b, store=MemoryStore()) as store:
        on_a, on_b = MemoryClient(a, checker=wire), MemoryClient(b, checker=wire)
        here, there = (
            Listener(on_a, {"resourceSubscriptions": ["file:///notes.txt"]}),
            Listener(on_b, {"resourceSubscriptions": ["file:///notes.txt"]}),
        )
        await here.until(1)
        await there.until(1)
        # junk on the channel is ignored; the relay goes on
        for junk in (b"not json", b"[]", orjson.dumps({"uri": 5}), b"x" * 5000):
            await store.publish(a.relay.channel, junk)
        assert a.notify_resource_updated("file:///notes.txt") == 1  # its own listener, at once
        updates = await there.until(2)
        assert updates[1]["method"] == "notifications/resources/updated"
        assert updates[1]["params"]["uri"] == "file:///notes.txt"
        await asyncio.sleep(0.05)  # what a would hear of its own message: nothing more
        assert len(on_a.notifications) == 2 and len(on_b.notifications) == 2
    assert a.relay.listening is None


async def test_without_a_configured_store_updates_stay_on_their_instance(wire: WireChecker) -> None:
    a, b = build(), build()
    await a.start()
    await b.start()
    try:
        on_b = MemoryClient(b, checker=wire)
        there = Listener(on_b, {"resourceSubscriptions": ["file:///notes.txt"]})
        await there.until(1)
        assert a.notify_resource_updated("file:///notes.txt") == 0
        await asyncio.sleep(0.05)
        assert len(on_b.notifications) == 1 and a.relay.listening is None
    finally:
        await a.stop()
        await b.stop()


async def test_a_relay_whose_store_fails_listens_again(wire: WireChecker) -> None:
    class Flaky(MemoryStore):
        fails = 0
        calls = 0

        def subscribe(self, channel: str) -> Any:
            self.calls += 1
            if self.fails:
                self.fails -= 1
                raise ConnectionError("the store is down")
            return super().subscribe(channel)

    store = Flaky()
    a, b = build(), build()
    for server in (a, b):
        server.configure_url_mode(store=store)
    await a.start()
    assert a.relay.listening is not None
    await asyncio.wait_for(a.relay.listening.wait(), 5)
    store.fails = 1
    await b.start()  # b's first subscription fails: it tries again a second later
    try:
        assert b.relay.listening is not None
        await asyncio.sleep(0.1)
        assert not b.relay.listening.is_set() and store.calls == 2
        await asyncio.wait_for(b.relay.listening.wait(), 5)
        assert store.calls == 3
        there = Listener(MemoryClient(b, checker=wire), {"resourceSubscriptions": ["file:///notes.txt"]})
        await there.until(1)
        a.notify_resource_updated("file:///notes.txt")
        assert (await there.until(2))[1]["params"]["uri"] == "file:///notes.txt"
    finally:
        await a.stop()
        await b.stop()


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


def test_a_listen_share_for_one_principal_follows_the_whole() -> None:
    """``max_listeners_per_owner`` is a share of ``max_listeners``, as for sessions and
    tasks: not set, a tenth of it (at least one), following it when it changes; above it
    (one principal could hold every listen) refused naming both, given or set (either one);
    a limit that is not a whole number above zero refused naming it."""
    both = (
        r"^Subscriptions.max_listeners_per_owner 11 is above Subscriptions.max_listeners 10: "
        "one principal could hold all of them; "
    )
    with pytest.raises(ConfigError, match=both):
        Subscriptions(max_listeners=10, max_listeners_per_owner=11)
    subscriptions = Server("listens").subscriptions
    assert (subscriptions.max_listeners, subscriptions.max_listeners_per_owner) == (1000, 100)
    assert Subscriptions(max_listeners=50).max_listeners_per_owner == 5
    subscriptions.max_listeners = 10
    assert subscriptions.max_listeners_per_owner == 1
    with pytest.raises(ConfigError, match=both):
        subscriptions.max_listeners_per_owner = 11
    subscriptions.max_listeners_per_owner = 10
    with pytest.raises(ConfigError, match=r"^Subscriptions.max_listeners_per_owner 10 is above .* 9: "):
        subscriptions.max_listeners = 9
    assert (subscriptions.max_listeners, subscriptions.max_listeners_per_owner) == (10, 10)
    for bad in (0, -1, 2.0, True):
        with pytest.raises(ConfigError, match=r"^Subscriptions.max_listeners(_per_owner)? .*: expected "):
            subscriptions.max_listeners_per_owner = bad  # type: ignore[assignment]
        with pytest.raises(ConfigError, match=r"^Subscriptions.max_listeners .*: expected "):
            Subscriptions(max_listeners=bad)  # type: ignore[arg-type]
