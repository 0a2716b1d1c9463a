"""Forms from dataclasses, TypedDicts and pydantic models, and building them back."""

from __future__ import annotations

import dataclasses
import datetime as dt
import enum
from typing import Annotated, ClassVar, Literal, NamedTuple, NotRequired, Required, TypedDict

import pydantic
import pydantic.dataclasses
import pytest

from forms.test_properties import requested_schema_validator
from mcp_elicit.errors import FormSchemaError, FormValidationError, SensitiveFieldError
from mcp_elicit.forms import Boolean, Choice, Field, FormSchema, Integer, MultiChoice, Number, String
from mcp_elicit.forms.classes import describe_class


class Seating(enum.Enum):
    INDOOR = "indoor"
    PATIO = "patio"


Diet = Literal["vegan", "gluten-free"]


@dataclasses.dataclass
class Booking:
    party_size: Annotated[int, Field(minimum=1, maximum=20, title="Party size")]
    day: dt.date
    seating: Seating = Seating.INDOOR
    dietary: set[Diet] = dataclasses.field(default_factory=set)
    note: str | None = None
    arrival: dt.datetime | None = None
    pets: bool = False
    budget: float = 50
    internal: int = dataclasses.field(default=0, init=False)
    KIND: ClassVar[str] = "booking"


@dataclasses.dataclass(frozen=True)
class Defaults:
    tags: list[Diet] = dataclasses.field(default_factory=lambda: ["vegan"])
    bad_factory: list[Diet] = dataclasses.field(default_factory=lambda: ["meat"])  # type: ignore[list-item]
    too_few: Annotated[list[Diet], Field(min_items=1)] = dataclasses.field(default_factory=list)
    when: dt.date = dt.date(2026, 1, 2)
    maybe: int | None = 5


class Order(TypedDict):
    item: Literal["tea", "coffee"]
    cups: int
    sugar: NotRequired[bool]
    when: NotRequired[dt.date]


class Loose(TypedDict, total=False):
    must: Required[str]
    may: str
    nullable: int | None
    titled: Annotated[Required[str], Field(title="T")]


class Profile(pydantic.BaseModel):
    name: str = pydantic.Field(title="Name", description="Your name", min_length=2, max_length=40)
    age: int = pydantic.Field(ge=0, lt=150)
    tone: Literal["calm", "loud"] = "calm"
    tags: list[Seating] = []
    nickname: str | None = None
    joined: dt.date | None = pydantic.Field(default=None, title="Joined")
    score: Annotated[float, Field(minimum=0, maximum=1)] = 0.5
    klass: str = pydantic.Field(default="a", alias="class")

    @pydantic.field_validator("name")
    @classmethod
    def no_bob(cls, value: str) -> str:
        if value == "Bob":
            raise ValueError("Bob is taken")
        return value


@dataclasses.dataclass
class Address:
    street: str


@dataclasses.dataclass
class WithNested:
    address: Address


@dataclasses.dataclass
class WithSecret:
    api_key: str


@dataclasses.dataclass
class WithAllowedSecret:
    password_hint: Annotated[str, Field(not_secret=True)]


@dataclasses.dataclass
class BadDefault:
    size: int = "big"  # type: ignore[assignment]


@dataclasses.dataclass
class OutOfBounds:
    size: Annotated[int, Field(maximum=3)] = 5


@dataclasses.dataclass
class NaiveDefault:
    when: dt.datetime = dt.datetime(2026, 1, 1)


@dataclasses.dataclass
class Unresolved:
    x: NotDefinedAnywhere  # type: ignore[name-defined]  # noqa: F821


def test_dataclass_form() -> None:
    schema = FormSchema.from_type(Booking)
    assert schema.fields == (
        Integer(name="party_size", title="Party size", minimum=1, maximum=20),
        String(name="day", format="date"),
        Choice({"indoor": "Indoor", "patio": "Patio"}, name="seating", required=False, default="indoor"),
        MultiChoice(["vegan", "gluten-free"], name="dietary", required=False, default=[]),
        String(name="note", required=False),
        String(name="arrival", format="date-time", required=False),
        Boolean(name="pets", required=False, default=False),
        Number(name="budget", required=False, default=50),
    )
    assert schema.target is Booking


