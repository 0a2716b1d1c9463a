"""FormSchema read off the wire: defaults a reader may drop, exclusive bounds no number (or
no whole number) lies between, options told apart by value, and forms too large for any
person."""

from __future__ import annotations

from typing import Any, NoReturn

import pytest

from mcp_elicit.errors import FormSchemaError
from mcp_elicit.forms import FormSchema, foreign
from mcp_elicit.forms import schema as schema_module
from tests.support.deadline import within

# What the official Python SDK renders for a pydantic model whose defaults break their
# own constraints (pydantic does not check defaults): valid under both revisions'
# schema.json, and JSON Schema only recommends that a default be valid.
UNFIT_DEFAULTS: dict[str, Any] = {
    "type": "object",
    "title": "Booking",
    "properties": {
        "name": {"type": "string", "title": "Name", "minLength": 1, "default": ""},
        "guests": {"type": "integer", "title": "Guests", "minimum": 1, "maximum": 20, "default": 0},
        "when": {"type": "string", "format": "date", "default": "2026-02-30"},
        "seat": {"type": "string", "enum": ["in", "out"], "default": "window"},
        "extras": {
            "type": "array",
            "items": {"type": "string", "enum": ["cake"]},
            "default": ["cake", "cake"],
        },
        "ok": {"type": "boolean", "default": True},
    },
    "required": ["name"],
}


def test_a_reader_may_drop_the_defaults_that_break_their_own_field() -> None:
    with pytest.raises(FormSchemaError, match="the default '' is not a valid answer"):
        FormSchema.parse(UNFIT_DEFAULTS, check_secrets=False)
    schema = FormSchema.parse(UNFIT_DEFAULTS, check_secrets=False, unfit_defaults="drop")
    assert [(s.name, s.default) for s in schema.fields] == [
        ("name", None),
        ("guests", None),
        ("when", None),
        ("seat", None),
        ("extras", None),
        ("ok", True),
    ]
    assert [(p.field, p.message) for p in schema.dropped_defaults] == [
        ("name", "the default '' is not a valid answer: it must not be empty; it is not pre-filled"),
        ("guests", "the default 0 is not a valid answer: it must be at least 1; it is not pre-filled"),
        (
            "when",
            "the default '2026-02-30' is not a valid answer: it names a day that does not exist; "
            "it must be a date like 2026-12-31; it is not pre-filled",
        ),
        (
            "seat",
            "the default 'window' is not a valid answer: it must be one of: in, out; it is not pre-filled",
        ),
        (
            "extras",
            "the default ['cake', 'cake'] is not a valid answer: it contains 'cake' more than once; "
            "it is not pre-filled",
        ),
    ]
    # the rest of the form is read and checked as ever
    assert schema.validate({"name": "Ann", "guests": 2}) == {"name": "Ann", "guests": 2}
    assert schema.apply_defaults({}) == {"ok": True}
    assert FormSchema.parse(schema.to_json()).dropped_defaults == ()
    with pytest.raises(FormSchemaError, match="the minimum value 5 is greater than the maximum value 1"):
        FormSchema.parse(
            {
                "type": "object",
                "properties": {"n": {"type": "integer", "minimum": 5, "maximum": 1, "default": 3}},
            },
            unfit_defaults="drop",
        )
    with pytest.raises(ValueError, match="unfit_defaults must be 'refuse' or 'drop'"):
        FormSchema.parse(UNFIT_DEFAULTS, unfit_defaults="ignore")  # type: ignore[arg-type]


def test_a_default_the_relaxed_keywords_refuse_is_refused_unless_dropped() -> None:
    share = {
        "type": "object",
        "properties": {"share": {"type": "number", "exclusiveMinimum": 0, "default": 0}},
    }
    with pytest.raises(FormSchemaError, match="the default 0 is not a valid answer: it must be more than 0"):
        FormSchema.parse(share, beyond_subset="relax")
    read = FormSchema.parse(share, beyond_subset="relax", unfit_defaults="drop")
    assert read.field("share").default is None
    assert [p.field for p in read.dropped_defaults] == ["share"]


