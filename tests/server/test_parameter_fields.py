"""``mcp_elicit.Field`` on a tool's or a prompt's parameter: what it says reaches the
``inputSchema`` (as ``pydantic.Field`` would write it) and the check of the arguments; what
does not apply to the parameter is refused at registration, naming it. Driven in memory,
every message checked against the schema."""

from __future__ import annotations

import re
import typing
from dataclasses import dataclass
from typing import Annotated, Any, Literal

import pydantic
import pytest

from mcp_elicit import Field, Server

from support.memory import MemoryClient
from support.wire import WireChecker

pytestmark = pytest.mark.anyio


def text(result: dict[str, Any]) -> str:
    return str(result["content"][0]["text"])


def listed(result: dict[str, Any], name: str) -> dict[str, Any]:
    return next(t for t in result["tools"] if t["name"] == name)


def ours_and_pydantics() -> Server:
    app = Server("fields")

    @app.tool()
    async def ours(
        restaurant: Annotated[str, Field(description="Where", min_length=2, max_length=40)],
        guests: Annotated[int, Field(title="Party size", minimum=1, maximum=20)],
        share: Annotated[float | None, Field(minimum=0.5)] = None,
        tags: Annotated[list[str], Field(max_items=2)] = [],  # noqa: B006 (never changed)
        seats: list[Annotated[int, Field(minimum=1, description="A seat")]] = [],  # noqa: B006
    ) -> str:
        return repr((restaurant, guests, share, tags, seats))

    @app.tool()
    async def theirs(
        restaurant: Annotated[str, pydantic.Field(description="Where", min_length=2, max_length=40)],
        guests: Annotated[int, pydantic.Field(title="Party size", ge=1, le=20)],
        share: Annotated[float | None, pydantic.Field(ge=0.5)] = None,
        tags: Annotated[list[str], pydantic.Field(max_length=2)] = [],  # noqa: B006
        seats: list[Annotated[int, pydantic.Field(ge=1, description="A seat")]] = [],  # noqa: B006
    ) -> str:
        return repr((restaurant, guests, share, tags, seats))

    @app.tool()
    async def mail(to: Annotated[str, Field(format="email", description="Who")]) -> str:
        return to

    @app.prompt()
    async def greet(who: Annotated[str, Field(description="Whom to greet", min_length=1)]) -> str:
        return f"Hello {who}"

    return app


async def test_a_field_on_a_parameter_gives_what_pydantics_field_gives(wire: WireChecker) -> None:
    """It was ignored: ``{"type": "string"}``, no description, and no bound checked."""
    client = MemoryClient(ours_and_pydantics(), checker=wire)
    tools = await client.result("tools/list")
    ours, theirs = listed(tools, "ours")["inputSchema"], listed(tools, "theirs")["inputSchema"]
    assert ours == theirs
    assert ours["properties"]["restaurant"] == {
        "type": "string",
        "description": "Where",
        "minLength": 2,
        "maxLength": 40,
    }
    assert ours["properties"]["guests"] == {
        "type": "integer",
        "title": "Party size",
        "minimum": 1,
        "maximum": 20,
    }
    assert ours["properties"]["seats"]["items"] == {"type": "integer", "minimum": 1, "description": "A seat"}
    assert listed(tools, "mail")["inputSchema"]["properties"]["to"] == {
        "type": "string",
        "format": "email",
        "description": "Who",
    }


