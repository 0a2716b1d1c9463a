"""FormSchema itself: construction rules, the Form builder, reading, equality."""

from __future__ import annotations

import dataclasses
import typing
from typing import Any

import pytest

from mcp_elicit.errors import FormSchemaError
from mcp_elicit.forms import Boolean, Choice, Form, FormSchema, Integer, MultiChoice, Number, String
from mcp_elicit.forms.foreign import MAX_ALL_OPTIONS, MAX_FIELDS, MAX_NAME, MAX_OPTIONS, MAX_TEXT, MAX_TITLE


@dataclasses.dataclass
class Small:
    n: int


def booking() -> FormSchema:
    return Form(
        party_size=Integer(minimum=1, maximum=20, title="Party size"),
        date=String(format="date"),
        seating=Choice({"indoor": "Inside", "patio": "On the patio"}),
        dietary=MultiChoice(["vegan", "gluten-free"], required=False),
        ok=Boolean(default=False, required=False),
    )


def test_form_builder() -> None:
    schema = booking()
    assert schema.names == ("party_size", "date", "seating", "dietary", "ok")
    assert schema.required == ("party_size", "date", "seating")
    assert schema.field("seating") == Choice({"indoor": "Inside", "patio": "On the patio"}, name="seating")
    assert schema.target is None
    assert schema.to_json() == {
        "type": "object",
        "properties": {
            "party_size": {"type": "integer", "title": "Party size", "minimum": 1, "maximum": 20},
            "date": {"type": "string", "format": "date"},
            "seating": {
                "type": "string",
                "oneOf": [
                    {"const": "indoor", "title": "Inside"},
                    {"const": "patio", "title": "On the patio"},
                ],
            },
            "dietary": {"type": "array", "items": {"type": "string", "enum": ["vegan", "gluten-free"]}},
            "ok": {"type": "boolean", "default": False},
        },
        "required": ["party_size", "date", "seating"],
    }


def test_form_with_mapping_for_odd_names() -> None:
    schema = Form({"first-name": String(), "2nd": String()}, ok=Boolean())
    assert schema.names == ("first-name", "2nd", "ok")


def test_form_refusals() -> None:
    with pytest.raises(FormSchemaError, match="field 'a': the field is given twice"):
        Form({"a": String()}, a=String())
    with pytest.raises(FormSchemaError, match="field 'a': expected a field spec such as String"):
        Form(a={"type": "string"})  # type: ignore[arg-type]
    with pytest.raises(FormSchemaError, match="field 'a': the spec is named 'b' but given as 'a'"):
        Form(a=String(name="b"))
    assert Form(a=String(name="a")).names == ("a",)


@pytest.mark.parametrize(
    "given",
    [[String(name="city")], "city", String(name="city")],
    ids=["a list of named specs", "a string", "one spec"],
)
def test_form_given_fields_not_by_name_says_how_to_give_them(given: Any) -> None:
    # It was Python's "dictionary update sequence element #0 has length 1; 2 is required"
    # (or "cannot convert dictionary update sequence element #0 to a sequence").
    with pytest.raises(
        FormSchemaError, match=r"Form\(\) takes fields by name \(Form\(city=String\(\)\)\) or one mapping"
    ) as caught:
        Form(given)
    assert "FormSchema([...])" in str(caught.value)


def test_form_checks_each_field_with_its_name() -> None:
    with pytest.raises(FormSchemaError) as caught:
        Form(size=Integer(minimum=5, maximum=1))
    assert caught.value.field == "size"
    assert str(caught.value) == "field 'size': the minimum value 5 is greater than the maximum value 1"
    with pytest.raises(
        FormSchemaError, match="field 'size': the default 30 is not a valid answer: it must be at most 20"
    ):
        Form(size=Integer(maximum=20, default=30))
    with pytest.raises(
        FormSchemaError, match="field 'c': the default 'x' is not a valid answer: it must be one of: a"
    ):
        Form(c=Choice(["a"], default="x"))
    with pytest.raises(FormSchemaError) as caught:
        Form(c=MultiChoice(["a"], default=["a", "a"]))
    # the default as it was written, and as it goes on the wire: a list, not a tuple
    assert (
        str(caught.value)
        == "field 'c': the default ['a', 'a'] is not a valid answer: it contains 'a' more than once"
    )