@pytest.mark.parametrize(
    ("bounds", "message"),
    [
        ({"exclusiveMinimum": 5, "maximum": 5}, "no number is more than 5 and at most 5"),
        ({"minimum": 5, "exclusiveMaximum": 5}, "no number is at least 5 and less than 5"),
        ({"exclusiveMinimum": 5, "exclusiveMaximum": 5}, "no number is more than 5 and less than 5"),
        ({"exclusiveMinimum": 6, "maximum": 5.5}, "no number is more than 6 and at most 5.5"),
        ({"exclusiveMinimum": 0.5, "exclusiveMaximum": -1}, "no number is more than 0.5 and less than -1"),
    ],
)
def test_exclusive_bounds_no_number_lies_between_are_refused_naming_the_field(
    bounds: dict[str, Any], message: str
) -> None:
    wire = {"type": "object", "properties": {"share": {"type": "number", **bounds}}}
    for drop in ("refuse", "drop"):
        with pytest.raises(FormSchemaError) as caught:
            FormSchema.parse(wire, beyond_subset="relax", unfit_defaults=drop)  # type: ignore[arg-type]
        assert caught.value.field == "share"
        assert str(caught.value) == f"field 'share': {message}"


@pytest.mark.parametrize(
    "bounds",
    [
        {"exclusiveMinimum": 5, "maximum": 5.000001},
        {"minimum": 5, "maximum": 5},
        {"exclusiveMinimum": 4, "minimum": 5, "maximum": 5},
        {"exclusiveMinimum": -1, "exclusiveMaximum": 1},
    ],
)
def test_exclusive_bounds_with_room_between_are_read(bounds: dict[str, Any]) -> None:
    wire = {"type": "object", "properties": {"share": {"type": "number", **bounds}}}
    FormSchema.parse(wire, beyond_subset="relax")


def test_another_servers_options_with_the_same_title_are_read_and_told_apart_by_value() -> None:
    wire = {
        "type": "object",
        "properties": {
            "one": {
                "type": "string",
                "oneOf": [{"const": "a", "title": "Yes"}, {"const": "b", "title": "Yes"}],
            },
            "legacy": {"type": "string", "enum": ["x", "y", "z"], "enumNames": ["Same", "same ", "Other"]},
            "many": {
                "type": "array",
                "items": {"anyOf": [{"const": "p", "title": "Yes"}, {"const": "q", "title": "Yes"}]},
            },
            # Telling two apart by value must not make a third's title twice.
            "tricky": {
                "type": "string",
                "oneOf": [
                    {"const": "a", "title": "Yes"},
                    {"const": "b", "title": "Yes"},
                    {"const": "c", "title": "Yes (b)"},
                ],
            },
        },
    }
    schema = FormSchema.parse(wire, check_secrets=False, unfit_defaults="drop", beyond_subset="relax")
    titles = {spec.name: [title for _, title in spec.options] for spec in schema.fields}  # type: ignore[union-attr]
    assert titles["one"] == ["Yes (a)", "Yes (b)"]
    assert titles["legacy"] == ["Same (x)", "same  (y)", "Other"]
    assert titles["many"] == ["Yes (p)", "Yes (q)"]
    assert len({t.casefold() for t in titles["tricky"]}) == 3
    assert schema.validate({"one": "b", "legacy": "y", "many": ["p", "q"], "tricky": "c"})["one"] == "b"


@pytest.mark.parametrize(
    ("bounds", "message"),
    [
        ({"exclusiveMinimum": 5, "exclusiveMaximum": 6}, "no whole number is more than 5 and less than 6"),
        ({"exclusiveMinimum": 5, "maximum": 5.5}, "no whole number is more than 5 and at most 5.5"),
        ({"minimum": 5.5, "exclusiveMaximum": 6}, "no whole number is at least 5.5 and less than 6"),
        (
            {"exclusiveMinimum": 4, "minimum": 5.2, "exclusiveMaximum": 6},
            "no whole number is at least 5.2 and less than 6",
        ),
        (
            {"exclusiveMinimum": 5.5, "exclusiveMaximum": 5.9},
            "no whole number is more than 5.5 and less than 5.9",
        ),
    ],
)
def test_integer_exclusive_bounds_no_whole_number_lies_between_are_refused_in_the_servers_words(
    bounds: dict[str, Any], message: str
) -> None:
    wire = {"type": "object", "properties": {"count": {"type": "integer", **bounds}}}
    with pytest.raises(FormSchemaError) as caught:
        FormSchema.parse(wire, beyond_subset="relax")
    assert caught.value.field == "count"
    assert str(caught.value) == f"field 'count': {message}"


