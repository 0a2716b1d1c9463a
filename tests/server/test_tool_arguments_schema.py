"""A tool's strict bind accepts a call exactly when JSON Schema accepts it against the
``inputSchema`` the tool publishes (``jsonschema``, with ``date-time`` and ``date``
asserted as RFC 3339 reads them), over generated argument values for a few signatures.

Where the two may differ, by design, is listed in ``docs/design/tool-arguments.md``
(Limits): the published schema says less than the type (an integer key, a ``Decimal``
or a URL as text, ``uniqueItems`` of a set), and the signatures here keep out of it."""

from __future__ import annotations

import datetime as dt
import enum
import re
from typing import Annotated, Any, Literal, NotRequired

import pydantic
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from jsonschema import Draft202012Validator, FormatChecker
from typing_extensions import TypedDict

from mcp_elicit.server.invalid_arguments import ArgumentsError
from mcp_elicit.server.tools import ToolDef


class Level(enum.IntEnum):
    LOW = 1
    HIGH = 2


async def scalars(
    count: int,
    ratio: float,
    flag: bool,
    name: str,
    pick: Literal[1, 2, "x"] = 1,
    on: Literal[True] = True,
    level: Level = Level.LOW,
) -> None: ...


async def nested(
    xs: list[int],
    maybe: list[int | None] | None = None,
    table: dict[str, float] | None = None,
    bounded: Annotated[int, pydantic.Field(ge=0, le=10)] = 0,
    word: Annotated[str, pydantic.Field(min_length=2, pattern="^a")] = "ab",
    either: int | str = 0,
) -> None: ...


async def dates(
    at: dt.datetime | None = None, day: dt.date | None = None, ats: list[dt.datetime] | None = None
) -> None: ...


class Window(TypedDict):
    start: int
    note: NotRequired[str]


async def shapes(
    levels: list[Level] | None = None,
    ranks: dict[str, Level] | None = None,
    mixed: Literal[1, "a"] | bool = True,
    window: Window | None = None,
    pair: tuple[int, float] | None = None,
) -> None: ...


_DATE_TIME = re.compile(
    r"(\d{4})-(\d\d)-(\d\d)[Tt](\d\d):(\d\d):(\d\d)(\.\d+)?(?:([Zz])|([+-])(\d\d):(\d\d))\Z", re.ASCII
)
_DATE = re.compile(r"(\d{4})-(\d\d)-(\d\d)\Z", re.ASCII)


def _rfc3339_date(text: object) -> bool:
    if not isinstance(text, str) or not (m := _DATE.match(text)):
        return not isinstance(text, str)  # format asserts nothing about another type
    try:
        dt.date(*map(int, m.groups()))
    except ValueError:
        return False
    return True


def _rfc3339_date_time(text: object) -> bool:
    """RFC 3339 section 5.6, with a leap second only at the last second of a UTC day."""
    if not isinstance(text, str):
        return True  # format asserts nothing about another type
    m = _DATE_TIME.match(text)
    if m is None:
        return False
    year, month, day, hour, minute, second = map(int, m.groups()[:6])
    sign, off_h, off_m = m.group(9), int(m.group(10) or 0), int(m.group(11) or 0)
    if off_h > 23 or off_m > 59 or hour > 23 or minute > 59 or second > 60:
        return False
    try:
        dt.date(year, month, day)
    except ValueError:
        return False
    if second == 60:
        offset = (off_h * 60 + off_m) * (-1 if sign == "-" else 1)
        return (hour * 60 + minute - offset) % (24 * 60) == 24 * 60 - 1
    return True


FORMATS = FormatChecker(formats=())
FORMATS.checks("date-time")(_rfc3339_date_time)
FORMATS.checks("date")(_rfc3339_date)

#: The integers a request decodes to (orjson: beyond them, a float), so the only ones
#: a tool is called with.
wire_ints = st.integers(-(2**63), 2**64 - 1)

json_values = st.recursive(
    st.none()
    | st.booleans()
    | wire_ints
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=4),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=3), inner, max_size=3),
    max_leaves=6,
)
numbers = st.sampled_from([0, 1, 2, 11, -1, 1.0, 2.0, 1.5, True, False, 10.0, 2**53])
date_times = st.builds(
    "{:04d}-{:02d}-{:02d}{}{:02d}:{:02d}:{:02d}{}{}".format,
    st.integers(1, 2100),
    st.integers(0, 13),
    st.integers(0, 32),
    st.sampled_from(["T", "t", " "]),
    st.integers(0, 24),
    st.integers(0, 60),
    st.sampled_from([59, 60, 0, 61]),
    st.sampled_from(["", ".5", ".123456"]),
    st.sampled_from(["Z", "z", "", "+01:00", "-05:00", "+24:00", "+0100"]),
)
days = st.builds("{:04d}-{:02d}-{:02d}".format, st.integers(1, 2100), st.integers(0, 13), st.integers(0, 32))


