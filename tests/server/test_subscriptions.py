"""``subscriptions/listen`` on the server (2026-07-28), in memory: the acknowledgement,
list changes, resource updates, task status (the tasks extension), graceful closure,
and what a 2025-11-25 session gets instead. Every message is checked against the schema."""

from __future__ import annotations

import asyncio
from typing import Any

import orjson
import pytest

from mcp_elicit import Principal, Server
from mcp_elicit.errors import ConfigError
from mcp_elicit.server.subscriptions import Subscriptions
from mcp_elicit.stores.memory import MemoryStore

from support.memory import MemoryClient, SessionClient, instances
from support.subscriptions import Listener, build
from support.waiting import eventually
from support.wire import WireChecker

pytestmark = pytest.mark.anyio
SUB = "io.modelcontextprotocol/subscriptionId"
TASKS = {"elicitation": {}, "extensions": {"io.modelcontextprotocol/tasks": {}}}


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
            if channel == "health:start-up":  # the start-up check's, before the relay's (which fails)
                return super().subscribe(channel)
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