def test_dataclass_build() -> None:
    schema = FormSchema.from_type(Booking)
    booking = schema.build(
        {
            "party_size": 4.0,
            "day": "2026-12-31",
            "seating": "patio",
            "dietary": ["vegan"],
            "arrival": "2026-12-31T19:00:00+01:00",
        }
    )
    assert booking == Booking(
        party_size=4,
        day=dt.date(2026, 12, 31),
        seating=Seating.PATIO,
        dietary={"vegan"},
        arrival=dt.datetime(2026, 12, 31, 19, tzinfo=dt.timezone(dt.timedelta(hours=1))),
    )
    assert type(booking.party_size) is int
    minimal = schema.build({"party_size": 1, "day": "2026-01-01"})
    assert minimal == Booking(party_size=1, day=dt.date(2026, 1, 1))
    assert minimal.dietary == set()
    assert isinstance(schema.build({"party_size": 1, "day": "2026-01-01", "budget": 3}).budget, float)


def test_a_leap_second_builds_the_instant_just_before_it() -> None:
    """A ``datetime`` cannot hold 23:59:60: the handler gets the last microsecond before
    it, on the same day and in the offset that was sent."""
    schema = FormSchema.from_type(Booking)
    booking = schema.build({"party_size": 1, "day": "2016-12-31", "arrival": "2016-12-31T18:59:60.25-05:00"})
    west = dt.timezone(-dt.timedelta(hours=5))
    assert booking.arrival == dt.datetime(2016, 12, 31, 18, 59, 59, 999999, tzinfo=west)
    assert booking.arrival is not None and booking.arrival.utcoffset() == west.utcoffset(None)


def test_build_validates_first() -> None:
    with pytest.raises(FormValidationError) as caught:
        FormSchema.from_type(Booking).build({"party_size": 0})
    assert [(p.field, p.message) for p in caught.value.problems] == [
        ("party_size", "must be at least 1"),
        ("day", "is required"),
    ]


def test_defaults_and_factories() -> None:
    schema = FormSchema.from_type(Defaults)
    by_name = {spec.name: spec for spec in schema.fields}
    assert by_name["tags"].default == ("vegan",)
    assert by_name["bad_factory"].default is None
    assert by_name["too_few"].default is None
    assert by_name["when"].default == "2026-01-02"
    assert by_name["maybe"].default == 5
    assert all(not spec.required for spec in schema.fields)
    assert schema.apply_defaults({}) == {"tags": ["vegan"], "when": "2026-01-02", "maybe": 5}
    built = schema.build({})
    assert built == Defaults()
    assert built.bad_factory == ["meat"]


@pytest.mark.parametrize(
    ("cls", "message"),
    [
        (BadDefault, "field 'size': the default 'big' does not fit the field"),
        (OutOfBounds, "field 'size': the default 5 is not a valid answer: it must be at most 3"),
        (NaiveDefault, "a datetime default needs a time zone"),
        (WithNested, "field 'address': nested forms are not allowed (Address is a class of fields)"),
        (Unresolved, "cannot read the annotations of Unresolved"),
    ],
)
def test_class_refusals(cls: type, message: str) -> None:
    with pytest.raises(FormSchemaError, match=message.replace("(", r"\(").replace(")", r"\)")):
        FormSchema.from_type(cls)


@dataclasses.dataclass
class WithInitVar:
    guests: int
    code: dataclasses.InitVar[str]

    def __post_init__(self, code: str) -> None:
        self.discount = code


@dataclasses.dataclass
class WithDefaultInitVar:
    guests: int
    code: dataclasses.InitVar[str] = "none"

    def __post_init__(self, code: str) -> None:
        self.discount = code


def test_initvar_without_default_is_refused() -> None:
    with pytest.raises(FormSchemaError) as caught:
        FormSchema.from_type(WithInitVar)
    assert caught.value.field == "code"
    assert "InitVar fields are not part of a form; give code a default" in str(caught.value)


def test_initvar_with_default_is_not_asked() -> None:
    schema = FormSchema.from_type(WithDefaultInitVar)
    assert schema.names == ("guests",)
    assert schema.build({"guests": 2}).discount == "none"


@pytest.mark.parametrize("thing", [int, str, dict, Seating, "Booking", Booking(1, dt.date(2026, 1, 1))])
def test_from_type_needs_a_class_of_fields(thing: object) -> None:
    with pytest.raises(FormSchemaError, match="a form needs a dataclass, TypedDict or pydantic model class"):
        FormSchema.from_type(thing)


def test_secret_guard_applies_to_classes() -> None:
    with pytest.raises(SensitiveFieldError) as caught:
        FormSchema.from_type(WithSecret)
    assert caught.value.field == "api_key"
    schema = FormSchema.from_type(WithAllowedSecret)
    assert schema.fields[0].not_secret is True


