"""Reading requestedSchema off the wire: every variant, the spec's examples, and the
leniencies (harmless extras, dialects meaning the same, multi-select, integral floats,
legacy options)."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from mcp_elicit.errors import FormSchemaError
from mcp_elicit.forms import Boolean, Choice, FormSchema, Integer, MultiChoice, Number, Option, String

from support.forms_parse import form

VARIANTS: dict[str, tuple[dict[str, Any], Any]] = {
    "string": (
        {
            "type": "string",
            "title": "Name",
            "description": "Full",
            "minLength": 3,
            "maxLength": 50,
            "default": "Ann",
        },
        String(name="f", title="Name", description="Full", min_length=3, max_length=50, default="Ann"),
    ),
    "email": ({"type": "string", "format": "email"}, String(name="f", format="email")),
    "uri": ({"type": "string", "format": "uri"}, String(name="f", format="uri")),
    "date": (
        {"type": "string", "format": "date", "default": "2026-01-01"},
        String(name="f", format="date", default="2026-01-01"),
    ),
    "date-time": ({"type": "string", "format": "date-time"}, String(name="f", format="date-time")),
    "number": (
        {"type": "number", "minimum": 0, "maximum": 100, "default": 50.5},
        Number(name="f", minimum=0, maximum=100, default=50.5),
    ),
    "integer": (
        {"type": "integer", "minimum": 1, "maximum": 20, "default": 2},
        Integer(name="f", minimum=1, maximum=20, default=2),
    ),
    "boolean": ({"type": "boolean", "default": False}, Boolean(name="f", default=False)),
    "untitled enum": (
        {"type": "string", "enum": ["Red", "Green"], "default": "Red"},
        Choice(["Red", "Green"], name="f", default="Red"),
    ),
    "titled enum": (
        {"type": "string", "oneOf": [{"const": "#F00", "title": "Red"}, {"const": "#0F0", "title": "Green"}]},
        Choice({"#F00": "Red", "#0F0": "Green"}, name="f"),
    ),
    "legacy enum": (
        {"type": "string", "enum": ["#F00", "#0F0"], "enumNames": ["Red", "Green"]},
        Choice({"#F00": "Red", "#0F0": "Green"}, name="f", legacy_enum_names=True),
    ),
    "untitled multi": (
        {
            "type": "array",
            "items": {"type": "string", "enum": ["a", "b"]},
            "minItems": 1,
            "maxItems": 2,
            "default": ["a"],
        },
        MultiChoice(["a", "b"], name="f", min_items=1, max_items=2, default=["a"]),
    ),
    "titled multi": (
        {"type": "array", "items": {"anyOf": [{"const": "a", "title": "A"}, {"const": "b", "title": "B"}]}},
        MultiChoice({"a": "A", "b": "B"}, name="f"),
    ),
}


@pytest.mark.parametrize("variant", VARIANTS)
def test_each_variant_parses_and_round_trips(variant: str) -> None:
    wire, spec = VARIANTS[variant]
    schema = FormSchema.parse(form({"f": wire}, ["f"]))
    assert schema.fields == (spec,)
    assert schema.to_json() == form({"f": wire}, ["f"])
    assert FormSchema.parse(schema.to_json()) == schema


def test_optional_and_order() -> None:
    schema = FormSchema.parse(form({"b": {"type": "string"}, "a": {"type": "boolean"}}, ["a"]))
    assert schema.names == ("b", "a")
    assert schema.required == ("a",)
    assert schema.field("b").required is False
    assert schema.to_json() == form({"b": {"type": "string"}, "a": {"type": "boolean"}}, ["a"])


def test_empty_form_and_no_required() -> None:
    schema = FormSchema.parse({"type": "object", "properties": {}})
    assert schema.fields == ()
    assert schema.to_json() == {"type": "object", "properties": {}}


def test_parse_does_not_mutate_input() -> None:
    wire = form({"f": VARIANTS["untitled multi"][0]}, ["f"])
    before = copy.deepcopy(wire)
    FormSchema.parse(wire)
    assert wire == before


def test_spec_examples_parse() -> None:
    contact = {
        "type": "object",
        "properties": {
            "name": {"type": "string", "description": "Your full name"},
            "email": {"type": "string", "format": "email", "description": "Your email address"},
            "age": {"type": "number", "minimum": 18, "description": "Your age"},
        },
        "required": ["name", "email"],
    }
    schema = FormSchema.parse(contact)
    assert schema.validate({"name": "Monalisa Octocat", "email": "octocat@github.com", "age": 30}) == {
        "name": "Monalisa Octocat",
        "email": "octocat@github.com",
        "age": 30,
    }


@pytest.mark.parametrize(
    ("extra", "where"),
    [
        ({"$schema": "https://json-schema.org/draft/2020-12/schema"}, "top"),
        ({"$id": "x", "$comment": "c", "title": "T", "description": "D"}, "top"),
        ({"additionalProperties": False}, "top"),
        ({"additionalProperties": True}, "top"),
        ({"$comment": "c", "examples": ["x"], "deprecated": False}, "field"),
    ],
)
def test_harmless_extras_are_dropped(extra: dict[str, Any], where: str) -> None:
    prop: dict[str, Any] = {"type": "string"}
    if where == "field":
        prop.update(extra)
        wire = form({"f": prop})
    else:
        wire = form({"f": prop}, **extra)
    assert FormSchema.parse(wire).to_json() == form({"f": {"type": "string"}})


@pytest.mark.parametrize(
    "dialect",
    [
        "https://json-schema.org/draft/2020-12/schema",
        "https://json-schema.org/draft/2020-12/schema#",
        "http://json-schema.org/draft/2020-12/schema",
        "https://json-schema.org/draft/2019-09/schema",
        "http://json-schema.org/draft-07/schema#",
        "http://json-schema.org/draft-07/schema",
        "http://json-schema.org/draft-06/schema#",
    ],
)
def test_a_dialect_whose_form_keywords_mean_the_same_is_read(dialect: str) -> None:
    wire = form({"f": {"type": "string", "enum": ["a", "b"]}}, **{"$schema": dialect})
    assert FormSchema.parse(wire).to_json() == form({"f": {"type": "string", "enum": ["a", "b"]}})


@pytest.mark.parametrize(
    "dialect",
    [
        "http://json-schema.org/draft-04/schema#",  # no const: a titled choice would take anything
        "http://json-schema.org/draft-03/schema#",  # required is a boolean on each property
        "https://json-schema.org/draft/2099-01/schema",
        "https://example.com/my-dialect",
        "",
    ],
)
def test_a_dialect_this_implementation_does_not_support_is_refused_by_name(dialect: str) -> None:
    # 2026-07-28 and 2025-11-25 basic/index, JSON Schema Usage: a schema is read by the
    # dialect its $schema names, and an unsupported one gets an error that says so.
    with pytest.raises(FormSchemaError) as caught:
        FormSchema.parse(form({"f": {"type": "string"}}, **{"$schema": dialect}))
    assert caught.value.field is None
    assert f"$schema names the JSON Schema dialect {dialect!r}, which is not supported" in str(caught.value)
    assert "2020-12" in str(caught.value) and "draft-07" in str(caught.value)


def test_multi_select_leniencies() -> None:
    wire = {
        "type": "array",
        "uniqueItems": True,
        "items": {"type": "string", "anyOf": [{"const": "a", "title": "A"}]},
    }
    assert FormSchema.parse(form({"f": wire})).fields[0] == MultiChoice({"a": "A"}, name="f", required=False)
    # items without a type, their enum all strings (as FastMCP 4 sends a multi-select)
    untyped = FormSchema.parse(form({"f": {"type": "array", "items": {"enum": ["a", "b"]}}}))
    assert untyped.fields[0] == MultiChoice(["a", "b"], name="f", required=False)
    assert untyped.to_json()["properties"]["f"]["items"] == {"type": "string", "enum": ["a", "b"]}


def test_integral_floats_are_read_as_ints() -> None:
    schema = FormSchema.parse(
        form(
            {
                "s": {"type": "string", "minLength": 2.0},
                "i": {"type": "integer", "minimum": 1.0, "default": 3.0},
            }
        )
    )
    s, i = schema.fields
    assert isinstance(s, String)
    assert isinstance(i, Integer)
    assert (s.min_length, i.default, i.minimum) == (2, 3, 1)
    assert all(type(n) is int for n in (s.min_length, i.default, i.minimum))


def test_integer_with_fractional_bound_is_kept() -> None:
    (spec,) = FormSchema.parse(form({"i": {"type": "integer", "minimum": 1.5}})).fields
    assert isinstance(spec, Integer)
    assert spec.minimum == 1.5


def test_legacy_options_are_pairs() -> None:
    (spec,) = FormSchema.parse(form({"c": VARIANTS["legacy enum"][0]})).fields
    assert isinstance(spec, Choice)
    assert spec.options == (Option("#F00", "Red"), Option("#0F0", "Green"))
    assert spec.legacy_enum_names is True
