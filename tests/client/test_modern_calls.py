"""The client against a scripted server function at revision 2026-07-28: calls. Retried after a later -32022 or a header
mismatch, header annotations, every page of a list, the server's errors as classes, network
time and think time, notifications, and cancelling an abandoned request."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Mapping
from typing import Any

import pytest

from client.fakes import META_VERSION, FakeTransport, discover, error, result
from mcp_elicit.client import Client, ElicitAnswer
from mcp_elicit.client.transport import Ended
from mcp_elicit.core.client_inputs import ElicitationRequest
from mcp_elicit.errors import (
    InvalidParams,
    ProtocolViolation,
    RequestTimeout,
)

from support.modern_server import Asking, Server
from support.wire import WireChecker

pytestmark = pytest.mark.anyio


async def test_a_32022_later_on_switches_version_and_retries() -> None:
    versions: list[str] = []

    def serve(message: dict[str, Any], headers: dict[str, str]) -> list[Any]:
        versions.append(message["params"]["_meta"][META_VERSION])
        if message["method"] == "server/discover":
            return [discover(message)]
        if len(versions) == 2:
            return [error(message, -32022, "changed", {"supported": ["2026-07-28"]})]
        return [result(message, {"tools": []})]

    async with Client(FakeTransport(serve)) as client:
        assert await client.list_tools() == []
    assert versions == ["2026-07-28"] * 3


async def test_a_header_mismatch_on_a_tool_call_refreshes_the_tools_and_retries() -> None:
    class Changing(Server):
        def call(self, message: dict[str, Any], params: dict[str, Any]) -> list[Any]:
            if len(self.calls) == 1:
                self.tools = [
                    {
                        "name": "t",
                        "inputSchema": {
                            "type": "object",
                            "properties": {"r": {"type": "string", "x-mcp-header": "R"}},
                        },
                    }
                ]
                return [error(message, -32020, "Header mismatch: Mcp-Param-R is required"), Ended(400)]
            return [result(message, {"content": []})]

    server = Changing()
    transport = FakeTransport(server)
    async with Client(transport) as client:
        await client.call_tool("t", {"r": "eu"})
    calls = [h for m, h in transport.requests if m["method"] == "tools/call"]
    assert "Mcp-Param-R" not in calls[0]
    assert calls[1]["Mcp-Param-R"] == "eu"
    assert transport.methods().count("tools/list") == 2


async def test_a_tool_with_invalid_header_annotations_is_not_listed_nor_called() -> None:
    server = Server()
    server.tools = [
        {
            "name": "good",
            "inputSchema": {"type": "object", "properties": {"r": {"type": "string", "x-mcp-header": "R"}}},
        },
        {
            "name": "bad",
            "inputSchema": {"type": "object", "properties": {"r": {"type": "array", "x-mcp-header": "R"}}},
        },
    ]
    async with Client(FakeTransport(server)) as client:
        assert [t["name"] for t in await client.list_tools()] == ["good"]
        assert "bad" in client.rejected_tools
        with pytest.raises(ProtocolViolation, match=r"'bad'.*rejected"):
            await client.call_tool("bad", {"r": []})
    assert [c["name"] for c in server.calls] == []


async def test_a_tool_rejected_for_its_header_annotations_is_warned_about_at_each_listing(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """Streamable HTTP: the client should log a warning naming the tool and the reason,
    also when it lists the tools itself (before its first call, not asked to)."""
    server = Server()
    server.tools = [
        {"name": "good", "inputSchema": {"type": "object"}},
        {
            "name": "bad",
            "inputSchema": {"type": "object", "properties": {"r": {"type": "number", "x-mcp-header": "R"}}},
        },
    ]
    with caplog.at_level(logging.WARNING, logger="mcp_elicit.client"):
        async with Client(FakeTransport(server)) as client:
            await client.call_tool("good")
            warned = [r.getMessage() for r in caplog.records if "'bad'" in r.getMessage()]
            assert len(warned) == 1 and "rejected" in warned[0] and "number" in warned[0]
            await client.list_tools()
    assert len([r for r in caplog.records if "'bad'" in r.getMessage()]) == 2


async def test_over_stdio_header_annotations_are_ignored() -> None:
    server = Server()
    server.tools = [
        {
            "name": "odd",
            "inputSchema": {"type": "object", "properties": {"r": {"type": "array", "x-mcp-header": "R"}}},
        }
    ]
    transport = FakeTransport(server, http=False)
    async with Client(transport) as client:
        assert [t["name"] for t in await client.list_tools()] == ["odd"]
        await client.call_tool("odd")
    assert transport.methods() == ["server/discover", "tools/list", "tools/call"]


async def test_lists_follow_every_page_and_refuse_a_repeated_cursor() -> None:
    """A cursor given again is a server loop: an error naming the list and the page, not a
    list cut short as if it were whole."""

    def serve(message: dict[str, Any], headers: dict[str, str]) -> list[Any]:
        if message["method"] == "server/discover":
            return [discover(message)]
        cursor = message["params"].get("cursor")
        pages = {None: (["a", "b"], "c1"), "c1": (["c"], "c2"), "c2": (["d"], None)}
        names, nxt = pages[cursor]
        body: dict[str, Any] = {"prompts": [{"name": n} for n in names]}
        return [result(message, body if nxt is None else {**body, "nextCursor": nxt})]

    async with Client(FakeTransport(serve)) as client:
        prompts = await client.list_prompts()
    assert [p["name"] for p in prompts] == ["a", "b", "c", "d"]

    def looping(message: dict[str, Any], headers: dict[str, str]) -> list[Any]:
        if message["method"] == "server/discover":
            return [discover(message)]
        nxt = {None: "c1", "c1": "c2", "c2": "c1"}[message["params"].get("cursor")]
        return [result(message, {"prompts": [{"name": "x"}], "nextCursor": nxt})]

    transport = FakeTransport(looping)
    async with Client(transport) as client:
        with pytest.raises(
            ProtocolViolation, match=r"prompts/list never ends: page 3 gives the cursor 'c1' again"
        ):
            await client.list_prompts()
    assert transport.methods() == ["server/discover"] + ["prompts/list"] * 3


async def test_an_empty_next_cursor_is_a_cursor_to_follow() -> None:
    """2026-07-28: a client must not take "" for the end of a list; given again, it is a
    loop like any other cursor."""

    def serve(message: dict[str, Any], headers: dict[str, str]) -> list[Any]:
        if message["method"] == "server/discover":
            return [discover(message)]
        cursor = message["params"].get("cursor")
        if cursor == "":
            return [result(message, {"prompts": [{"name": "b"}]})]
        return [result(message, {"prompts": [{"name": "a"}], "nextCursor": ""})]

    transport = FakeTransport(serve)
    async with Client(transport) as client:
        prompts = await client.list_prompts()
    assert [p["name"] for p in prompts] == ["a", "b"]
    assert transport.methods() == ["server/discover", "prompts/list", "prompts/list"]

    def again(message: dict[str, Any], headers: dict[str, str]) -> list[Any]:
        if message["method"] == "server/discover":
            return [discover(message)]
        return [result(message, {"prompts": [{"name": "a"}], "nextCursor": ""})]

    async with Client(FakeTransport(again)) as client:
        with pytest.raises(ProtocolViolation, match="an empty nextCursor is a cursor, not the end"):
            await client.list_prompts()


async def test_errors_from_the_server_raise_the_matching_class() -> None:
    def serve(message: dict[str, Any], headers: dict[str, str]) -> list[Any]:
        if message["method"] == "server/discover":
            return [discover(message)]
        return [error(message, -32602, "Invalid params: unknown prompt 'x'")]

    async with Client(FakeTransport(serve)) as client:
        with pytest.raises(InvalidParams, match="unknown prompt"):
            await client.get_prompt("x", {"a": "1"})
        with pytest.raises(InvalidParams):
            await client.read_resource("x://y")
        with pytest.raises(InvalidParams):
            await client.complete(
                {"type": "ref/prompt", "name": "x"}, {"name": "a", "value": ""}, {"arguments": {}}
            )


async def test_a_silent_server_times_out_on_network_time() -> None:
    class Hanging(FakeTransport):
        async def exchange(self, message: Mapping[str, Any], headers: Mapping[str, str]) -> Any:
            exchange = await super().exchange(message, headers)
            exchange.hang = message["method"] == "tools/call"
            return exchange

    async with Client(Hanging(Server()), timeout=0.2) as client:
        with pytest.raises(RequestTimeout, match=r"within 0\.2 s"):
            await client.call_tool("t")


async def test_think_time_between_rounds_never_counts() -> None:
    # The think time is a ratio of the timeout, and the timeout leaves the requests' own
    # time room: 0.2 s was passed by a request alone on a loaded machine
    timeout = 1.0

    class Thinker:
        modes = frozenset({"form"})

        async def elicit(self, request: ElicitationRequest) -> ElicitAnswer:
            await asyncio.sleep(2 * timeout)  # counted, it alone would time the call out
            return ElicitAnswer.accept(confirmed=True)

        async def url_done(self, request: ElicitationRequest) -> None:
            return None

    async with Client(FakeTransport(Asking()), answerer=Thinker(), timeout=timeout) as client:
        out = await client.call_tool("t")
    assert out["content"]


async def test_notifications_reach_the_callback_and_a_failing_callback_is_not_fatal() -> None:
    seen: list[tuple[str, Mapping[str, Any]]] = []

    class Progress(Server):
        def call(self, message: dict[str, Any], params: dict[str, Any]) -> list[Any]:
            return [
                {
                    "jsonrpc": "2.0",
                    "method": "notifications/progress",
                    "params": {"progressToken": 1, "progress": 5},
                },
                {
                    "jsonrpc": "2.0",
                    "method": "notifications/message",
                    "params": {"level": "info", "data": "x"},
                },
                {"jsonrpc": "2.0", "id": "s-1", "method": "elicitation/create", "params": {}},
                result(message, {"content": []}),
            ]

    def record(method: str, params: Mapping[str, Any]) -> None:
        seen.append((method, params))
        if method == "notifications/message":
            raise RuntimeError("callback bug")

    async with Client(FakeTransport(Progress()), on_notification=record) as client:
        await client.call_tool("t")
    assert [m for m, _ in seen] == ["notifications/progress", "notifications/message"]


@pytest.mark.parametrize("http", [False, True])
async def test_an_abandoned_request_is_cancelled_where_that_is_how_it_is_done(
    http: bool, wire: WireChecker
) -> None:
    class Hanging(FakeTransport):
        async def exchange(self, message: Mapping[str, Any], headers: Mapping[str, str]) -> Any:
            exchange = await super().exchange(message, headers)
            exchange.hang = message["method"] == "tools/call"
            return exchange

    transport = Hanging(Server(), http=http)
    async with Client(transport, timeout=0.1) as client:
        with pytest.raises(RequestTimeout):
            await client.call_tool("t")
        call_id = transport.requests[-1][0]["id"]
        task = asyncio.ensure_future(client.call_tool("t"))
        await asyncio.sleep(0.02)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        await asyncio.sleep(0.01)
    notes = [m for m, _ in transport.sent if m.get("method") == "notifications/cancelled"]
    if http:
        assert notes == []  # closing the response stream is the cancellation
    else:
        assert [n["params"]["requestId"] for n in notes] == [call_id, transport.requests[-1][0]["id"]]
        assert notes[0]["params"]["reason"] == "timed out"
        for note in notes:
            wire.notification(note)


async def test_a_thousand_rejected_tools_make_one_warning_per_listing_not_a_thousand(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """The warning names the first few tools and why, says how many in all, and where to
    find them all (``Client.rejected_tools``): a listing is one line of the log, however
    many tools a server gets wrong."""
    server = Server()
    bad = {"type": "object", "properties": {"r": {"type": "number", "x-mcp-header": "R"}}}
    server.tools = [
        {"name": "good", "inputSchema": {"type": "object"}},
        *({"name": f"bad{i}", "inputSchema": bad} for i in range(1000)),
    ]
    with caplog.at_level(logging.WARNING, logger="mcp_elicit.client"):
        async with Client(FakeTransport(server)) as client:
            await client.call_tool("good")
            assert len(client.rejected_tools) == 1000
    warned = [r.getMessage() for r in caplog.records if "rejected" in r.getMessage()]
    assert len(warned) == 1, len(warned)
    assert "'bad0'" in warned[0] and "number" in warned[0] and "1000" in warned[0]
    assert "rejected_tools" in warned[0] and "'bad999'" not in warned[0]