@pytest.mark.parametrize(
    ("arguments", "fault"),
    [
        ({"restaurant": "X", "guests": 2}, "restaurant: String should have at least 2 characters"),
        ({"restaurant": "Xu", "guests": 21}, "guests: Input should be less than or equal to 20"),
        (
            {"restaurant": "Xu", "guests": 2, "share": 0.1},
            "share: Input should be greater than or equal to 0.5",
        ),
        (
            {"restaurant": "Xu", "guests": 2, "tags": ["a", "b", "c"]},
            "tags: List should have at most 2 items",
        ),
        (
            {"restaurant": "Xu", "guests": 2, "seats": [1, 0]},
            "seats.1: Input should be greater than or equal to 1",
        ),
    ],
)
async def test_the_bounds_a_field_sets_are_checked_as_pydantics_are(
    wire: WireChecker, arguments: dict[str, Any], fault: str
) -> None:
    client = MemoryClient(ours_and_pydantics(), checker=wire)
    for name in ("ours", "theirs"):
        refused = await client.result("tools/call", {"name": name, "arguments": arguments})
        assert refused.get("isError") and fault in text(refused), (name, text(refused))
    fine = {"restaurant": "Xu", "guests": 20, "share": 0.5, "tags": ["a", "b"], "seats": [1]}
    done = await client.result("tools/call", {"name": "ours", "arguments": fine})
    assert text(done) == repr(("Xu", 20, 0.5, ["a", "b"], [1]))


async def test_a_format_a_field_sets_is_checked(wire: WireChecker) -> None:
    client = MemoryClient(ours_and_pydantics(), checker=wire)
    refused = await client.result("tools/call", {"name": "mail", "arguments": {"to": "not an address"}})
    assert refused.get("isError") and "to: " in text(refused) and "email address" in text(refused)
    done = await client.result("tools/call", {"name": "mail", "arguments": {"to": "ann@example.com"}})
    assert text(done) == "ann@example.com"


async def test_a_field_describes_a_prompt_argument(wire: WireChecker) -> None:
    client = MemoryClient(ours_and_pydantics(), checker=wire)
    prompts = await client.result("prompts/list")
    assert prompts["prompts"][0]["arguments"] == [
        {"name": "who", "description": "Whom to greet", "required": True}
    ]
    refused = await client.request("prompts/get", {"name": "greet", "arguments": {"who": ""}})
    assert refused["error"]["code"] == -32602 and "who" in refused["error"]["message"]


async def where(when: Annotated[str, Field(minimum=1)]) -> str:
    return when


async def count(n: Annotated[int, Field(max_length=3)]) -> str:
    return str(n)


async def flag(on: Annotated[bool, Field(maximum=1)]) -> str:
    return str(on)


async def kind(of: Annotated[Literal["a", "b"], Field(titles={"a": "A"})]) -> str:
    return of


async def password(word: Annotated[str, Field(not_secret=True)]) -> str:
    return word


async def listing(items: Annotated[list[str], Field(min_length=1)]) -> str:
    return repr(items)


async def phone(number: Annotated[str, Field(format="phone")]) -> str:  # type: ignore[arg-type]
    return number


async def upside_down(n: Annotated[int, Field(minimum=5, maximum=1)]) -> str:
    return str(n)


async def too_short(day: Annotated[str, Field(format="date", max_length=8)]) -> str:
    return day


@pytest.mark.parametrize(
    ("handler", "fragment"),
    [
        (where, "Field(minimum=...) on when does not apply to a text parameter"),
        (count, "Field(max_length=...) on n does not apply to a number parameter"),
        (flag, "Field(maximum=...) on on does not apply"),
        (kind, "Field(titles=...) on of does not apply"),
        (password, "Field(not_secret=...) on word does not apply"),
        (listing, "Field(min_length=...) on items does not apply to a list parameter"),
        (phone, "the Field(...) of number: format 'phone' is not supported"),
        (upside_down, "the Field(...) of n: the minimum value 5 is greater than the maximum value 1"),
        (too_short, "the Field(...) of day: a date answer is exactly 10 characters long"),
    ],
)
@pytest.mark.parametrize("kind_", ["tool", "prompt"])
def test_what_a_field_cannot_say_of_a_parameter_is_refused_naming_it(
    kind_: str, handler: Any, fragment: str
) -> None:
    app = Server("refused")
    with pytest.raises(TypeError, match=rf"^{handler.__name__}: {re.escape(fragment)}"):
        getattr(app, kind_)()(handler)