def test_typeddict() -> None:
    schema = FormSchema.from_type(Order)
    assert schema.fields == (
        Choice(["tea", "coffee"], name="item"),
        Integer(name="cups"),
        Boolean(name="sugar", required=False),
        String(name="when", format="date", required=False),
    )
    assert schema.build({"item": "tea", "cups": 2}) == {"item": "tea", "cups": 2}
    built = schema.build({"item": "tea", "cups": 2, "when": "2026-03-04", "sugar": True})
    assert built == {"item": "tea", "cups": 2, "sugar": True, "when": dt.date(2026, 3, 4)}


def test_typeddict_total_false() -> None:
    schema = FormSchema.from_type(Loose)
    assert schema.required == ("must", "titled")
    assert schema.field("titled").title == "T"
    assert schema.build({"must": "x", "titled": "y"}) == {"must": "x", "titled": "y"}


def test_pydantic_model() -> None:
    schema = FormSchema.from_type(Profile)
    assert schema.fields == (
        String(name="name", title="Name", description="Your name", min_length=2, max_length=40),
        Integer(name="age", minimum=0, maximum=149),
        Choice(["calm", "loud"], name="tone", required=False, default="calm"),
        MultiChoice({"indoor": "Indoor", "patio": "Patio"}, name="tags", required=False, default=[]),
        String(name="nickname", required=False),
        String(name="joined", title="Joined", format="date", required=False),
        Number(name="score", minimum=0, maximum=1, required=False, default=0.5),
        String(name="class", required=False, default="a"),
    )
    profile = schema.build(
        {"name": "Ann", "age": 30, "tags": ["patio"], "joined": "2020-02-02", "class": "b"}
    )
    assert profile == Profile(
        name="Ann", age=30, tags=[Seating.PATIO], joined=dt.date(2020, 2, 2), **{"class": "b"}
    )


def test_pydantic_validation_errors_become_problems() -> None:
    with pytest.raises(FormValidationError) as caught:
        FormSchema.from_type(Profile).build({"name": "Bob", "age": 3})
    (problem,) = caught.value.problems
    assert problem.field == "name"
    assert "Bob is taken" in problem.message


class Required_(pydantic.BaseModel):
    maybe: int | None
    strict_one: Annotated[int, pydantic.Strict()] = 1
    factory: list[Diet] = pydantic.Field(default_factory=lambda: ["vegan"])  # type: ignore[arg-type]


def test_pydantic_optional_without_default_gets_none() -> None:
    schema = FormSchema.from_type(Required_)
    assert schema.required == ()
    assert schema.field("factory").default == ("vegan",)
    assert schema.build({}) == Required_(maybe=None)


class ValidationAlias(pydantic.BaseModel):
    party: int = pydantic.Field(validation_alias="partySize", ge=1)
    note: str = pydantic.Field(default="", alias="n", validation_alias="memo")


class ByName(pydantic.BaseModel):
    model_config = pydantic.ConfigDict(validate_by_name=True, validate_by_alias=False)
    party: int = pydantic.Field(alias="partySize")


class Generated(pydantic.BaseModel):
    model_config = pydantic.ConfigDict(alias_generator=str.upper)
    party: int


@pytest.mark.parametrize(
    ("cls", "names", "built"),
    [
        (ValidationAlias, ("partySize", "memo"), ValidationAlias(partySize=3, memo="hi")),
        (ByName, ("party",), ByName(party=3)),
        (Generated, ("PARTY",), Generated(PARTY=3)),
    ],
)
def test_pydantic_wire_name_is_the_key_the_model_validates_by(
    cls: type[pydantic.BaseModel], names: tuple[str, ...], built: pydantic.BaseModel
) -> None:
    schema = FormSchema.from_type(cls)
    assert schema.names == names
    answer = dict(zip(names, (3, "hi"), strict=False))
    assert schema.build(answer) == built


class Choices(pydantic.BaseModel):
    party: int = pydantic.Field(validation_alias=pydantic.AliasChoices("partySize", "size"))


class Path(pydantic.BaseModel):
    party: int = pydantic.Field(validation_alias=pydantic.AliasPath("party", 0))


@pytest.mark.parametrize("cls", [Choices, Path])
def test_pydantic_alias_choices_and_paths_are_refused(cls: type[pydantic.BaseModel]) -> None:
    with pytest.raises(FormSchemaError) as caught:
        FormSchema.from_type(cls)
    assert caught.value.field == "party"
    assert "a form field has exactly one" in str(caught.value)


