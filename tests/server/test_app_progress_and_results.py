"""The server framework, driven in memory: progress sent only when it increases and only as a
number, structured content that fits the output schema, and contents only some callers may
read never marked for a shared cache. Every message is checked against the schema."""

from __future__ import annotations

import pytest
from mcp_types import CallToolResult, TextContent

from mcp_elicit import Context, Server
from mcp_elicit.server.auth import Principal

from support.memory import MemoryClient
from support.server_app import Point
from support.wire import WireChecker

pytestmark = pytest.mark.anyio


async def test_progress_sent_only_when_it_increases(wire: WireChecker) -> None:
    """Each progress notification of a request must be above the one before: a handler
    that reports the same step twice (a percentage rounded to the same value) or goes back
    sends nothing for it, so a client never sees progress stall or reverse."""
    app = Server("steps")

    @app.tool()
    async def steps(ctx: Context) -> str:
        for value in (0, 0, 1, 0.5, 1, 2.5, 2):
            await ctx.report_progress(value, 3)
        return "done"

    client = MemoryClient(app, checker=wire)
    await client.result("tools/call", {"name": "steps"}, meta=client.meta(progressToken="p-1"))
    assert [n["params"]["progress"] for n in client.notifications] == [0, 1, 2.5]


@pytest.mark.parametrize("value", [float("nan"), float("inf"), float("-inf")])
async def test_progress_that_is_no_number_fails_the_handler(wire: WireChecker, value: float) -> None:
    """JSON has no NaN nor infinity (orjson would write null, which no schema takes): the
    handler's mistake is its error, named, and nothing reaches the client."""
    app = Server("steps")

    @app.tool()
    async def steps(ctx: Context) -> str:
        await ctx.report_progress(value)
        return "done"

    @app.tool()
    async def totals(ctx: Context) -> str:
        await ctx.report_progress(1, value)
        return "done"

    client = MemoryClient(app, checker=wire)
    for name, fragment in (("steps", "progress must be"), ("totals", "total must be")):
        result = await client.result("tools/call", {"name": name}, meta=client.meta(progressToken="p-1"))
        assert result["isError"] is True
        assert f"{fragment} a finite number, not {value}" in result["content"][0]["text"]
    assert client.notifications == []


async def test_a_tool_with_an_output_schema_answers_structured_content_that_fits(wire: WireChecker) -> None:
    """A tool that declares an outputSchema promises structuredContent fitting it: a result
    without it (text, a list) or breaking an explicit schema is the tool's error, not a
    success a client then rejects (a client validates it, and the TypeScript SDK fails
    the call). An error result owes no structure."""
    app = Server("shapes")
    schema = {"type": "object", "properties": {"x": {"type": "integer"}}, "required": ["x"]}

    @app.tool(output_schema=schema)
    def fits() -> dict[str, int]:
        return {"x": 1}

    @app.tool(output_schema=schema)
    def breaks() -> dict[str, str]:
        return {"y": "s"}

    @app.tool(output_schema=schema)
    def text() -> str:
        return "plain"

    @app.tool()
    def typed() -> Point:
        return "not a point"  # type: ignore[return-value]

    @app.tool(output_schema=schema)
    def given() -> CallToolResult:
        return CallToolResult(content=[TextContent(type="text", text="no structure")])

    @app.tool(output_schema=schema)
    def failed() -> CallToolResult:
        return CallToolResult(content=[TextContent(type="text", text="down")], isError=True)

    client = MemoryClient(app, checker=wire)
    assert (await client.result("tools/call", {"name": "fits"}))["structuredContent"] == {"x": 1}
    for name, fragment in (
        ("breaks", "structuredContent: 'x' is a required property"),
        ("text", "the function returned str, not structured content"),
        ("typed", "the function returned str, not structured content"),
        ("given", "it returned no structuredContent"),
    ):
        result = await client.result("tools/call", {"name": name})
        assert result["isError"] is True, name
        assert "structuredContent" not in result
        assert (
            f"{name}: the result does not fit the tool's outputSchema: {fragment}"
            in result["content"][0]["text"]
        )
    refused = await client.result("tools/call", {"name": "failed"})
    assert refused["isError"] is True and refused["content"][0]["text"] == "down"


async def test_contents_only_some_callers_may_read_are_never_for_a_shared_cache(wire: WireChecker) -> None:
    """A resource with a readable= rule holds what one caller may see and another may not:
    its contents are cacheScope private whatever the server's setting, so a shared cache
    (a gateway honouring public) never serves ann's notes to bob; the server's ttlMs stays.
    A resource without a rule keeps the server's scope."""
    app = Server("notes", cache_scope="public", cache_ttl_ms=60_000)

    @app.resource("notes://{user}", readable=lambda p, user: p is not None and p.subject == user)
    def notes(user: str) -> str:
        return f"the notes of {user}"

    @app.resource("test://mine", readable=lambda p: p is not None and p.subject == "ann")
    def mine() -> str:
        return "ann's"

    @app.resource("test://shared")
    def shared() -> str:
        return "for all"

    client = MemoryClient(app, checker=wire, principal=Principal(subject="ann"))
    for uri in ("notes://ann", "test://mine"):
        result = await client.result("resources/read", {"uri": uri})
        assert (result["cacheScope"], result["ttlMs"]) == ("private", 60_000), uri
    result = await client.result("resources/read", {"uri": "test://shared"})
    assert (result["cacheScope"], result["ttlMs"]) == ("public", 60_000)
