"""A tool's arguments are held to the ``inputSchema`` it publishes, read as JSON Schema
reads it: a value of the wrong JSON type is refused (an ``isError`` result naming the
argument, so the model can correct the call), never coerced; a ``date-time`` carries an
offset and a ``date`` is a calendar date, wherever they sit. What the schema allows still
reaches the function as the type it declares. Driven in memory, every message checked
against the schema."""

from __future__ import annotations

import datetime as dt
import enum
import uuid
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Annotated, Any, Literal

import orjson
import pydantic
import pytest
from typing_extensions import TypedDict

from mcp_elicit import Field, Server
from mcp_elicit.wire import jsonrpc

from support.memory import MemoryClient
from support.wire import WireChecker

pytestmark = pytest.mark.anyio


class Colour(enum.StrEnum):
    RED = "red"
    BLUE = "blue"


class Level(enum.IntEnum):
    LOW = 1
    HIGH = 2


class Window(TypedDict):
    start: int
    note: str


@dataclass
class Slot:
    at: dt.datetime
    seats: int = 1


class Trip(pydantic.BaseModel):
    on: dt.date
    days: list[dt.date] = []


@dataclass
class Node:
    at: dt.datetime
    children: list[Node] = field(default_factory=list)


class Cat(pydantic.BaseModel):
    kind: Literal["cat"]
    lives: int


class Dog(pydantic.BaseModel):
    kind: Literal["dog"]
    good: bool


def text(result: dict[str, Any]) -> str:
    return str(result["content"][0]["text"])


def build() -> Server:
    app = Server("arguments")

    @app.tool()
    async def plain(count: int, ratio: float, flag: bool, name: str) -> str:
        return repr((count, ratio, flag, name))

    @app.tool()
    async def when(at: dt.datetime, day: dt.date | None = None) -> str:
        return repr((at, day))

    @app.tool()
    async def shapes(
        colour: Colour,
        level: Level,
        kind: Literal["a", "b"],
        window: Window,
        slot: Slot,
        trip: Trip,
        key: uuid.UUID,
        amount: Decimal,
        pair: tuple[int, str],
        tags: set[str],
        times: list[dt.datetime] | None = None,
        maybe: int | None = None,
        either: int | str = 0,
        fallback: str = "none",
    ) -> str:
        return repr(
            (
                colour,
                level,
                kind,
                window,
                slot,
                trip,
                key,
                amount,
                pair,
                sorted(tags),
                times,
                maybe,
                either,
                fallback,
            )
        )

    @app.tool()
    async def stamped(at: Annotated[str, Field(format="date-time")]) -> str:
        return at

    @app.tool()
    async def nested(key: uuid.UUID, nest: list[Any]) -> str:
        depth, inside = 0, nest
        while isinstance(inside, list):
            depth, inside = depth + 1, inside[0] if inside else None
        return f"{key} {depth}"

    @app.tool()
    async def kinds(
        node: Node,
        names: dict[int, str],
        pet: Annotated[Cat | Dog, pydantic.Field(discriminator="kind")],
    ) -> str:
        return repr((node, names, pet))

    @app.tool()
    async def picks(
        size: Literal[1, 2] = 1,
        on: Literal[True] = True,
        either: Literal[1, True] = 1,
        sizes: Literal[1, 2] | list[int] = 1,
        level: Level | str = "none",
        ranks: dict[Level, str] | None = None,
    ) -> str:
        return repr((size, on, either, ranks))

    @app.prompt()
    async def repeat(word: str, times: int) -> str:
        return word * times

    return app


KEY = "12345678-1234-5678-1234-567812345678"

SHAPES: dict[str, Any] = {
    "colour": "red",
    "level": 2,
    "kind": "b",
    "window": {"start": 3, "note": "n"},
    "slot": {"at": "2026-01-01T10:00:00Z"},
    "trip": {"on": "2026-03-01"},
    "key": "12345678-1234-5678-1234-567812345678",
    "amount": "1.50",
    "pair": [1, "x"],
    "tags": ["b", "a"],
}


