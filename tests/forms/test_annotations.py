"""From one Python annotation to one field: every mapping, every refusal, the converters."""

from __future__ import annotations

import datetime as dt
import enum
import typing
from typing import Annotated, Any, Literal, NewType, Optional

import annotated_types as at
import pydantic
import pytest

from mcp_elicit.errors import FormSchemaError
from mcp_elicit.forms import Boolean, Choice, Field, Integer, MultiChoice, Number, Option, String
from mcp_elicit.forms.annotations import spec_for


class Seating(enum.Enum):
    INDOOR = "indoor"
    ON_THE_PATIO = "patio"


class Tone(enum.StrEnum):
    CALM = "calm"
    LOUD = "loud"


class Size(enum.IntEnum):
    SMALL = 1


class Mixed(enum.Enum):
    A = "a"
    B = 2


UserId = NewType("UserId", str)


class Nested(pydantic.BaseModel):
    a: int


@pytest.mark.parametrize(
    ("annotation", "spec", "optional"),
    [
        (str, String(name="f"), False),
        (int, Integer(name="f"), False),
        (float, Number(name="f"), False),
        (bool, Boolean(name="f"), False),
        (dt.date, String(name="f", format="date"), False),
        (dt.datetime, String(name="f", format="date-time"), False),
        (UserId, String(name="f"), False),
        (str | None, String(name="f"), True),
        (Optional[int], Integer(name="f"), True),  # noqa: UP045
        (typing.Union[bool, None], Boolean(name="f"), True),  # noqa: UP007
        (Literal["a", "b"], Choice(["a", "b"], name="f"), False),
        (Literal["a", "b"] | None, Choice(["a", "b"], name="f"), True),
        (Seating, Choice({"indoor": "Indoor", "patio": "On the patio"}, name="f"), False),
        (Tone, Choice({"calm": "Calm", "loud": "Loud"}, name="f"), False),
        (list[Literal["a", "b"]], MultiChoice(["a", "b"], name="f"), False),
        (set[Seating], MultiChoice({"indoor": "Indoor", "patio": "On the patio"}, name="f"), False),
        (frozenset[Tone], MultiChoice({"calm": "Calm", "loud": "Loud"}, name="f"), False),
        (typing.List[Literal["a"]], MultiChoice(["a"], name="f"), False),  # noqa: UP006
        (list[Literal["a"]] | None, MultiChoice(["a"], name="f"), True),
        (
            Annotated[str, Field(title="T", description="D", min_length=1, max_length=9, format="email")],
            String(name="f", title="T", description="D", min_length=1, max_length=9, format="email"),
            False,
        ),
        (Annotated[int, Field(minimum=1, maximum=20)], Integer(name="f", minimum=1, maximum=20), False),
        (Annotated[int, Field(minimum=0)], Integer(name="f", minimum=0), False),
        (Annotated[float, Field(minimum=0.5)], Number(name="f", minimum=0.5), False),
        (Annotated[int | None, Field(title="T")], Integer(name="f", title="T"), True),
        (Annotated[int, Field(title="A")] | None, Integer(name="f", title="A"), True),
        (
            Annotated[Literal["a", "b"], Field(titles={"a": "Ay"})],
            Choice({"a": "Ay", "b": "b"}, name="f"),
            False,
        ),
        (
            Annotated[Seating, Field(titles={"patio": "Outside"})],
            Choice({"indoor": "Indoor", "patio": "Outside"}, name="f"),
            False,
        ),
        (
            Annotated[list[Seating], Field(min_items=1, max_items=2)],
            MultiChoice({"indoor": "Indoor", "patio": "On the patio"}, name="f", min_items=1, max_items=2),
            False,
        ),
        (
            Annotated[list[Annotated[Literal["a"], Field(titles={"a": "A"})]], Field(title="Outer")],
            MultiChoice({"a": "A"}, name="f", title="Outer"),
            False,
        ),
        (Annotated[dt.date, Field(format="date")], String(name="f", format="date"), False),
        (Annotated[int, at.Ge(1), at.Le(5)], Integer(name="f", minimum=1, maximum=5), False),
        (Annotated[int, at.Gt(0), at.Lt(10)], Integer(name="f", minimum=1, maximum=9), False),
        (Annotated[int, at.Interval(ge=1, le=3)], Integer(name="f", minimum=1, maximum=3), False),
        (Annotated[str, at.MinLen(2), at.MaxLen(4)], String(name="f", min_length=2, max_length=4), False),
        (Annotated[str, at.Len(2, 4)], String(name="f", min_length=2, max_length=4), False),
        (
            Annotated[list[Literal["a", "b"]], at.MinLen(1)],
            MultiChoice(["a", "b"], name="f", min_items=1),
            False,
        ),
        (Annotated[int, pydantic.Field(ge=2, title="P")], Integer(name="f", minimum=2, title="P"), False),
        (Annotated[int, pydantic.Strict()], Integer(name="f"), False),
        (Annotated[int, at.Ge(1), Field(minimum=3)], Integer(name="f", minimum=3), False),
    ],
)
def test_mapping(annotation: Any, spec: Any, optional: bool) -> None:
    got, _, got_optional = spec_for("f", annotation)
    assert got == spec
    assert got_optional is optional