@dataclass
class Booking:
    guests: Annotated[int, Field(title="Party size", minimum=1, maximum=20)]


class Order(pydantic.BaseModel):
    items: Annotated[list[str], Field(min_items=1)]


async def book(booking: Booking) -> str:
    return repr(booking)


async def order(orders: list[Order] | None = None) -> str:
    return repr(orders)


class Seat(typing.TypedDict, total=False):
    row: typing.Required[Annotated[int, Field(minimum=1)]]


async def seat(where: Seat) -> str:
    return repr(where)


@pytest.mark.parametrize(
    ("handler", "inside"), [(book, "Booking.guests"), (order, "Order.items"), (seat, "Seat.row")]
)
def test_a_field_inside_a_class_a_parameter_is_typed_with_is_refused(handler: Any, inside: str) -> None:
    """pydantic reads a dataclass's or a model's fields itself and ignores the Field there:
    the bounds of a form's dataclass reused as an argument were neither shown nor checked."""
    app = Server("classes")
    with pytest.raises(
        TypeError, match=rf"^{handler.__name__}: the type of \w+ holds {inside}, .*pydantic.Field"
    ):
        app.tool()(handler)


class Stay(typing.TypedDict):
    nights: Annotated[int, Field(minimum=1, description="How many nights")]


class Confirmation(pydantic.BaseModel):
    bookings: list[Booking]


async def booked() -> Booking:
    return Booking(guests=0)


async def stayed() -> Stay:
    return {"nights": 0}


async def confirmed() -> Confirmation:
    return Confirmation(bookings=[Booking(guests=0)])


@pytest.mark.parametrize(
    ("handler", "inside"),
    [(booked, "Booking.guests"), (stayed, "Stay.nights"), (confirmed, "Booking.guests")],
)
def test_a_field_inside_a_class_a_tool_returns_is_refused(handler: Any, inside: str) -> None:
    """It was ignored: the outputSchema had neither its description nor its bound, and a
    result out of the bound went out as it was."""
    app = Server("returns")
    with pytest.raises(
        TypeError,
        match=rf"^tool '{handler.__name__}': the return type holds {inside}, .*use pydantic.Field",
    ):
        app.tool()(handler)


async def test_a_field_in_a_return_type_without_an_output_schema_is_left_alone(wire: WireChecker) -> None:
    """No outputSchema is made from the return type (``structured=False``, or one given), so
    there is nothing the Field would be missing from."""
    app = Server("returns")
    app.tool(structured=False)(booked)
    app.tool(name="given", output_schema={"type": "object"})(stayed)
    tools = await MemoryClient(app, checker=wire).result("tools/list")
    assert "outputSchema" not in listed(tools, "booked")
    assert listed(tools, "given")["outputSchema"] == {"type": "object"}


async def described() -> Annotated[str, Field(description="The booking's reference")]:
    return "A1"


async def numbers() -> list[Annotated[int, Field(minimum=1)]]:
    return [1]


class Reference(pydantic.BaseModel):
    code: str


async def described_booking() -> Annotated[Reference, Field(description="The booking")]:
    return Reference(code="A1")


@pytest.mark.parametrize("handler", [described, numbers, described_booking])
@pytest.mark.parametrize("options", [{}, {"structured": False}, {"output_schema": {"type": "object"}}])
def test_a_field_on_a_tool_s_return_type_is_refused(handler: Any, options: dict[str, Any]) -> None:
    """It was ignored: a result has no schema of its own to show it in, and pydantic does
    not read an mcp_elicit.Field there."""
    app = Server("returns")
    with pytest.raises(
        TypeError,
        match=rf"^tool '{handler.__name__}': the return type has an mcp_elicit.Field, .*description=",
    ):
        app.tool(**options)(handler)
