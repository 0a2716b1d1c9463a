"""The server framework, driven in memory; every message is checked against the schema."""

from __future__ import annotations

import asyncio
import threading
import uuid
from dataclasses import dataclass
from decimal import Decimal
from pathlib import Path
from typing import Annotated, Any

import pytest
from mcp_types import CallToolResult, EmbeddedResource, TextContent, TextResourceContents
from pydantic import BaseModel, Field
from typing_extensions import TypedDict

from mcp_elicit import Audio, Blob, Context, Image, Server, ToolError
from mcp_elicit.errors import ConfigError
from mcp_elicit.server.auth import Principal
from mcp_elicit.stores.memory import MemoryStore
from mcp_elicit.stores.sqlite import SqliteStore

from support.memory import MemoryClient
from support.wire import WireChecker

pytestmark = pytest.mark.anyio


@dataclass
class Weather:
    city: str
    celsius: float


class Point(TypedDict):
    x: int
    y: int


class Box(BaseModel):
    label: str


def build() -> Server:
    app = Server("demo", "2.0", instructions="Use me well.", page_size=2)

    @app.tool()
    async def add(a: int, b: int = 2) -> str:
        """Add two numbers."""
        return str(a + b)

    @app.tool(title="The weather")
    def weather(city: Annotated[str, Field(description="A city name")]) -> Weather:
        return Weather(city, 21.5)

    @app.tool()
    def point() -> Point:
        return {"x": 1, "y": 2}

    @app.tool()
    def box() -> Box:
        return Box(label="b")

    @app.tool()
    def failing() -> str:
        raise ToolError("no luck today")

    @app.tool()
    def crashing() -> str:
        raise RuntimeError("boom")

    @app.tool()
    def media() -> list[object]:
        return [
            "text",
            Image(b"\x89PNG", "image/png"),
            Audio(b"RIFF", "audio/wav"),
            EmbeddedResource(type="resource", resource=TextResourceContents(uri="test://r", text="hi")),
        ]

    @app.tool()
    async def slow(ctx: Context) -> str:
        for i in range(3):
            await ctx.report_progress(i, 3)
        await ctx.debug("debug line")
        await ctx.warning("warning line")
        return "done"

    @app.prompt(description="Greets")
    def greet(name: str, polite: str = "yes") -> str:
        return f"Hello {name}" + ("!" if polite == "yes" else "")

    @app.resource("test://text", mime_type="text/plain")
    def text() -> str:
        return "plain"

    @app.resource("test://blob")
    def blob() -> Blob:
        return Blob(b"\x00\x01", "application/octet-stream")

    @app.resource("test://items/{item_id}")
    def item(item_id: str) -> dict[str, str]:
        return {"id": item_id}

    @app.completion()
    async def complete(ref: Any, argument: Any, context: Any) -> list[str]:
        return [v for v in ("alpha", "beta") if v.startswith(argument["value"])]

    return app


@pytest.fixture
def client(wire: WireChecker) -> MemoryClient:
    return MemoryClient(build(), checker=wire)


async def test_discover(client: MemoryClient) -> None:
    result = await client.result("server/discover")
    assert result["supportedVersions"][0] == "2026-07-28"
    assert set(result["capabilities"]) >= {"tools", "prompts", "resources", "completions"}
    assert result["instructions"] == "Use me well."
    assert result["_meta"]["io.modelcontextprotocol/serverInfo"] == {"name": "demo", "version": "2.0"}


async def test_tools_list_is_paginated_in_registration_order(client: MemoryClient) -> None:
    names: list[str] = []
    cursor = None
    pages = 0
    while True:
        result = await client.result("tools/list", {"cursor": cursor} if cursor else {})
        names += [t["name"] for t in result["tools"]]
        pages += 1
        cursor = result.get("nextCursor")
        if cursor is None:
            break
    assert names == ["add", "weather", "point", "box", "failing", "crashing", "media", "slow"]
    assert pages == 4


async def test_bad_cursor(client: MemoryClient) -> None:
    response = await client.request("tools/list", {"cursor": "nonsense!"})
    assert response["error"]["code"] == -32602
    assert "cursor" in response["error"]["message"]


async def test_schemas_from_type_hints(client: MemoryClient) -> None:
    tools = {t["name"]: t for t in (await client.result("tools/list"))["tools"]}
    assert tools["add"]["description"] == "Add two numbers."
    assert tools["add"]["inputSchema"] == {
        "type": "object",
        "properties": {"a": {"type": "integer"}, "b": {"type": "integer", "default": 2}},
        "required": ["a"],
    }
    assert tools["weather"]["title"] == "The weather"
    assert tools["weather"]["inputSchema"]["properties"]["city"] == {
        "type": "string",
        "description": "A city name",
    }
    assert tools["weather"]["outputSchema"]["properties"]["celsius"]["type"] == "number"
    assert "outputSchema" not in tools["add"]