def test_field_merges_and_not_secret() -> None:
    spec, _, _ = spec_for("f", Annotated[str, Field(title="A"), Field(description="B", not_secret=True)])
    assert spec == String(name="f", title="A", description="B")
    assert spec.not_secret is True


def test_title_and_description_defaults_are_overridden_by_field() -> None:
    spec, _, _ = spec_for("f", Annotated[str, Field(title="Mine")], title="Theirs", description="Desc")
    assert (spec.title, spec.description) == ("Mine", "Desc")


def test_field_is_hashable_and_immutable() -> None:
    field = Field(titles={"a": "A"})
    assert field.titles == (("a", "A"),)
    assert hash(field) == hash(Field(titles={"a": "A"}))
    assert Annotated[Literal["a"], field] | None is not None


@pytest.mark.parametrize("titles", [["a", "b"], "ab", ("a",)])
def test_field_titles_not_a_mapping_is_refused_naming_what_it_takes(titles: Any) -> None:
    with pytest.raises(TypeError, match=r"Field\(titles=\.\.\.\) maps each option's value to its title"):
        Field(titles=titles)


REFUSALS: list[tuple[Any, str]] = [
    (Any, "Any is not allowed in a form; give the field one of: str, int, float, bool"),
    (object, "object is not allowed in a form"),
    (bytes, "type bytes is not allowed in a form"),
    (dict[str, int], "mappings are not allowed in a form"),
    (typing.Mapping[str, int], "mappings are not allowed in a form"),
    (tuple[str, str], "tuples are not allowed in a form"),
    (tuple, "tuples are not allowed in a form"),
    (list[str], "a list must be a multi-select of a Literal or a str Enum, not of str"),
    (set[int], "a set must be a multi-select of a Literal or a str Enum, not of int"),
    (list, "a bare list is not allowed; use list[Literal[...]]"),
    (list[Literal["a"] | None], "the choices of a multi-select cannot be None"),
    (list[Annotated[Literal["a"], Field(title="T")]], "put Field(...) on the multi-select itself"),
    (list[Annotated[Literal["a"], at.MinLen(1)]], "put Field(...) on the multi-select itself"),
    (int | str, "unions of several types are not allowed (int | str); use one type"),
    (int | str | None, "unions of several types are not allowed"),
    (Literal["a"] | Literal["b"], "unions of several types are not allowed"),
    (Literal[1, 2], "Literal options must be strings, not 1"),
    (Size, "Enum Size has the non-string value 1"),
    (Mixed, "Enum Mixed has the non-string value 2"),
    (Nested, "nested forms are not allowed (Nested is a class of fields)"),
    (type(None), "type NoneType is not allowed"),
    (Annotated[int, "doc"], "the constraint 'doc' cannot be expressed in a form"),
    (Annotated[int, at.MultipleOf(2)], "the constraint MultipleOf(multiple_of=2) cannot be expressed"),
    (
        Annotated[str, pydantic.Field(pattern="^[A-Z]{3}$")],
        "pattern='^[A-Z]{3}$' cannot be expressed in a form: pattern is not part of the form subset "
        "(neither official schema defines it); check the value in the tool instead",
    ),
    (
        Annotated[float, pydantic.Field(allow_inf_nan=True)],
        "allow_inf_nan=True cannot be expressed in a form",
    ),
    (Annotated[float, at.Gt(0)], "exclusive bounds (gt/lt) cannot be expressed in a form; use ge/le"),
    (Annotated[int, at.Gt(0.5)], "exclusive bounds (gt/lt) cannot be expressed"),
    (Annotated[bool, Field(minimum=1)], "Field(minimum=...) does not apply to a bool"),
    (Annotated[bool, at.Ge(1)], "numeric bounds do not apply to a bool"),
    (Annotated[int, Field(min_length=1)], "Field(min_length=...) does not apply to an int"),
    (Annotated[int, at.MinLen(1)], "length constraints do not apply to an int"),
    (Annotated[int, Field(format="email")], "Field(format=...) does not apply to an int"),
    (Annotated[str, Field(minimum=1)], "Field(minimum=...) does not apply to text"),
    (Annotated[str, at.Ge(1)], "numeric bounds do not apply to text"),
    (Annotated[str, Field(min_items=1)], "Field(min_items=...) does not apply to text"),
    (Annotated[str, Field(titles={"a": "A"})], "Field(titles=...) does not apply to text"),
    (Annotated[str, Field(format="phone")], "format 'phone' is not supported"),  # type: ignore[arg-type]
    (Annotated[dt.date, Field(format="email")], "format 'email' does not fit a date (it is always 'date')"),
    (Annotated[Literal["a"], Field(minimum=1)], "Field(minimum=...) does not apply to a choice"),
    (Annotated[Literal["a"], at.MinLen(1)], "length constraints do not apply to a choice"),
    (Annotated[Literal["a"], Field(titles={"b": "B"})], "titles names 'b', which are not options"),
    (
        Annotated[list[Literal["a"]], Field(min_length=1)],
        "Field(min_length=...) does not apply to a multi-select",
    ),
    (Annotated[list[Literal["a"]], at.Ge(1)], "numeric bounds do not apply to a multi-select"),
]


