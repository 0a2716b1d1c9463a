"""What a tool returns that JSON cannot carry as it is: a set in structured content is a
JSON array; bytes, or an object with no text or JSON form, make an ``isError`` result
naming the tool, what it returned and what to return instead (logged too), never a
JSON-RPC "Internal error" whose reason only the server log holds, nor an object's repr
sent as text. Driven in memory, every message checked against the schema."""

from __future__ import annotations

import datetime
import enum
import logging
from collections.abc import AsyncIterator
from dataclasses import dataclass
from dataclasses import field as dataclass_field
from typing import Annotated, Any, TypedDict

import jsonschema
import orjson
import pydantic
import pytest
from pydantic import Field

from mcp_elicit import Server

from support.memory import MemoryClient
from support.wire import WireChecker

pytestmark = pytest.mark.anyio


@dataclass
class Tagged:
    name: str
    tags: frozenset[str]


@dataclass
class Raw:
    name: str
    payload: bytes


@dataclass
class Booking:
    guests: Annotated[int, Field(ge=1, le=20, description="Party size")]


class Stay(TypedDict):
    nights: int


class Opaque:
    """No ``__str__`` or ``__repr__`` of its own: its text would be ``<Opaque object at 0x...>``."""


def build() -> Server:
    app = Server("results")

    @app.tool()
    async def tagged() -> Tagged:
        return Tagged("a", frozenset({"x"}))

    @app.tool()
    async def mapping_with_a_set() -> dict[str, Any]:
        return {"ids": {3}}

    @app.tool()
    async def raw() -> Raw:
        return Raw("a", b"\x00")

    @app.tool()
    async def mapping_with_bytes() -> dict[str, Any]:
        return {"payload": b"\x00"}

    @app.tool()
    async def bare_bytes() -> object:
        return b"\x00"

    @app.tool()
    async def opaque() -> object:
        return Opaque()

    async def lookup() -> str:
        return "found"

    @app.tool()
    async def not_awaited() -> object:
        return lookup()  # the await forgotten

    @app.tool()
    async def generated() -> object:
        return (n for n in range(3))

    async def numbers() -> AsyncIterator[int]:
        yield 1

    @app.tool()
    async def async_generated() -> object:
        return numbers()

    return app


async def test_a_set_in_structured_content_is_a_json_array(wire: WireChecker) -> None:
    client = MemoryClient(build(), checker=wire)
    result = await client.result("tools/call", {"name": "tagged"})
    assert result["structuredContent"] == {"name": "a", "tags": ["x"]}
    assert "isError" not in result
    result = await client.result("tools/call", {"name": "mapping_with_a_set"})
    assert result["content"] == [{"type": "text", "text": '{"ids":[3]}'}]


@pytest.mark.parametrize(
    ("tool", "fragment"),
    [
        ("raw", "bytes have no JSON form"),
        ("mapping_with_bytes", "bytes have no JSON form"),
        ("bare_bytes", "wrapped in Image(...), Audio(...) or Blob(...)"),
        ("opaque", "an Opaque object has no text or JSON form"),
        (
            "not_awaited",
            "it is a coroutine (build.<locals>.lookup), never awaited: write 'return await lookup(...)'",
        ),
        ("generated", "a generator has no text or JSON form; return a list (list(...))"),
        (
            "async_generated",
            "an async_generator has no text or JSON form; return a list ([x async for x in ...])",
        ),
    ],
)
async def test_a_value_json_cannot_carry_is_a_tool_error_saying_so(
    wire: WireChecker, caplog: pytest.LogCaptureFixture, tool: str, fragment: str
) -> None:
    client = MemoryClient(build(), checker=wire)
    with caplog.at_level(logging.ERROR, logger="mcp_elicit.server"):
        result = await client.result("tools/call", {"name": tool})
    assert result["isError"] is True
    message = result["content"][0]["text"]
    assert message.startswith(f"{tool}: the function's return value cannot be sent: ")
    assert fragment in message
    assert any(fragment in r.getMessage() for r in caplog.records)


async def test_a_result_out_of_the_output_schema_its_type_gives_is_a_tool_error(
    wire: WireChecker, caplog: pytest.LogCaptureFixture
) -> None:
    """A dataclass or TypedDict is not checked when it is made: a result out of the bounds
    its outputSchema shows (or a TypedDict of the wrong shape) went out as
    structuredContent, breaking the schema the tool declared."""
    app = Server("bounds")
    returned: list[Any] = []

    @app.tool()
    async def booked() -> Booking:
        return returned[0]  # type: ignore[no-any-return]

    @app.tool()
    async def stayed() -> Stay:
        return returned[0]  # type: ignore[no-any-return]

    client = MemoryClient(app, checker=wire)
    tools = (await client.result("tools/list"))["tools"]
    assert tools[0]["outputSchema"]["properties"]["guests"]["minimum"] == 1
    for name, value, fragment in (
        ("booked", Booking(guests=0), "structuredContent['guests']: 0 is less than the minimum of 1"),
        ("stayed", {"nights": "two"}, "structuredContent['nights']: 'two' is not of type 'integer'"),
        ("stayed", {}, "structuredContent: 'nights' is a required property"),
    ):
        returned[:] = [value]
        with caplog.at_level(logging.ERROR, logger="mcp_elicit.server"):
            result = await client.result("tools/call", {"name": name})
        assert result["isError"] is True and "structuredContent" not in result, (name, result)
        message = result["content"][0]["text"]
        assert message == f"{name}: the result does not fit the tool's outputSchema: {fragment}"
        assert any(fragment in r.getMessage() for r in caplog.records)
    returned[:] = [Booking(guests=20)]
    assert (await client.result("tools/call", {"name": "booked"}))["structuredContent"] == {"guests": 20}