def test_from_type_is_cached() -> None:
    assert FormSchema.from_type(Booking) is FormSchema.from_type(Booking)


def test_describe_class_binding_plan() -> None:
    specs, binding = describe_class(Order)
    assert [s.name for s in specs] == ["item", "cups", "sugar", "when"]
    assert binding.target is Order


@pytest.mark.parametrize("cls", [Booking, Defaults, Order, Loose, Profile, WithAllowedSecret])
@pytest.mark.parametrize("revision", ["2025-11-25", "2026-07-28"])
def test_forms_from_classes_are_valid_under_the_official_schemas(cls: type, revision: str) -> None:
    wire = FormSchema.from_type(cls).to_json()
    requested_schema_validator(revision).validate(wire)


class OrderBase(TypedDict):
    item: Literal["tea", "coffee"]
    maybe: NotRequired[int]


class OrderExtras(OrderBase, total=False):
    note: str
    cups: Required[int]


def test_typeddict_keys_keep_the_totality_of_the_class_that_declares_them() -> None:
    form = FormSchema.from_type(OrderExtras)
    assert form.required == ("item", "cups")
    with pytest.raises(FormValidationError) as caught:
        form.build({"cups": 2})
    assert [p.field for p in caught.value.problems] == ["item"]
    assert form.build({"item": "tea", "cups": 2}) == {"item": "tea", "cups": 2}


@pydantic.dataclasses.dataclass
class PydanticBooking:
    party_size: int = pydantic.Field(ge=1, le=20, title="Party size")
    day: dt.date = pydantic.Field(description="Which day")
    seats: int = pydantic.Field(default=2, ge=1, validation_alias="seatCount")
    dietary: set[Diet] = pydantic.Field(default_factory=set)

    @pydantic.field_validator("party_size")
    @classmethod
    def _not_thirteen(cls, value: int) -> int:
        if value == 13:
            raise ValueError("we do not seat 13")
        return value


def test_pydantic_dataclass_reads_its_fields_like_a_model() -> None:
    form = FormSchema.from_type(PydanticBooking)
    assert form.fields == (
        Integer(name="party_size", minimum=1, maximum=20, title="Party size"),
        String(name="day", format="date", description="Which day"),
        Integer(name="seatCount", minimum=1, default=2, required=False),
        MultiChoice(["vegan", "gluten-free"], name="dietary", default=(), required=False),
    )
    for revision in ("2025-11-25", "2026-07-28"):
        requested_schema_validator(revision).validate(form.to_json())
    built = form.build({"party_size": 4, "day": "2026-03-04", "seatCount": 3, "dietary": ["vegan"]})
    assert built == PydanticBooking(4, dt.date(2026, 3, 4), 3, {"vegan"})
    with pytest.raises(FormValidationError) as caught:
        form.build({"party_size": 13, "day": "2026-03-04"})
    assert [(p.field, p.message) for p in caught.value.problems] == [
        ("party_size", "Value error, we do not seat 13")
    ]


class PartySize(pydantic.RootModel[int]):
    pass


def test_pydantic_root_model_is_refused_when_the_form_is_defined() -> None:
    with pytest.raises(FormSchemaError, match="PartySize is a RootModel") as caught:
        FormSchema.from_type(PartySize)
    assert "a model with fields" in str(caught.value)


def _class_with_a_local_type() -> type:
    class Mood(enum.Enum):
        CALM = "calm"

    @dataclasses.dataclass
    class Checkin:
        name: str
        mood: Mood | None = None

    return Checkin


def test_an_unresolvable_annotation_names_the_field_and_the_fix() -> None:
    with pytest.raises(FormSchemaError) as caught:
        FormSchema.from_type(_class_with_a_local_type())
    assert caught.value.field == "mood"
    assert "name 'Mood' is not defined" in str(caught.value)
    assert "define or import Mood at module level" in str(caught.value)


class Point(NamedTuple):
    x: int
    y: int


@dataclasses.dataclass
class WithPoint:
    where: Point


def test_named_tuples_are_refused_saying_what_to_use() -> None:
    with pytest.raises(FormSchemaError, match="Point is a NamedTuple; use a dataclass"):
        FormSchema.from_type(Point)
    with pytest.raises(FormSchemaError, match=r"nested forms are not allowed \(Point is a class of fields\)"):
        FormSchema.from_type(WithPoint)