async def call(client: MemoryClient, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    return await client.result("tools/call", {"name": name, "arguments": arguments})


@pytest.mark.parametrize(
    ("arguments", "fault"),
    [
        ({"count": "3"}, "count: Input should be a valid integer"),
        ({"count": 1.5}, "count: Input should be a valid integer"),
        ({"count": True}, "count: Input should be a valid integer"),
        ({"ratio": "0.5"}, "ratio: Input should be a valid number"),
        ({"ratio": False}, "ratio: Input should be a valid number"),
        ({"flag": "true"}, "flag: Input should be a valid boolean"),
        ({"flag": 1}, "flag: Input should be a valid boolean"),
        ({"name": 3}, "name: Input should be a valid string"),
    ],
)
async def test_a_value_of_the_wrong_json_type_is_refused_not_coerced(
    wire: WireChecker, arguments: dict[str, Any], fault: str
) -> None:
    """It was coerced: ``"3"`` reached the function as 3, ``"true"`` as True, 3 as ``"3"``."""
    client = MemoryClient(build(), checker=wire)
    refused = await call(client, "plain", {"count": 1, "ratio": 0.5, "flag": True, "name": "n", **arguments})
    assert refused.get("isError") is True, text(refused)
    assert text(refused).startswith("plain: Invalid arguments: ") and fault in text(refused), text(refused)


async def test_every_fault_of_a_call_is_listed(wire: WireChecker) -> None:
    client = MemoryClient(build(), checker=wire)
    refused = await call(client, "plain", {"count": "1", "ratio": "1", "flag": "no", "name": 1})
    assert refused.get("isError") is True
    for name in ("count", "ratio", "flag", "name"):
        assert f"{name}: Input should be" in text(refused), text(refused)


async def test_what_json_schema_allows_reaches_the_function_as_its_type(wire: WireChecker) -> None:
    """An integer for a number, and an integer written ``1.0`` (JSON Schema's integer)."""
    client = MemoryClient(build(), checker=wire)
    done = await call(client, "plain", {"count": 2.0, "ratio": 2, "flag": False, "name": "n"})
    assert text(done) == repr((2, 2.0, False, "n"))


@pytest.mark.parametrize(
    ("at", "fault"),
    [
        ("2026-01-01T10:00:00", "at: Value error, must be a date and time with a time zone"),
        ("2026-01-01 10:00Z", "at: Value error, must be a date and time with a time zone"),
        ("2026-01-01T10:00Z", "at: Value error, must be a date and time with a time zone"),
        ("2026-02-30T10:00:00Z", "at: Value error, names a day that does not exist (2026-02-30)"),
        ("2026-01-01T12:00:60Z", "at: Value error, can have second 60 only as a leap second"),
        (1767261600, "at: Input should be a valid datetime"),
    ],
)
async def test_a_date_time_without_an_offset_is_refused(wire: WireChecker, at: Any, fault: str) -> None:
    """It reached a ``datetime`` parameter as a naive datetime (and ``10:00Z``, with a
    space or no seconds, which RFC 3339 does not allow, as an aware one)."""
    client = MemoryClient(build(), checker=wire)
    refused = await call(client, "when", {"at": at})
    assert refused.get("isError") is True, text(refused)
    assert fault in text(refused), text(refused)


async def test_a_date_time_with_an_offset_reaches_the_function_aware(wire: WireChecker) -> None:
    client = MemoryClient(build(), checker=wire)
    done = await call(client, "when", {"at": "2026-01-01T10:00:00.5+02:00", "day": "2026-02-28"})
    offset = dt.timezone(dt.timedelta(hours=2))
    assert text(done) == repr(
        (dt.datetime(2026, 1, 1, 10, 0, 0, 500000, tzinfo=offset), dt.date(2026, 2, 28))
    )
    leap = await call(client, "when", {"at": "2016-12-31T23:59:60Z"})
    assert text(leap) == repr((dt.datetime(2016, 12, 31, 23, 59, 59, 999999, tzinfo=dt.UTC), None))


@pytest.mark.parametrize(
    ("day", "fault"),
    [
        ("2026-02-30", "day: Value error, names a day that does not exist"),
        ("2026-1-5", "day: Value error, must be written YYYY-MM-DD, as 2026-01-05"),
        ("2026-01-05T00:00:00Z", "day: Value error, must be a date like 2026-12-31"),
        (20260105, "day: Input should be a valid date"),
    ],
)
async def test_a_date_must_be_a_calendar_date(wire: WireChecker, day: Any, fault: str) -> None:
    client = MemoryClient(build(), checker=wire)
    refused = await call(client, "when", {"at": "2026-01-01T10:00:00Z", "day": day})
    assert refused.get("isError") is True, text(refused)
    assert fault in text(refused), text(refused)


async def test_what_strict_checking_must_still_accept(wire: WireChecker) -> None:
    """A str Enum's and an IntEnum's value, a Literal, a TypedDict, a dataclass and a
    model as JSON objects, a UUID and a Decimal as text, an array for a tuple and a set,
    and defaults for what is left out."""
    client = MemoryClient(build(), checker=wire)
    done = await call(client, "shapes", SHAPES)
    assert done.get("isError") is None, text(done)
    assert text(done) == repr(
        (
            Colour.RED,
            Level.HIGH,
            "b",
            {"start": 3, "note": "n"},
            Slot(at=dt.datetime(2026, 1, 1, 10, tzinfo=dt.UTC)),
            Trip(on=dt.date(2026, 3, 1)),
            uuid.UUID("12345678-1234-5678-1234-567812345678"),
            Decimal("1.50"),
            (1, "x"),
            ["a", "b"],
            None,
            None,
            0,
            "none",
        )
    )
    given = {"times": None, "maybe": None, "either": "5", "fallback": "f"}
    nulls = await call(client, "shapes", {**SHAPES, **given})
    assert text(nulls).endswith("None, None, '5', 'f')"), text(nulls)
    whole = await call(client, "shapes", {**SHAPES, "either": 2.0})
    assert text(whole).endswith("None, None, 2, 'none')"), text(whole)


KINDS: dict[str, Any] = {
    "node": {"at": "2026-01-01T10:00:00Z", "children": [{"at": "2026-01-01T11:00:00+01:00"}]},
    "names": {"1": "one"},
    "pet": {"kind": "cat", "lives": 9},
}


async def test_a_recursive_class_an_integer_key_and_a_tagged_union_are_read(wire: WireChecker) -> None:
    """A recursive dataclass (held once, referred to), an object whose keys are integers
    (as text: JSON's keys are), and a union told apart by a field."""
    client = MemoryClient(build(), checker=wire)
    done = await call(client, "kinds", KINDS)
    inner = Node(at=dt.datetime(2026, 1, 1, 11, tzinfo=dt.timezone(dt.timedelta(hours=1))))
    expected = (
        Node(at=dt.datetime(2026, 1, 1, 10, tzinfo=dt.UTC), children=[inner]),
        {1: "one"},
        Cat(kind="cat", lives=9),
    )
    assert text(done) == repr(expected), text(done)
    for change, fault in [
        (
            {"node": {"at": "2026-01-01T10:00:00Z", "children": [{"at": "2026-01-01T11:00:00"}]}},
            "node.children.0.at: Value error, must be a date and time",
        ),
        ({"names": {"one": "one"}}, "names.one.[key]: Input should be a valid integer"),
        ({"pet": {"kind": "dog", "good": "yes"}}, "pet.dog.good: Input should be a valid boolean"),
    ]:
        refused = await call(client, "kinds", {**KINDS, **change})
        assert refused.get("isError") is True and fault in text(refused), text(refused)


@pytest.mark.parametrize(
    ("change", "fault"),
    [
        ({"colour": "green"}, "colour: Input should be 'red' or 'blue'"),
        ({"level": "2"}, "level: Input should be 1 or 2"),
        ({"kind": "c"}, "kind: Input should be 'a' or 'b'"),
        ({"window": {"start": "3", "note": "n"}}, "window.start: Input should be a valid integer"),
        (
            {"slot": {"at": "2026-01-01T10:00:00"}},
            "slot.at: Value error, must be a date and time with a time zone",
        ),
        (
            {"slot": {"at": "2026-01-01T10:00:00Z", "seats": "2"}},
            "slot.seats: Input should be a valid integer",
        ),
        ({"trip": {"on": "2026-03-01", "days": [20260301]}}, "trip.days.0: Input should be a valid date"),
        (
            {"times": ["2026-01-01T10:00:00Z", "2026-01-01T11:00:00"]},
            "times.1: Value error, must be a date and",
        ),
        ({"maybe": "4"}, "maybe: Input should be a valid integer"),
        ({"pair": [1, 2]}, "pair.1: Input should be a valid string"),
        (
            {"either": 1.5},
            "either.int: Input should be a valid integer; either.str: Input should be a valid string",
        ),
    ],
)
async def test_nested_values_are_held_to_the_schema_too(
    wire: WireChecker, change: dict[str, Any], fault: str
) -> None:
    client = MemoryClient(build(), checker=wire)
    refused = await call(client, "shapes", {**SHAPES, **change})
    assert refused.get("isError") is True, text(refused)
    assert fault in text(refused), text(refused)


@pytest.mark.parametrize(
    ("tool", "arguments", "fault"),
    [
        ("shapes", {**SHAPES, "level": True}, "level: Input should be 1 or 2"),
        ("picks", {"size": True}, "size: Input should be 1 or 2"),
        ("picks", {"size": False}, "size: Input should be 1 or 2"),
        ("picks", {"on": 1}, "on: Input should be True"),
        ("picks", {"either": 0}, "either: Input should be 1 or True"),
    ],
)
async def test_a_boolean_is_not_a_number_in_a_literal_or_an_enum(
    wire: WireChecker, tool: str, arguments: dict[str, Any], fault: str
) -> None:
    """JSON Schema's ``enum``/``const`` tell ``true`` from ``1``: pydantic's strict check
    of a ``Literal`` or an ``IntEnum`` did not (``true`` reached the function as 1, and
    ``1`` as True)."""
    client = MemoryClient(build(), checker=wire)
    refused = await call(client, tool, arguments)
    assert refused.get("isError") is True, text(refused)
    assert fault in text(refused), text(refused)


@pytest.mark.parametrize(
    ("arguments", "fault"),
    [
        (
            {"sizes": 3},
            "sizes.literal[1,2]: Input should be 1 or 2; sizes.list[int]: Input should be a valid array",
        ),
        (
            {"level": 3},
            "level.int-enum[Level]: Input should be 1 or 2; level.str: Input should be a valid string",
        ),
    ],
)
async def test_a_fault_in_a_union_names_each_choice_as_its_type(
    wire: WireChecker, arguments: dict[str, Any], fault: str
) -> None:
    """Not by what the bind reads it with first (``sizes.literal``, ``sizes.list[function-
    before[_integer(), int]]``): the model is told the types the choices are."""
    client = MemoryClient(build(), checker=wire)
    refused = await call(client, "picks", arguments)
    assert refused.get("isError") is True, text(refused)
    assert fault in text(refused), text(refused)


async def test_a_literal_takes_its_values_as_json_schema_reads_them(wire: WireChecker) -> None:
    client = MemoryClient(build(), checker=wire)
    assert (
        text(await call(client, "picks", {"size": 2.0, "on": True, "either": True}))
        == "(2, True, True, None)"
    )
    assert text(await call(client, "picks", {"either": 1})) == "(1, True, 1, None)"
    assert text(await call(client, "picks", {"either": 1.0})) == "(1, True, 1, None)"
    keyed = await call(client, "picks", {"ranks": {"2": "high"}})  # an object's key is text
    assert text(keyed) == "(1, True, 1, {<Level.HIGH: 2>: 'high'})", text(keyed)


async def test_a_text_with_a_date_time_format_is_checked_and_kept_as_sent(wire: WireChecker) -> None:
    client = MemoryClient(build(), checker=wire)
    refused = await call(client, "stamped", {"at": "2026-01-01T10:00:00"})
    assert refused.get("isError") is True and "at: Value error, must be a date and time" in text(refused)
    done = await call(client, "stamped", {"at": "2026-01-01t10:00:00z"})
    assert text(done) == "2026-01-01t10:00:00z"


async def test_a_prompts_arguments_are_still_read_from_text(wire: WireChecker) -> None:
    """A prompt's arguments are strings on the wire (its listing gives no types): "3" is
    its integer 3, as before."""
    client = MemoryClient(build(), checker=wire)
    got = await client.result("prompts/get", {"name": "repeat", "arguments": {"word": "ab", "times": "3"}})
    assert got["messages"][0]["content"]["text"] == "ababab"


TOO_DEEP = "they nest objects and arrays more than 201 levels deep"


@pytest.mark.parametrize(
    ("key", "depth", "answer"),
    [
        (KEY, 200, f"{KEY} 200"),
        (7, 200, "key: UUID input should be a string"),
        (KEY, 201, TOO_DEEP),
        (KEY, 300, TOO_DEEP),
    ],
)
async def test_arguments_encoded_again_may_nest_as_deep_as_pydantic_reads(
    key: object, depth: int, answer: str
) -> None:
    """A UUID is taken from JSON text, so the arguments are encoded again for the check:
    deeper than pydantic reads JSON (or than orjson writes it, 255 levels), where a
    request may nest 512, is a tool error saying so, not a crash."""
    server = build()
    client = MemoryClient(server)
    params = {"name": "nested", "arguments": {"key": key, "nest": "DEEP"}, "_meta": client.meta()}
    message = orjson.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": params})
    decoded = jsonrpc.decode(message.replace(b'"DEEP"', b"[" * depth + b"]" * depth))
    assert isinstance(decoded, jsonrpc.Request)
    payload, _ = await server.respond(decoded, channel=client, principal=None, headers=None)
    result = orjson.loads(payload)["result"]
    assert answer in text(result), text(result)
    assert result.get("isError") is (None if answer.startswith(KEY) else True)