async def test_structured_results(client: MemoryClient) -> None:
    result = await client.result("tools/call", {"name": "weather", "arguments": {"city": "Oslo"}})
    assert result["structuredContent"] == {"city": "Oslo", "celsius": 21.5}
    assert result["content"][0]["type"] == "text"
    assert '"Oslo"' in result["content"][0]["text"]
    assert (await client.result("tools/call", {"name": "point"}))["structuredContent"] == {"x": 1, "y": 2}
    assert (await client.result("tools/call", {"name": "box"}))["structuredContent"] == {"label": "b"}


async def test_unstructured_and_media(client: MemoryClient) -> None:
    assert (await client.result("tools/call", {"name": "add", "arguments": {"a": 1}}))["content"] == [
        {"type": "text", "text": "3"}
    ]
    kinds = [c["type"] for c in (await client.result("tools/call", {"name": "media"}))["content"]]
    assert kinds == ["text", "image", "audio", "resource"]


@pytest.mark.parametrize(
    ("name", "arguments", "fragment"),
    [
        ("nope", {}, "Unknown tool: nope"),
        ("failing", {}, "no luck today"),
        ("crashing", {}, "Error executing tool crashing: boom"),
        ("add", {"a": "x"}, "a: Input should be a valid integer"),
        ("add", {}, "a: Field required"),
    ],
)
async def test_tool_failures_are_results_with_is_error(
    client: MemoryClient, name: str, arguments: dict[str, Any], fragment: str
) -> None:
    result = await client.result("tools/call", {"name": name, "arguments": arguments})
    assert result["isError"] is True
    assert fragment in result["content"][0]["text"]


@pytest.mark.parametrize("sent", ["nan", "NaN", "inf", "-Infinity", "1e999", "-1e999"])
async def test_a_number_argument_is_finite(wire: WireChecker, sent: str) -> None:
    """JSON has no NaN nor infinity, and the schema says "number": text that reads as one
    ("nan", "1e999") is refused like any other argument that does not fit, so a handler's
    bounds check (``amount > limit``, false for NaN) cannot be slipped past, nor a
    resource template's variable (all text) or a prompt's argument turn into one."""
    app = Server("numbers")
    spent: list[float] = []

    @app.tool()
    def pay(amount: float, cap: Decimal = Decimal(100)) -> str:
        spent.append(amount)
        return "paid" if amount <= 100 and cap <= 100 else "over the limit"

    @app.resource("test://price/{amount}")
    def price(amount: float) -> str:
        return f"{amount:.2f}"

    @app.prompt()
    def budget(amount: float) -> str:
        return f"within {amount}"

    client = MemoryClient(app, checker=wire)
    tried: list[dict[str, object]] = [{"amount": sent}]
    if "e" not in sent:  # a Decimal holds 1e999 as it is: only its NaN and infinities are refused
        tried.append({"amount": 1, "cap": sent})
    for arguments in tried:
        result = await client.result("tools/call", {"name": "pay", "arguments": arguments})
        assert result.get("isError") is True, result
        assert "Input should be a finite number" in result["content"][0]["text"]
    assert spent == []
    read = await client.request("resources/read", {"uri": f"test://price/{sent}"})
    assert read["error"]["code"] == -32602, read
    got = await client.request("prompts/get", {"name": "budget", "arguments": {"amount": sent}})
    assert got["error"]["code"] == -32602 and "finite" in got["error"]["message"], got
    assert (await client.result("tools/call", {"name": "pay", "arguments": {"amount": "12.5"}}))["content"][
        0
    ]["text"] == "paid"


async def test_a_tool_failing_with_an_exception_group_is_a_result_with_is_error(wire: WireChecker) -> None:
    app = Server("groups")

    @app.tool()
    async def grouped() -> str:
        raise ExceptionGroup("two at once", [ValueError("a"), KeyError("b")])

    @app.tool()
    async def refused() -> str:
        raise ToolError("not today")

    client = MemoryClient(app, checker=wire)
    result = await client.result("tools/call", {"name": "grouped", "arguments": {}})
    assert result["isError"] is True
    assert result["content"][0]["text"] == "Error executing tool grouped: two at once (2 sub-exceptions)"
    result = await client.result("tools/call", {"name": "refused", "arguments": {}})
    assert result["isError"] is True
    assert result["content"] == [{"type": "text", "text": "not today"}]


