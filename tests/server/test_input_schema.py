"""Tools with an explicit ``input_schema=``: the arguments are checked against it."""

from __future__ import annotations

import asyncio
import logging
from typing import Any

import pytest

from mcp_elicit import Server

from support.memory import MemoryClient
from support.raw_http import Seen, raw_server, response
from support.wire import WireChecker

pytestmark = pytest.mark.anyio

CONTACT = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "type": "object",
    "$defs": {"phone": {"type": "string", "pattern": "^[+0-9 ]{6,}$"}},
    "properties": {
        "name": {"type": "string", "minLength": 1},
        "method": {"enum": ["phone", "email"]},
        "phone": {"$ref": "#/$defs/phone"},
        "email": {"type": "string", "format": "email"},
        "tags": {"type": "array", "items": {"type": "string"}, "maxItems": 2},
    },
    "required": ["name", "method"],
    "if": {"properties": {"method": {"const": "phone"}}},
    "then": {"required": ["phone"]},
    "else": {"required": ["email"]},
    "additionalProperties": False,
}


def build() -> Server:
    app = Server("schemas")
    calls: list[dict[str, Any]] = []
    app.calls = calls  # type: ignore[attr-defined]

    @app.tool(input_schema=CONTACT)
    def contact(
        name: str,
        method: str,
        phone: str | None = None,
        email: str | None = None,
        tags: list[str] | None = None,
    ) -> str:
        calls.append({"name": name, "method": method})
        return f"contacting {name} by {method}"

    @app.tool(
        input_schema={
            "$schema": "http://json-schema.org/draft-07/schema#",
            "type": "object",
            "properties": {"n": {"type": "integer", "exclusiveMinimum": 0}},
        }
    )
    def positive(n: int = 1) -> str:
        return str(n)

    @app.tool(
        input_schema={"type": "object", "properties": {"x": {"$ref": "https://schemas.invalid/x.json"}}}
    )
    def remote(x: Any = None) -> str:
        return "ran"

    return app


@pytest.fixture
def app() -> Server:
    return build()


@pytest.fixture
def client(app: Server, wire: WireChecker) -> MemoryClient:
    return MemoryClient(app, checker=wire)


async def test_arguments_that_fit_reach_the_function(app: Server, client: MemoryClient) -> None:
    result = await client.result(
        "tools/call",
        {"name": "contact", "arguments": {"name": "Ada", "method": "phone", "phone": "+45 1234"}},
    )
    assert "isError" not in result or result["isError"] is False
    assert result["content"][0]["text"] == "contacting Ada by phone"
    # format is an annotation (JSON Schema 2020-12's default), not asserted
    result = await client.result(
        "tools/call",
        {"name": "contact", "arguments": {"name": "Ada", "method": "email", "email": "not-an-email"}},
    )
    assert result["content"][0]["text"] == "contacting Ada by email"
    assert len(app.calls) == 2  # type: ignore[attr-defined]


@pytest.mark.parametrize(
    ("arguments", "fragments"),
    [
        ({}, ["arguments: 'name' is a required property", "'method' is a required property"]),
        ({"name": "Ada", "method": "phone"}, ["'phone' is a required property"]),
        ({"name": "Ada", "method": "email"}, ["'email' is a required property"]),
        ({"name": "Ada", "method": "fax", "email": "a@b.c"}, ["arguments['method']: 'fax' is not one of"]),
        ({"name": "Ada", "method": "phone", "phone": "12"}, ["arguments['phone']: '12' does not match"]),
        ({"name": "", "method": "email", "email": "a@b.c"}, ["arguments['name']: '' should be non-empty"]),
        (
            {"name": "Ada", "method": "email", "email": "a@b.c", "tags": ["a", 5, "c"]},
            [
                "arguments['tags']: ['a', 5, 'c'] is too long",
                "arguments['tags'][1]: 5 is not of type 'string'",
            ],
        ),
        (
            {"name": "Ada", "method": "email", "email": "a@b.c", "extra": 1},
            ["Additional properties are not allowed ('extra' was unexpected)"],
        ),
    ],
)
async def test_arguments_that_do_not_fit_are_a_tool_error_saying_why(
    app: Server, client: MemoryClient, arguments: dict[str, Any], fragments: list[str]
) -> None:
    result = await client.result("tools/call", {"name": "contact", "arguments": arguments})
    assert result["isError"] is True
    text = result["content"][0]["text"]
    assert text.startswith("contact: Invalid arguments: ")
    for fragment in fragments:
        assert fragment in text, text
    assert app.calls == []  # type: ignore[attr-defined]