BAD = "caf\udce9"  # a file name with a byte that is not UTF-8, as os.listdir reads it


@pytest.mark.parametrize(
    ("fields", "where"),
    [
        ({BAD: String()}, "the name"),
        ({"f": String(title=BAD)}, "the title"),
        ({"f": Boolean(description=BAD)}, "the description"),
        ({"f": String(default=BAD)}, "the default"),
        ({"f": Choice(["notes", BAD])}, "option 'caf\\udce9'"),
        ({"f": Choice({"a": BAD})}, "the title of option 'a'"),
        ({"f": MultiChoice([BAD])}, "option 'caf\\udce9'"),
    ],
    ids=["name", "title", "description", "default", "choice", "choice title", "multi-choice"],
)
def test_text_no_json_message_can_carry_is_refused(fields: dict[str, Any], where: str) -> None:
    # The wire is UTF-8: sending such a form failed in the encoder (a 2026-07-28 call hung).
    with pytest.raises(FormSchemaError) as caught:
        Form(fields)
    assert caught.value.field == next(iter(fields))
    assert f"{where} has a character that is not text (U+DCE9)" in str(caught.value)
    with pytest.raises(FormSchemaError, match="U\\+DCE9"):
        FormSchema.parse({"type": "object", "properties": {"f": {"type": "string", "description": BAD}}})


def test_direct_construction_rules() -> None:
    with pytest.raises(FormSchemaError, match="every field needs a non-empty name"):
        FormSchema([String()])
    with pytest.raises(FormSchemaError, match="field 'a': the form has two fields of this name"):
        FormSchema([String(name="a"), Integer(name="a")])
    with pytest.raises(FormSchemaError, match="form fields must be String, Number"):
        FormSchema([{"name": "a"}])  # type: ignore[list-item]
    assert FormSchema([String(name="a")]) == Form(a=String())
    assert FormSchema(s for s in [String(name="a")]).fields == (String(name="a"),)


def test_equality_hash_and_repr() -> None:
    assert booking() == booking()
    assert hash(booking()) == hash(booking())
    assert booking() != Form(a=String())
    assert {booking(), booking()} == {booking()}
    text = repr(Form(a=String()))
    assert text.startswith("FormSchema(fields=(String(name='a'")
    assert "_validator" not in text


def test_forms_built_again_are_shared_and_cached_checks_stay_exact() -> None:
    """A form built again from equal fields is the same (immutable) object, but the
    caches never let a spec through that the checks refuse, however equal it compares:
    ``True == 1`` and ``1 == 1.0``, and ``not_secret`` is left out of spec equality."""
    assert Form(region=String()) is Form(region=String())
    assert Form({"a b": String()}) is Form({"a b": String()})
    Form(x=String())
    with pytest.raises(FormSchemaError, match="given twice"):
        Form({"x": String()}, x=String())
    assert Form(n=Integer()).wire != Form(n=Number()).wire  # equal values, other classes
    assert Form(n=Integer()).validate({"n": 3.0}) == {"n": 3}
    assert Form(n=Number(minimum=1)).wire["properties"]["n"]["minimum"] == 1
    assert repr(Form(n=Number(minimum=1.0)).wire["properties"]["n"]["minimum"]) == "1.0"
    for cached in (
        lambda: Form(x=String(min_length=1)),
        lambda: FormSchema([String(name="x", min_length=1)]),
    ):
        cached()
        with pytest.raises(FormSchemaError, match="minimum length"):
            Form(x=String(min_length=True))  # type: ignore[arg-type]
        with pytest.raises(FormSchemaError, match="minimum length"):
            FormSchema([String(name="x", min_length=True)])  # type: ignore[arg-type]
        assert cached().field("x").min_length == 1
    Form(api_key=String(not_secret=True))
    with pytest.raises(FormSchemaError, match="URL-mode elicitation"):
        Form(api_key=String())


