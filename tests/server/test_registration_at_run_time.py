"""Registering handlers while the server runs: from a plain function's worker thread the lists
change on the event loop and refusals fail in that function; a kind once offered stays
offered, and a kind never offered is not declared."""

from __future__ import annotations

import asyncio
import functools
import threading
from typing import Any

import pytest

from mcp_elicit import Server

from support.memory import MemoryClient
from support.registration import label, text
from support.wire import WireChecker

pytestmark = pytest.mark.anyio


#: How long anything here may wait; a test that needs it has failed.
BOUND = 5.0


class Handoff:
    """Watches the event loop's ``call_soon_threadsafe``: ``handed`` is set once a worker
    thread hands the loop something (what ``on_loop`` does), so a test holding the loop
    knows the thread has gone as far as it can without the loop."""

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self.loop = loop
        self.handed = threading.Event()
        self._original = loop.call_soon_threadsafe

    def __enter__(self) -> Handoff:
        loop_thread = threading.get_ident()

        def watched(callback: Any, *args: Any, **kwargs: Any) -> Any:
            handle = self._original(callback, *args, **kwargs)
            if threading.get_ident() != loop_thread:
                self.handed.set()
            return handle

        self.loop.call_soon_threadsafe = watched  # type: ignore[method-assign]
        return self

    def __exit__(self, *exc: object) -> None:
        del self.loop.call_soon_threadsafe  # the loop's own method again


@pytest.mark.parametrize(
    "change", ["register a tool", "remove a tool", "register a prompt", "remove a resource"]
)
async def test_a_plain_function_changes_the_lists_on_the_event_loop(change: str, wire: WireChecker) -> None:
    """A ``def`` tool registers or removes something while a listing on the event loop is
    half-way through the same dict: the change waits for the loop, so the listing sees
    the list as it was (a change made from the thread would break the iteration, or show
    a list that changes under it), and the next listing sees the change."""
    app = Server("growing")
    at_gate, go_on = threading.Event(), threading.Event()
    for n in range(3):
        app.tool(name=f"tool{n}")(lambda: "x")
        app.prompt(name=f"prompt{n}")(lambda: "x")
        app.resource(f"test://r{n}", name=f"r{n}")(lambda: "x")

    @app.tool()
    def change_lists() -> str:
        at_gate.set()
        if not go_on.wait(BOUND):
            return "never let through"
        if change == "register a tool":
            app.tool(name="grown")(lambda: "grown")
        elif change == "remove a tool":
            app.remove_tool("tool1")
        elif change == "register a prompt":
            app.prompt(name="grown")(lambda: "grown")
        else:
            app.remove_resource("test://r1")
        return "changed"

    kind = "prompts" if "prompt" in change else "resources" if "resource" in change else "tools"
    watched: dict[str, Any] = {"tools": app._tools, "prompts": app._prompts, "resources": app._resources}[
        kind
    ]
    client = MemoryClient(app, checker=wire)
    before = app.names(kind)
    calling = asyncio.ensure_future(client.result("tools/call", {"name": "change_lists"}))
    try:
        assert await asyncio.to_thread(at_gate.wait, BOUND), "the tool never started"
        with Handoff(asyncio.get_running_loop()) as handoff:
            # one step of the event loop, as a listing is: nothing awaited until it ends
            listing = iter(watched.values())
            first = next(listing)
            go_on.set()
            assert handoff.handed.wait(BOUND), "the thread never handed its change to the event loop"
            rest = list(listing)  # a dict changed from the thread breaks this
            assert [first, *rest] == list(watched.values())
            assert app.names(kind) == before
        assert text(await asyncio.wait_for(calling, BOUND)) == "changed"
    finally:
        go_on.set()
    listed = await client.result(f"{kind}/list")
    names = [item["name"] for item in listed[kind]]
    expected = {
        "register a tool": [*before, "grown"],
        "remove a tool": [n for n in before if n != "tool1"],
        "register a prompt": [*before, "grown"],
        "remove a resource": ["r0", "r2"],
    }[change]
    assert names == expected