async def test_faults_are_listed_up_to_five(client: MemoryClient) -> None:
    arguments = {"name": 1, "method": 2, "phone": 3, "email": 4, "tags": 5, "a": 6, "b": 7}
    result = await client.result("tools/call", {"name": "contact", "arguments": arguments})
    text = result["content"][0]["text"]
    assert result["isError"] is True
    assert text.count("arguments") == 1 + 5 and text.endswith("more)"), text


async def test_the_dialect_is_the_one_the_schema_names(client: MemoryClient) -> None:
    ok = await client.result("tools/call", {"name": "positive", "arguments": {"n": 3}})
    assert ok["content"][0]["text"] == "3"
    bad = await client.result("tools/call", {"name": "positive", "arguments": {"n": 0}})
    assert bad["isError"] is True
    assert "arguments['n']: 0 is less than or equal to the minimum of 0" in bad["content"][0]["text"]


async def test_a_remote_reference_is_never_fetched(
    client: MemoryClient, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.ERROR, logger="mcp_elicit.server")
    result = await client.result("tools/call", {"name": "remote", "arguments": {"x": 1}})
    assert result["isError"] is True
    text = result["content"][0]["text"]
    assert "https://schemas.invalid/x.json" in text and "never fetched" in text
    assert "cannot be resolved" in caplog.text
    local = Server("l")
    schema = {"type": "object", "properties": {"x": {"$ref": "#/$defs/missing"}}}
    local.tool(name="local", input_schema=schema)(lambda x=None: "ran")
    check = local._tools["local"].check_arguments
    assert check is not None
    problem = check({"x": 1})
    assert problem is not None and "#/$defs/missing" in problem and "resolved inside the schema" in problem
    # a call that does not reach the reference is checked as usual
    fine = await client.result("tools/call", {"name": "remote", "arguments": {}})
    assert fine["content"][0]["text"] == "ran"


async def test_a_remote_reference_is_not_fetched_even_from_a_server_that_answers() -> None:
    """A ``$ref`` naming a URL that serves a schema (here a real server on 127.0.0.1) is
    not fetched: the check says it cannot be resolved, and the server sees no request
    (the spec's MUST NOT for non-local references). Before: jsonschema's deprecated
    resolver fetched it on every check, and the arguments were held to what it served."""

    async def serve(seen: Seen, writer: asyncio.StreamWriter) -> None:
        writer.write(response("200 OK", {"Content-Type": "application/json"}, b'{"type": "string"}'))
        await writer.drain()

    async with raw_server(serve) as raw:
        url = f"http://127.0.0.1:{raw.port}/x.json"
        app = Server("fetching")
        app.tool(name="remote", input_schema={"type": "object", "properties": {"x": {"$ref": url}}})(
            lambda x=None: "ran"
        )
        check = app._tools["remote"].check_arguments
        assert check is not None
        problem = await asyncio.wait_for(asyncio.to_thread(check, {"x": 1}), 10)
    assert raw.seen == []
    assert problem is not None and url in problem and "never fetched" in problem


@pytest.mark.parametrize(
    ("schema", "fragment"),
    [
        ({"type": "object", "properties": {"n": {"type": "integr"}}}, "at properties/n/type"),
        ({"type": "object", "required": "name"}, "at required: 'name' is not of type 'array'"),
        ({"type": "object", "properties": {"n": {"minimum": "zero"}}}, "at properties/n/minimum"),
    ],
)
def test_a_schema_that_is_not_json_schema_is_refused_when_the_tool_is_defined(
    schema: dict[str, Any], fragment: str
) -> None:
    app = Server("x")
    with pytest.raises(ValueError, match="tool 'bad': input_schema is not a valid JSON Schema") as caught:
        app.tool(name="bad", input_schema=schema)(lambda: None)
    assert fragment in str(caught.value)


async def test_derived_schemas_are_not_checked_twice(client: MemoryClient) -> None:
    """Only explicit schemas compile a validator; a derived one is the signature's."""
    app = Server("y")

    @app.tool()
    def add(a: int, b: int = 1) -> int:
        return a + b

    assert app._tools["add"].check_arguments is None
    assert build()._tools["contact"].check_arguments is not None


def test_an_unknown_dialect_is_checked_as_2020_12_and_logged(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.WARNING, logger="mcp_elicit.server")
    app = Server("z")
    schema = {
        "$schema": "https://dialects.invalid/v9",
        "type": "object",
        "properties": {"n": {"type": "integer"}},
    }
    app.tool(name="odd", input_schema=schema)(lambda n=0: str(n))
    assert "unknown dialect 'https://dialects.invalid/v9'" in caplog.text
    check = app._tools["odd"].check_arguments
    assert check is not None
    assert check({"n": 1}) is None
    assert check({"n": "one"}) == "arguments['n']: 'one' is not of type 'integer'"