def test_specs_at_their_defaults_share_a_build_only_when_identical() -> None:
    """A spec with every value but the name at its default is keyed short (its class
    and name); one whose values only compare equal to the defaults is not."""
    assert Form(x=Boolean()) is Form(x=Boolean())
    assert Form(x=Integer()) != Form(x=Number())
    for plain, equal_not_same, problem in (
        (String, {"required": 1}, "required must be True or False"),
        (Number, {"required": 1}, "required must be True or False"),
        (Integer, {"required": 1}, "required must be True or False"),
        (Boolean, {"required": 1.0}, "required must be True or False"),
    ):
        Form(x=plain())
        with pytest.raises(FormSchemaError, match=problem):
            Form(x=plain(**equal_not_same))
    spec = String(title="T")
    assert dataclasses.replace(spec, name="n") == String(name="n", title="T")
    with pytest.raises(dataclasses.FrozenInstanceError):
        spec.title = "U"  # type: ignore[misc]


def test_schema_is_immutable() -> None:
    schema = booking()
    with pytest.raises(dataclasses.FrozenInstanceError):
        schema.fields = ()  # type: ignore[misc]


def test_field_lookup_missing() -> None:
    with pytest.raises(KeyError):
        booking().field("nope")


def test_of() -> None:
    schema = booking()
    assert FormSchema.of(schema) is schema
    assert FormSchema.of(schema.to_json()) == schema
    assert FormSchema.of(Small) == Form(n=Integer())
    assert FormSchema.of(Small).target is Small
    wire = {"type": "object", "properties": {"token": {"type": "string"}}}
    assert FormSchema.of(wire, not_secret={"token"}).names == ("token",)
    with pytest.raises(FormSchemaError, match="a form is a FormSchema, a requestedSchema mapping or a class"):
        FormSchema.of(3)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("given", "said"),
    [
        ({"name": String(), "n": Integer()}, r"fields given in a dict: .* Form\(name=String\(\), \.\.\.\)"),
        ([String(name="name")], r"fields given in a list: .* Form\(name=String\(\), \.\.\.\)"),
        (Small(1), r"an instance of Small: pass the class itself, ctx.elicit\(message, Small\)"),
        (Form, r"the function Form itself: call it with the fields, Form\(name=String\(\), \.\.\.\)"),
        # the one-value shorthands of other toolkits (a choice, a type): a form of one field
        (
            ["red", "green"],
            r"not \['red', 'green'\]: a choice is a form of one field, "
            r"Form\(value=Choice\(\['red', 'green'\]\)\), read as answer.data\['value'\]$",
        ),
        (
            typing.Literal["red", "green"],
            r"a choice is a form of one field, Form\(value=Choice\(\['red', 'green'\]\)\)",
        ),
        (int, r"not int: one value is a form of one field, Form\(value=Integer\(\)\), read as answer"),
        (bool, r"not bool: one value is a form of one field, Form\(value=Boolean\(\)\)"),
    ],
)
def test_of_names_the_usual_slip_and_its_fix(given: Any, said: str) -> None:
    # Each was refused before, but as "not a FormSchema" or a requestedSchema without
    # "type": "object", which does not say what was meant or how to give it.
    with pytest.raises(FormSchemaError, match=said):
        FormSchema.of(given)


def test_build_without_binding_returns_the_clean_dict() -> None:
    assert booking().build({"party_size": 2, "date": "2026-01-01", "seating": "indoor", "x": 1}) == {
        "party_size": 2,
        "date": "2026-01-01",
        "seating": "indoor",
    }