class Meal(enum.Enum):
    LUNCH = "lunch"
    DINNER = "dinner"


@dataclass
class Table:
    party_size: Annotated[int, Field(alias="partySize")]
    day: datetime.date
    meal: Meal
    stay: datetime.timedelta


class TableDict(TypedDict):
    party_size: Annotated[int, Field(alias="partySize")]
    day: datetime.date
    meal: Meal


class TableModel(pydantic.BaseModel):
    party_size: Annotated[int, Field(alias="partySize")]
    day: datetime.date
    meal: Meal


DAY = datetime.date(2026, 12, 5)


def tables() -> Server:
    app = Server("aliases")

    @app.tool()
    async def table() -> Table:
        return Table(party_size=4, day=DAY, meal=Meal.DINNER, stay=datetime.timedelta(hours=2))

    @app.tool()
    async def table_dict() -> TableDict:
        return {"party_size": 4, "day": DAY, "meal": Meal.DINNER}

    @app.tool()
    async def table_model() -> TableModel:
        return TableModel(partySize=4, day=DAY, meal=Meal.DINNER)

    return app


@pytest.mark.parametrize(
    ("tool", "extra"), [("table", {"stay": "PT2H"}), ("table_dict", {}), ("table_model", {})]
)
async def test_structured_content_is_written_as_its_output_schema_describes_it(
    wire: WireChecker, tool: str, extra: dict[str, Any]
) -> None:
    """The outputSchema names a field by its pydantic alias, and shows a date, an enum and
    a duration as pydantic writes them; structuredContent was written under the Python
    names (and a duration had no JSON form), so since results are checked against that
    schema, every call was an isError."""
    client = MemoryClient(tables(), checker=wire)
    tools = {t["name"]: t for t in (await client.result("tools/list"))["tools"]}
    schema = tools[tool]["outputSchema"]
    assert "partySize" in schema["properties"] and "party_size" not in schema["properties"]
    result = await client.result("tools/call", {"name": tool})
    assert "isError" not in result, result
    assert result["structuredContent"] == {"partySize": 4, "day": "2026-12-05", "meal": "dinner"} | extra
    jsonschema.validate(result["structuredContent"], schema)
    assert orjson.loads(result["content"][0]["text"]) == result["structuredContent"]


class Priced(pydantic.BaseModel):
    """Written otherwise than it is read: a computed field, a serializer changing the type,
    a field read under one name and written under another."""

    model_config = pydantic.ConfigDict(extra="forbid")
    net: int = Field(validation_alias="net_in", serialization_alias="netCents")
    when: datetime.datetime

    @pydantic.computed_field  # type: ignore[prop-decorator]
    @property
    def gross(self) -> int:
        return self.net * 2

    @pydantic.field_serializer("when")
    def _when(self, value: datetime.datetime) -> float:
        return value.timestamp()


async def test_the_output_schema_describes_what_is_written_not_what_is_read(wire: WireChecker) -> None:
    """The outputSchema describes structuredContent, which is the model as pydantic writes
    it: with its validation schema (what it reads), a computed field, a serializer's type or
    a serialization alias made every call an isError since results are checked."""
    app = Server("written")
    when = datetime.datetime(2026, 12, 5, tzinfo=datetime.UTC)

    @app.tool()
    async def priced() -> Priced:
        return Priced(net_in=3, when=when)

    client = MemoryClient(app, checker=wire)
    schema = (await client.result("tools/list"))["tools"][0]["outputSchema"]
    assert set(schema["properties"]) == {"netCents", "when", "gross"}
    result = await client.result("tools/call", {"name": "priced"})
    assert "isError" not in result, result
    assert result["structuredContent"] == {"netCents": 3, "when": when.timestamp(), "gross": 6}
    jsonschema.validate(result["structuredContent"], schema)


@dataclass
class Receipt:
    net: int
    total: int = dataclass_field(init=False)

    def __post_init__(self) -> None:
        self.total = self.net * 2


@dataclass
class TaxedReceipt(Receipt):
    tax: int = 1


class Loose(TypedDict):
    nights: int


async def test_structured_content_keeps_what_the_adapter_does_not_know(wire: WireChecker) -> None:
    """Written by the pydantic adapter of the return type, a dataclass lost its
    ``init=False`` fields and a subclass's own, and a TypedDict its other keys: sent before,
    allowed by the outputSchema (no additionalProperties), silently dropped."""
    app = Server("kept")

    @app.tool()
    async def receipt() -> Receipt:
        return TaxedReceipt(net=3)

    @app.tool()
    async def loose() -> Loose:
        return {"nights": 2, "breakfast": True}  # type: ignore[typeddict-unknown-key]

    client = MemoryClient(app, checker=wire)
    result = await client.result("tools/call", {"name": "receipt"})
    assert result["structuredContent"] == {"net": 3, "total": 6, "tax": 1}, result
    result = await client.result("tools/call", {"name": "loose"})
    assert result["structuredContent"] == {"nights": 2, "breakfast": True}, result