@pytest.mark.parametrize(
    "params", [{}, {"name": 5}, {"name": "add", "arguments": [1, 2]}, {"name": "add", "arguments": "x"}]
)
async def test_malformed_tools_call_is_invalid_params(client: MemoryClient, params: dict[str, Any]) -> None:
    response = await client.request("tools/call", params, malformed=True)
    assert response["error"]["code"] == -32602


async def test_progress_only_with_a_token_and_logs_only_with_a_level(client: MemoryClient) -> None:
    await client.result("tools/call", {"name": "slow"})
    assert client.notifications == []
    meta = client.meta(progressToken="p-1", **{"io.modelcontextprotocol/logLevel": "warning"})
    await client.result("tools/call", {"name": "slow"}, meta=meta)
    methods = [n["method"] for n in client.notifications]
    assert methods == ["notifications/progress"] * 3 + ["notifications/message"]
    assert [n["params"]["progress"] for n in client.notifications[:3]] == [0, 1, 2]
    assert client.notifications[3]["params"] == {"level": "warning", "data": "warning line"}


async def test_bad_log_level_is_invalid_params(client: MemoryClient) -> None:
    meta = client.meta(**{"io.modelcontextprotocol/logLevel": "loud"})
    response = await client.request("tools/list", meta=meta, malformed=True)
    assert response["error"]["code"] == -32602


async def test_prompts(client: MemoryClient) -> None:
    listed = (await client.result("prompts/list"))["prompts"]
    assert listed == [
        {
            "name": "greet",
            "description": "Greets",
            "arguments": [{"name": "name", "required": True}, {"name": "polite", "required": False}],
        }
    ]
    got = await client.result("prompts/get", {"name": "greet", "arguments": {"name": "Ada"}})
    assert got["messages"] == [{"role": "user", "content": {"type": "text", "text": "Hello Ada!"}}]
    missing = await client.request("prompts/get", {"name": "greet", "arguments": {}})
    assert missing["error"]["code"] == -32602
    assert "name" in missing["error"]["message"]
    unknown = await client.request("prompts/get", {"name": "nope"})
    assert unknown["error"]["code"] == -32602


async def test_resources(client: MemoryClient) -> None:
    listed = (await client.result("resources/list"))["resources"]
    assert [r["uri"] for r in listed] == ["test://text", "test://blob"]
    templates = (await client.result("resources/templates/list"))["resourceTemplates"]
    assert templates == [{"uriTemplate": "test://items/{item_id}", "name": "item"}]
    text = (await client.result("resources/read", {"uri": "test://text"}))["contents"][0]
    assert text == {"uri": "test://text", "mimeType": "text/plain", "text": "plain"}
    blob = (await client.result("resources/read", {"uri": "test://blob"}))["contents"][0]
    assert blob["blob"] == "AAE="
    item = (await client.result("resources/read", {"uri": "test://items/42"}))["contents"][0]
    assert item["text"] == '{"id":"42"}'
    missing = await client.request("resources/read", {"uri": "test://missing"})
    assert missing["error"] == {
        "code": -32602,
        "message": "Resource not found: test://missing",
        "data": {"uri": "test://missing"},
    }


async def test_completion(client: MemoryClient) -> None:
    result = await client.result(
        "completion/complete",
        {"ref": {"type": "ref/prompt", "name": "greet"}, "argument": {"name": "name", "value": "al"}},
    )
    assert result["completion"]["values"] == ["alpha"]
    bad = await client.request(
        "completion/complete", {"ref": {"type": "ref/other"}, "argument": {"name": "x"}}, malformed=True
    )
    assert bad["error"]["code"] == -32602


def test_definition_errors() -> None:
    app = Server("x")
    with pytest.raises(ValueError, match="1-128 characters"):
        app.tool(name="has space")(lambda: None)

    async def dup() -> str:
        return ""

    app.tool()(dup)
    with pytest.raises(ValueError, match="already registered"):
        app.tool()(dup)
    with pytest.raises(ValueError, match="placeholders"):
        app.resource("test://{a}")(lambda b: b)
    with pytest.raises(ValueError, match="no placeholders"):
        app.resource("test://plain")(lambda b: b)
    with pytest.raises(ValueError, match="x-mcp-header"):
        app.tool(
            name="bad_header",
            input_schema={"type": "object", "properties": {"n": {"type": "number", "x-mcp-header": "N"}}},
        )(lambda: None)


async def test_concurrent_requests_do_not_share_state(wire: WireChecker) -> None:
    app = build()
    clients = [MemoryClient(app, checker=wire) for _ in range(5)]
    results = await asyncio.gather(
        *(c.result("tools/call", {"name": "add", "arguments": {"a": i}}) for i, c in enumerate(clients))
    )
    assert [r["content"][0]["text"] for r in results] == [str(i + 2) for i in range(5)]