def test_build_of_admitted_content_skips_the_second_check() -> None:
    form = booking()
    clean = form.admit({"party_size": 2.0, "date": "2026-01-01", "seating": "indoor", "x": 1})
    assert form.build(clean, checked=True) is clean
    assert clean == form.build(clean) == {"party_size": 2, "date": "2026-01-01", "seating": "indoor"}
    small = FormSchema.from_type(Small)
    built = small.build(small.admit({"n": 3.0}), checked=True)
    assert isinstance(built, Small) and built.n == 3
    assert type(built.n) is int


@pytest.mark.parametrize(
    "spec",
    [
        String(default="a"),
        Number(default=1.5),
        Integer(default=2),
        Boolean(default=True),
        Choice(["a"], default="a"),
        MultiChoice(["a"], default=["a"]),
    ],
)
def test_every_kind_round_trips_through_the_wire(spec: Any) -> None:
    schema = Form(f=spec)
    assert FormSchema.parse(schema.to_json()) == schema


def _options(count: int, prefix: str = "o") -> list[str]:
    return [f"{prefix}{i}" for i in range(count)]


@pytest.mark.parametrize(
    ("make", "said"),
    [
        (lambda past: Form({f"f{i}": String() for i in range(MAX_FIELDS + past)}), "the form has 257 fields"),
        (
            lambda past: Form({"a" * (MAX_NAME + past): String()}),
            "a field's name is 129 characters long \\('a+…'\\)",
        ),
        (lambda past: Form(c=Choice(_options(MAX_OPTIONS + past))), "it offers 100,001 options"),
        (
            lambda past: Form(
                a=MultiChoice(_options(MAX_OPTIONS, "a")),
                b=MultiChoice(_options(MAX_ALL_OPTIONS - MAX_OPTIONS - 1 + past, "b")),
                c=Choice(["c"]),
            ),
            "the form offers 200,001 options in all",
        ),
        (
            lambda past: Form(a=String(title="t" * (MAX_TITLE + past))),
            "field 'a': its title is 100,001 characters long",
        ),
        (
            lambda past: Form(a=String(description="d" * (MAX_TEXT + past))),
            "field 'a': its description is 1,000,001 characters long",
        ),
        (
            lambda past: Form(a=String(default="d" * (MAX_TEXT + past), max_length=2 * MAX_TEXT)),
            "field 'a': its default is 1,000,001 characters long",
        ),
        (
            lambda past: Form(a=Choice({"a": "y" * (MAX_TITLE + past), "b": "B"})),
            "field 'a': the title of option 1 is 100,001 characters long",
        ),
        (
            lambda past: Form(a=MultiChoice(["v" * (MAX_TITLE + past), "b"])),
            "field 'a': option 1 is 100,001 characters long",
        ),
    ],
)
def test_a_form_larger_than_a_client_reads_is_refused_when_built(make: Any, said: str) -> None:
    # At the client's limits the form is built and read back; one step past them, a form
    # the client would refuse to show is refused where the author wrote it, naming the limit.
    within = make(0)
    assert FormSchema.parse(within.to_json(), beyond_subset="relax") == within
    with pytest.raises(FormSchemaError, match=f"{said}; mcp-elicit's client reads at most"):
        make(1)


def test_a_title_told_apart_on_reading_stays_within_what_the_client_reads() -> None:
    # Titles a person reads alike are followed by their values; where that would pass the
    # limit on a title, each option is titled by its value instead, and the form is read.
    long = "y" * MAX_TITLE
    wire = {
        "type": "object",
        "properties": {
            "c": {"type": "string", "oneOf": [{"const": "a", "title": long}, {"const": "b", "title": long}]}
        },
    }
    read = FormSchema.parse(wire, beyond_subset="relax")
    assert list(read.fields[0].options) == [("a", "a"), ("b", "b")]  # type: ignore[union-attr]