async def test_a_refused_registration_from_a_plain_function_fails_in_that_function(wire: WireChecker) -> None:
    """The change is made on the event loop, but what refuses it (a name taken, a bad
    function) is raised where the function called: its tool call is an ``isError``
    result naming the fault, and the lists stay as they were."""
    app = Server("twice")

    @app.tool()
    def taken() -> str:
        return "x"

    @app.tool()
    def register_twice(what: str) -> str:
        if what == "taken":
            app.tool()(taken)
        else:
            app.tool()(functools.partial(label, "fruit"))
        return "registered"

    client = MemoryClient(app, checker=wire)
    result = await client.result("tools/call", {"name": "register_twice", "arguments": {"what": "taken"}})
    assert result["isError"] is True
    assert "a tool named 'taken' is already registered" in text(result)
    result = await client.result("tools/call", {"name": "register_twice", "arguments": {"what": "partial"}})
    assert result["isError"] is True
    assert "has no __name__ to name the tool after; pass name=... to app.tool()" in text(result)
    assert app.names("tools") == ["taken", "register_twice"]


async def test_an_async_callable_object_completes_on_the_event_loop(wire: WireChecker) -> None:
    """A completion function given as an object whose ``__call__`` is ``async def`` is
    awaited where it is (it was run in a worker thread, which handed back a coroutine)."""
    app = Server("completes")

    @app.prompt()
    async def greet(who: str) -> str:
        return f"Hello {who}"

    class Names:
        async def __call__(self, ref: Any, argument: Any, context: Any) -> list[str]:
            assert threading.current_thread() is threading.main_thread()
            await asyncio.sleep(0)
            return ["Ada", "Alan"]

    app.completion()(Names())
    client = MemoryClient(app, checker=wire)
    result = await client.result(
        "completion/complete",
        {"ref": {"type": "ref/prompt", "name": "greet"}, "argument": {"name": "who", "value": "A"}},
    )
    assert result["completion"]["values"] == ["Ada", "Alan"]


async def test_a_kind_once_offered_stays_offered_when_its_last_one_is_removed(wire: WireChecker) -> None:
    """A server that declared tools (prompts, resources, completions) answers their list
    for as long as it runs, empty once the last one is removed: the list may be empty, and
    a client told that the list changed must not then get Method not found (over HTTP,
    404, which reads as an endpoint that is no MCP server), nor a 2025-11-25 session lose
    what it negotiated."""
    app = Server("shrinking")

    @app.tool()
    def only() -> str:
        return "x"

    @app.prompt()
    def hint(topic: str) -> str:
        return topic

    @app.resource("test://one")
    def one() -> str:
        return "1"

    client = MemoryClient(app, checker=wire)
    before = (await client.result("server/discover"))["capabilities"]
    app.remove_tool("only")
    app.remove_prompt("hint")
    app.remove_resource("test://one")
    assert (await client.result("server/discover"))["capabilities"] == before
    assert (await client.result("tools/list"))["tools"] == []
    assert (await client.result("prompts/list"))["prompts"] == []
    assert (await client.result("resources/list"))["resources"] == []
    assert (await client.result("resources/templates/list"))["resourceTemplates"] == []
    params = {"ref": {"type": "ref/prompt", "name": "hint"}, "argument": {"name": "topic", "value": ""}}
    assert (await client.request("completion/complete", params))["error"]["code"] == -32602
    assert "completions" in before


async def test_a_kind_never_offered_is_not_declared(wire: WireChecker) -> None:
    app = Server("tools only")

    @app.tool()
    def only() -> str:
        return "x"

    client = MemoryClient(app, checker=wire)
    assert set((await client.result("server/discover"))["capabilities"]) == {"logging", "tools"}
    assert (await client.request("prompts/list"))["error"]["code"] == -32601