# --- start-up: a configured store is checked, the default one is left alone -----------


class _BrokenStore(MemoryStore):
    async def get(self, namespace: str, key: str) -> bytes | None:
        raise OSError("disk on fire")


async def test_start_checks_a_configured_store() -> None:
    server = Server("s", store=_BrokenStore())
    with pytest.raises(ConfigError, match="the URL-mode store _BrokenStore cannot be used: disk on fire"):
        await server.start()
    await Server("s", store=MemoryStore()).start()  # a working one passes


async def test_start_refuses_a_store_that_can_be_read_but_not_written(redis_url: str) -> None:
    from redis.asyncio import Redis

    user = f"reader-{uuid.uuid4().hex[:8]}"
    admin = Redis.from_url(redis_url)
    try:
        await admin.execute_command("ACL", "SETUSER", user, "on", ">pw", "~*", "&*", "+@read", "+@connection")
        reader = redis_url.replace("redis://", f"redis://{user}:pw@")
        server = Server("s", store=reader)
        with pytest.raises(
            ConfigError, match=r"redis://reader-\w+:\*\*\*@.* cannot be used: .*(NOPERM|permission)"
        ):
            await server.start()
    finally:
        await admin.execute_command("ACL", "DELUSER", user)
        await admin.aclose()


async def test_start_leaves_the_default_store_unopened() -> None:
    server = Server("s")
    await server.start()
    assert server.url_mode._store is None  # no file created for a server without URL mode


# --- stop: a store the server opened itself is closed, one it was given is not ----------


def _sqlite_threads() -> int:
    return sum(t.name.startswith("mcp-elicit-sqlite") for t in threading.enumerate())


async def test_stop_closes_a_sqlite_store_opened_from_its_url(tmp_path: Path) -> None:
    before = _sqlite_threads()
    server = Server("s", store=f"sqlite://{tmp_path}/state.db")
    await server.start()
    assert _sqlite_threads() == before + 1
    await server.stop()
    assert _sqlite_threads() == before, "the worker thread of the store is gone"
    await server.start()  # a server started again opens it again, and finds what it kept
    try:
        await server.url_mode.store.put("flow", "k", b"v")
        assert await server.url_mode.store.get("flow", "k") == b"v"
    finally:
        await server.stop()
    assert _sqlite_threads() == before


async def test_stop_closes_the_default_store_once_opened(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path))
    before = _sqlite_threads()
    server = Server("s")
    await server.start()
    await server.url_mode.store.put("flow", "k", b"v")  # what the first URL-mode request does
    assert _sqlite_threads() == before + 1
    await server.stop()
    assert _sqlite_threads() == before


async def test_stop_closes_a_redis_store_opened_from_its_url(redis_url: str) -> None:
    from redis.asyncio import Redis

    admin = Redis.from_url(redis_url)
    try:
        before = len(await admin.client_list())
        server = Server("s", store=f"{redis_url}?prefix=test-{uuid.uuid4().hex[:12]}")
        await server.start()
        assert server.relay.listening is not None
        await asyncio.wait_for(server.relay.listening.wait(), 5.0)
        await server.url_mode.store.put("flow", "k", b"v")  # a pooled connection besides the relay's
        assert len(await admin.client_list()) >= before + 2
        await server.stop()
        assert len(await admin.client_list()) == before, "every connection of the store is closed"
    finally:
        await admin.aclose()


async def test_stop_leaves_a_store_object_to_its_owner(tmp_path: Path) -> None:
    store = SqliteStore(tmp_path / "state.db")
    try:
        server = Server("s", store=store)
        await server.start()
        await server.stop()
        await store.put("flow", "k", b"still open")
        assert await store.get("flow", "k") == b"still open"
    finally:
        await store.close()


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


@pytest.mark.parametrize(
    "uri", ["", "notes", "relative/path", "//host/x", "1x://a", "test://x y", "test://a\nb"]
)
def test_a_resource_uri_must_be_an_absolute_uri(uri: str) -> None:
    """resources/list sends a fixed resource's URI as a URI (RFC 3986: a scheme, then no
    space nor control character): one that is not would reach every client as a listing
    a strict one rejects, so registering it is the author's error, named."""
    app = Server("x")
    with pytest.raises(ValueError, match="is not an absolute URI"):
        app.resource(uri)(lambda: "x")


def test_a_resource_uri_of_any_scheme_is_taken() -> None:
    app = Server("x")
    for uri in ("test://x", "file:///tmp/a%20b.txt", "urn:isbn:0451450523", "custom+v1.x-y:opaque"):
        app.resource(uri)(lambda: "x")
    app.resource("{+anything}")(lambda anything: anything)  # a template may be a catch-all


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
