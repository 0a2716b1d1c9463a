"""The server framework, driven in memory: discovery, tools, their schemas, results and
failures, prompts, resources and completion. Every message is checked against the schema."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from decimal import Decimal
from typing import Annotated, Any

import pytest
from mcp_types import EmbeddedResource, TextResourceContents
from pydantic import BaseModel, Field

from mcp_elicit import Audio, Blob, Context, Image, Server, ToolError

from support.memory import MemoryClient
from support.server_app import Point
from support.wire import WireChecker

pytestmark = pytest.mark.anyio


@dataclass
class Weather:
    city: str
    celsius: float


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
    ("nan", "1e999") is refused like any other argument that does not fit (for a float,
    as text; for a Decimal, whose schema allows text, as not finite), so a handler's
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
    tried: list[tuple[dict[str, object], str]] = [
        ({"amount": sent}, "amount: Input should be a valid number")
    ]
    if "e" not in sent:  # a Decimal holds 1e999 as it is: only its NaN and infinities are refused
        tried.append(({"amount": 1, "cap": sent}, "cap: Input should be a finite number"))
    for arguments, fault in tried:
        result = await client.result("tools/call", {"name": "pay", "arguments": arguments})
        assert result.get("isError") is True, result
        assert fault in result["content"][0]["text"], result
    assert spent == []
    read = await client.request("resources/read", {"uri": f"test://price/{sent}"})
    assert read["error"]["code"] == -32602, read
    got = await client.request("prompts/get", {"name": "budget", "arguments": {"amount": sent}})
    assert got["error"]["code"] == -32602 and "finite" in got["error"]["message"], got
    assert (await client.result("tools/call", {"name": "pay", "arguments": {"amount": 12.5}}))["content"][0][
        "text"
    ] == "paid"


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


@pytest.mark.parametrize("token", [1.5, True, "", ["p"], {"p": 1}], ids=str)
async def test_a_progress_token_neither_string_nor_integer_is_invalid_params(
    client: MemoryClient, token: Any
) -> None:
    """The spec: progress tokens MUST be a string or an integer. One of another type was
    ignored in silence (no progress, and nothing said why); it is -32602 naming the key.
    (The empty string is a string: it is a token, the one case here that passes.)"""
    meta = client.meta(progressToken=token)
    response = await client.request("tools/call", {"name": "slow"}, meta=meta, malformed=True)
    if token == "":
        assert [n["params"]["progressToken"] for n in client.notifications] == [""] * 3
        return
    assert response["error"]["code"] == -32602
    assert "progressToken" in response["error"]["message"]
    assert client.notifications == []


@pytest.mark.parametrize(("token", "sent"), [(None, None), (2.0, 2)], ids=["null", "2.0"])
async def test_a_null_progress_token_is_none_and_an_integral_number_is_one(
    client: MemoryClient, token: Any, sent: int | None
) -> None:
    """A null progressToken is read as no token, as a null logLevel is no level; 2.0 is the
    integer 2 to JSON Schema, and the notifications carry it."""
    meta = client.meta(progressToken=token)
    response = await client.request("tools/call", {"name": "slow"}, meta=meta, malformed=token is None)
    assert "result" in response, response
    tokens = [n["params"]["progressToken"] for n in client.notifications]
    assert tokens == ([] if sent is None else [sent] * 3)


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