@pytest.mark.parametrize(("annotation", "message"), REFUSALS)
def test_refusals_name_field_and_rule(annotation: Any, message: str) -> None:
    with pytest.raises(FormSchemaError) as caught:
        spec_for("seats", annotation)
    assert caught.value.field == "seats"
    assert message in str(caught.value)
    assert "_Pydantic" not in str(caught.value)


@pytest.mark.parametrize(
    ("annotation", "message"),
    [
        (Annotated[int, Field(minimum=0.1, maximum=0.9)], "no whole number lies between the minimum 0.1"),
        (Annotated[int, Field(maximum=10**30)], "the maximum value must be between -9007199254740991"),
    ],
)
def test_integer_bounds_are_refused_by_the_check(annotation: Any, message: str) -> None:
    spec, _, _ = spec_for("seats", annotation)
    with pytest.raises(FormSchemaError) as caught:
        spec.check()
    assert caught.value.field == "seats"
    assert message in str(caught.value)


def test_converters() -> None:
    _, date_conv, _ = spec_for("f", dt.date)
    assert date_conv.to_python("2026-12-31") == dt.date(2026, 12, 31)
    assert date_conv.to_wire(dt.date(2026, 1, 2)) == "2026-01-02"
    with pytest.raises(ValueError, match="not a date"):
        date_conv.to_wire(dt.datetime(2026, 1, 2, tzinfo=dt.UTC))

    _, when, _ = spec_for("f", dt.datetime)
    assert when.to_python("2026-01-02T03:04:05Z") == dt.datetime(2026, 1, 2, 3, 4, 5, tzinfo=dt.UTC)
    assert when.to_wire(dt.datetime(2026, 1, 2, 3, 4, 5, tzinfo=dt.UTC)) == "2026-01-02T03:04:05+00:00"
    with pytest.raises(ValueError, match="time zone"):
        when.to_wire(dt.datetime(2026, 1, 2))

    _, seating, _ = spec_for("f", Seating)
    assert seating.to_python("patio") is Seating.ON_THE_PATIO
    assert seating.to_wire(Seating.INDOOR) == "indoor"
    assert seating.to_wire("patio") == "patio"
    with pytest.raises(ValueError, match="'garden' is not a valid Seating"):
        seating.to_wire("garden")

    _, lit, _ = spec_for("f", Literal["a"])
    assert lit.to_wire("a") == "a"
    with pytest.raises(ValueError, match="'b' is not one of the options"):
        lit.to_wire("b")

    _, many, _ = spec_for("f", set[Seating])
    assert many.to_python(["patio"]) == {Seating.ON_THE_PATIO}
    assert many.to_wire({Seating.ON_THE_PATIO, Seating.INDOOR}) == ["indoor", "patio"]
    assert many.to_wire([Seating.ON_THE_PATIO, Seating.INDOOR]) == ["patio", "indoor"]
    with pytest.raises(ValueError, match="not a collection"):
        many.to_wire("indoor")

    _, frozen, _ = spec_for("f", frozenset[Literal["a", "b"]])
    assert frozen.to_python(["a"]) == frozenset({"a"})

    _, number, _ = spec_for("f", float)
    assert number.to_python(3) == 3.0
    assert isinstance(number.to_python(3), float)
    assert number.to_wire(3) == 3
    with pytest.raises(ValueError, match="not a float"):
        number.to_wire(True)

    _, whole, _ = spec_for("f", int)
    with pytest.raises(ValueError, match="not an int"):
        whole.to_wire(True)
    with pytest.raises(ValueError, match="not an int"):
        whole.to_wire(1.0)

    _, flag, _ = spec_for("f", bool)
    assert flag.to_wire(False) is False
    with pytest.raises(ValueError, match="not a bool"):
        flag.to_wire(0)


def test_options_type() -> None:
    spec, _, _ = spec_for("f", Seating)
    assert isinstance(spec, Choice)
    assert spec.options[1] == Option("patio", "On the patio")


class Plain(str, enum.Enum):  # noqa: UP042  (the pre-StrEnum spelling, on purpose)
    ONE = "one"


def test_a_literal_of_enum_members_gives_back_the_members() -> None:
    spec, converter, _ = spec_for("tone", Literal[Tone.CALM, Plain.ONE])
    assert spec == Choice(["calm", "one"], name="tone")
    assert [type(value) for value, _ in spec.options] == [str, str]
    assert converter.to_python("calm") is Tone.CALM
    assert converter.to_python("one") is Plain.ONE
    assert type(converter.to_wire(Plain.ONE)) is str
    assert converter.to_wire(Plain.ONE) == "one"
    spec, converter, _ = spec_for("tones", set[Literal[Tone.LOUD, "quiet"]])
    assert converter.to_python(["loud", "quiet"]) == {Tone.LOUD, "quiet"}
    assert {type(v) for v in converter.to_python(["loud", "quiet"])} == {Tone, str}