#: What may be sent for any argument: a near miss or any JSON value.
anything = st.one_of(numbers, date_times, days, st.lists(numbers, max_size=2), json_values)

#: For each signature, values that fit each parameter (or nearly: edges of the type).
SIGNATURES: dict[str, tuple[Any, dict[str, st.SearchStrategy[Any]]]] = {
    "scalars": (
        scalars,
        {
            "count": wire_ints | st.just(2.0),
            "ratio": st.floats(allow_nan=False, allow_infinity=False) | wire_ints,
            "flag": st.booleans(),
            "name": st.text(max_size=3),
            "pick": st.sampled_from([1, 2, "x", 1.0]),
            "on": st.just(True),
            "level": st.sampled_from([1, 2, 2.0]),
        },
    ),
    "nested": (
        nested,
        {
            "xs": st.lists(wire_ints | st.just(1.0), max_size=3),
            "maybe": st.none() | st.lists(st.none() | wire_ints, max_size=3),
            "table": st.none()
            | st.dictionaries(st.text(max_size=2), wire_ints | st.floats(0, 1), max_size=2),
            "bounded": st.integers(0, 10),
            "word": st.sampled_from(["ab", "abc"]),
            "either": wire_ints | st.text(max_size=2),
        },
    ),
    "shapes": (
        shapes,
        {
            "levels": st.none() | st.lists(st.sampled_from([1, 2, 1.0]), max_size=3),
            "ranks": st.none() | st.dictionaries(st.text(max_size=2), st.sampled_from([1, 2]), max_size=2),
            "mixed": st.sampled_from([1, "a", True, False, 1.0]),
            "window": st.none()
            | st.fixed_dictionaries({"start": wire_ints}, optional={"note": st.text(max_size=2)}),
            "pair": st.none()
            | st.tuples(wire_ints, st.floats(allow_nan=False, allow_infinity=False)).map(list),
        },
    ),
    "dates": (
        dates,
        {
            "at": st.none() | date_times,
            "day": st.none() | days,
            "ats": st.none() | st.lists(date_times, max_size=2),
        },
    ),
}


@st.composite
def calls(draw: st.DrawFn, fields: dict[str, st.SearchStrategy[Any]], required: list[str]) -> dict[str, Any]:
    """Arguments that (nearly) fit, the optional ones maybe left out, up to two of any
    of them left out or replaced by anything."""
    arguments = draw(
        st.fixed_dictionaries(
            {name: fields[name] for name in required},
            optional={name: value for name, value in fields.items() if name not in required},
        )
    )
    for name in draw(st.lists(st.sampled_from(sorted(fields)), max_size=2, unique=True)):
        value = draw(st.none() if name in required and draw(st.integers(0, 9)) == 0 else anything)
        if value is None and name in required:
            del arguments[name]
        else:
            arguments[name] = value
    return arguments


@pytest.mark.parametrize("name", sorted(SIGNATURES))
@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_the_strict_bind_accepts_what_the_published_schema_accepts(name: str, data: st.DataObject) -> None:
    fn, fields = SIGNATURES[name]
    tool = ToolDef.build(fn)
    assert tool.bind_strict is not None
    arguments = data.draw(calls(fields, tool.input_schema.get("required", [])), label="arguments")
    faults = [
        e.message
        for e in Draft202012Validator(tool.input_schema, format_checker=FORMATS).iter_errors(arguments)
    ]
    try:
        tool.bind_strict(arguments)
    except ArgumentsError as exc:
        assert faults, f"the schema accepts {arguments!r}, the bind refused it: {exc}"
    else:
        assert not faults, f"the schema refuses {arguments!r} ({faults}), the bind took it"


async def plain(count: int, at: dt.datetime | None = None) -> str:
    return repr((count, at))


def test_a_model_the_strict_bind_cannot_read_is_still_held_to_its_schema(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """``strict_validator`` gives None for a core schema laid out as it does not foresee
    (a future pydantic's): the published schema is then checked with jsonschema before
    the lax bind, as an explicit one is. The lax bind alone took ``"3"`` for an int."""

    class Checked(pydantic.BaseModel):
        count: int

        @pydantic.model_validator(mode="after")
        def fine(self) -> Checked:
            return self

    from mcp_elicit.server import strict_arguments, tools

    assert strict_arguments.strict_validator(Checked) is None  # such a layout: not read
    monkeypatch.setattr(tools, "strict_validator", lambda model: None)
    tool = ToolDef.build(plain)
    assert tool.bind_strict is None and tool.check_arguments is not None
    assert tool.check_arguments({"count": "3"}) == "arguments['count']: '3' is not of type 'integer'"
    assert tool.check_arguments({"count": 3, "at": "2026-01-01T10:00:00Z"}) is None