def test_integer_exclusive_bounds_with_a_whole_number_between_are_read() -> None:
    wire = {
        "type": "object",
        "properties": {"count": {"type": "integer", "exclusiveMinimum": 5, "exclusiveMaximum": 7}},
    }
    assert FormSchema.parse(wire, beyond_subset="relax").validate({"count": 6}) == {"count": 6}


def _foreign(properties: dict[str, Any], **top: Any) -> FormSchema:
    wire = {"type": "object", "properties": properties, **top}
    return FormSchema.parse(wire, check_secrets=False, unfit_defaults="drop", beyond_subset="relax")


@pytest.mark.parametrize(
    ("properties", "field", "message"),
    [
        (
            {f"f{i:06}": {"type": "string", "title": "T"} for i in range(400_000)},
            None,
            "the form has 400,000 fields; this client reads at most 256",
        ),
        (
            {"f" * 16_000_000: {"type": "string"}},
            None,
            f"a field's name is 16,000,000 characters long ('{'f' * 40}…'); this client reads at most 128",
        ),
        (
            {"f": {"type": "string", "title": "t" * 100_001}},
            "f",
            "its title is 100,001 characters long; this client reads at most 100,000",
        ),
        (
            {"f": {"type": "string", "description": "word " * 3_000_000}},
            "f",
            "its description is 15,000,000 characters long; this client reads at most 1,000,000",
        ),
        (
            {"f": {"type": "string", "default": "x" * 1_000_001}},
            "f",
            "its default is 1,000,001 characters long; this client reads at most 1,000,000",
        ),
        (
            {"f": {"type": "string", "enum": [f"v{j}" for j in range(400_000)]}},
            "f",
            "it offers 400,000 options; this client reads at most 100,000 in a choice",
        ),
        (
            {
                "f": {
                    "type": "array",
                    "items": {"anyOf": [{"const": f"v{j}", "title": "T"} for j in range(100_001)]},
                }
            },
            "f",
            "it offers 100,001 options; this client reads at most 100,000 in a choice",
        ),
        (
            {"f": {"type": "string", "enum": ["a", "b"], "enumNames": ["A", "B" * 100_001]}},
            "f",
            "the title of option 2 is 100,001 characters long; this client reads at most 100,000",
        ),
        (
            {"f": {"type": "string", "oneOf": [{"const": "v" * 100_001, "title": "V"}]}},
            "f",
            "option 1 is 100,001 characters long; this client reads at most 100,000",
        ),
        (
            {f"f{i}": {"type": "string", "enum": [f"v{j}" for j in range(50_000)]} for i in range(5)},
            None,
            "the form offers 250,000 options in all; this client reads at most 200,000",
        ),
    ],
)
def test_a_form_too_large_for_any_person_is_refused_at_once_naming_the_limit(
    properties: dict[str, Any], field: str | None, message: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A 16 MB form with 400,000 fields took 11 s of CPU to read: it is refused by its size
    # alone, before any field is read (reading one here fails the test).
    def read(*args: object) -> NoReturn:
        raise AssertionError("a field was read before the form's size was checked")

    monkeypatch.setattr(foreign, "_relax_field", read)
    monkeypatch.setattr(schema_module, "parse_fields", read)
    with within(60, "refusing an oversized form"), pytest.raises(FormSchemaError) as caught:
        _foreign(properties)
    assert caught.value.field == field
    assert str(caught.value) == (f"field {field!r}: {message}" if field else message)


def test_a_form_at_the_limits_is_read() -> None:
    properties: dict[str, Any] = {f"{'n' * 120}{i:03}": {"type": "integer"} for i in range(253)}
    properties |= {
        f"c{i}": {"type": "string", "title": "t" * 100_000, "enum": [f"{i}-{j}" for j in range(100_000)]}
        for i in range(2)
    }
    properties["d"] = {"type": "string", "description": "d" * 1_000_000, "default": "x" * 1_000_000}
    assert len(_foreign(properties).fields) == 256


def test_a_long_field_name_is_cut_in_a_message() -> None:
    with pytest.raises(FormSchemaError) as caught:
        FormSchema.parse({"type": "object", "properties": {"n" * 100: {"type": "bogus"}}})
    text = str(caught.value)
    assert text.startswith(f"field '{'n' * 59}… (102 characters): ") and caught.value.field == "n" * 100


def test_another_servers_option_with_a_blank_title_is_shown_by_its_value() -> None:
    wire = {
        "type": "object",
        "properties": {
            "one": {"type": "string", "oneOf": [{"const": "a", "title": "Yes"}, {"const": "b", "title": ""}]},
            "legacy": {"type": "string", "enum": ["x", "y"], "enumNames": [" ", "Other"]},
            "many": {
                "type": "array",
                "items": {"anyOf": [{"const": "p", "title": ""}, {"const": "q", "title": "p"}]},
            },
        },
    }
    schema = FormSchema.parse(wire, check_secrets=False, unfit_defaults="drop", beyond_subset="relax")
    titles = {spec.name: [title for _, title in spec.options] for spec in schema.fields}  # type: ignore[union-attr]
    assert titles == {"one": ["Yes", "b"], "legacy": ["x", "Other"], "many": ["p (p)", "p (q)"]}


def test_another_servers_blank_option_with_a_blank_title_is_shown_by_a_placeholder() -> None:
    # A blank title gives way to its value; a value as blank gives way to words that say so,
    # each blank value its own (a space and two spaces are two options).
    wire = {
        "type": "object",
        "properties": {
            "one": {"type": "string", "oneOf": [{"const": "", "title": ""}, {"const": "x", "title": "X"}]},
            "legacy": {"type": "string", "enum": ["", "x"], "enumNames": ["", "X"]},
            "spaces": {
                "type": "string",
                "oneOf": [
                    {"const": " ", "title": " "},
                    {"const": "  ", "title": ""},
                    {"const": "x", "title": "X"},
                ],
            },
            "many": {
                "type": "array",
                "items": {"anyOf": [{"const": "\t", "title": " "}, {"const": "", "title": ""}]},
            },
        },
    }
    schema = FormSchema.parse(wire, check_secrets=False, unfit_defaults="drop", beyond_subset="relax")
    options = {spec.name: list(spec.options) for spec in schema.fields}  # type: ignore[union-attr]
    assert options == {
        "one": [("", "(blank)"), ("x", "X")],
        "legacy": [("", "(blank)"), ("x", "X")],
        "spaces": [(" ", "(blank: U+0020)"), ("  ", "(blank: U+0020 U+0020)"), ("x", "X")],
        "many": [("\t", "(blank: U+0009)"), ("", "(blank)")],
    }


def test_another_servers_options_listed_twice_are_read_once_each() -> None:
    """Neither revision's schema.json asks a choice's values to be unique (no
    ``uniqueItems``): another server's form that repeats one is read, each value once
    with the title it first came with, and answered with the same values. A form this
    toolkit builds, or read strictly, still refuses it."""
    properties: dict[str, Any] = {
        "plain": {"type": "string", "enum": ["a", "b", "a"]},
        "legacy": {"type": "string", "enum": ["x", "y", "x"], "enumNames": ["X", "Y", "X again"]},
        "titled": {
            "type": "string",
            "oneOf": [
                {"const": "a", "title": "A", "description": "the first"},
                {"const": "b", "title": "B"},
                {"const": "a", "title": "A", "description": "the second"},
            ],
        },
        "many": {"type": "array", "items": {"type": "string", "enum": ["p", "p", "q"]}},
        "many_titled": {
            "type": "array",
            "items": {"anyOf": [{"const": "p", "title": "P"}, {"const": "p", "title": "Also P"}]},
        },
    }
    schema = _foreign(properties)
    options = {spec.name: list(spec.options) for spec in schema.fields}  # type: ignore[union-attr]
    assert options == {
        "plain": [("a", None), ("b", None)],
        "legacy": [("x", "X"), ("y", "Y")],
        "titled": [("a", "A"), ("b", "B")],
        "many": [("p", None), ("q", None)],
        "many_titled": [("p", "P")],
    }
    assert schema.extras("titled").option_descriptions == {"a": "the first"}
    answer = {"plain": "a", "legacy": "x", "titled": "a", "many": ["p", "q"], "many_titled": ["p"]}
    assert schema.validate(answer) == answer
    for name, prop in properties.items():
        if name == "titled":  # the descriptions aside, which a strict reader refuses first
            prop = {**prop, "oneOf": [{"const": o["const"], "title": o["title"]} for o in prop["oneOf"]]}
        with pytest.raises(FormSchemaError, match="is listed twice") as caught:
            FormSchema.parse({"type": "object", "properties": {name: prop}})
        assert caught.value.field == name
