"""Reading requestedSchema off the wire: every refusal, naming the field and the rule, with
what is allowed and huge values cut short."""

from __future__ import annotations

import re
from typing import Any

import pytest

from mcp_elicit.errors import FormSchemaError, SensitiveFieldError
from mcp_elicit.forms import FormSchema
from tests.support.deadline import within

from support.forms_parse import form

TOP_REFUSALS: list[tuple[object, str]] = [
    ([], "a requestedSchema must be a JSON object, not an array"),
    ("x", "a requestedSchema must be a JSON object, not a string"),
    (None, "a requestedSchema must be a JSON object, not null"),
    ({"properties": {}}, 'a requestedSchema must have "type": "object", not None'),
    ({"type": "array", "properties": {}}, 'must have "type": "object", not \'array\''),
    ({"type": "object"}, 'needs "properties" as an object, not null'),
    ({"type": "object", "properties": []}, 'needs "properties" as an object, not an array'),
    ({"type": "object", "properties": {}, "$ref": "#/x"}, "references ($ref) are not allowed"),
    ({"type": "object", "properties": {}, "$defs": {}}, "keyword '$defs' is not part of the form subset"),
    ({"type": "object", "properties": {}, "allOf": []}, "allOf is not part of the form subset"),
    ({"type": "object", "properties": {}, "patternProperties": {}}, "keyword 'patternProperties'"),
    (
        {"type": "object", "properties": {}, "additionalProperties": {"type": "string"}},
        "additionalProperties may only be true or false",
    ),
    (
        {"type": "object", "properties": {}, "additionalProperties": 0},
        "additionalProperties may only be true or false",
    ),
    ({"type": "object", "properties": {}, "$schema": 7}, "$schema must be a string"),
    ({"type": "object", "properties": {}, "required": None}, '"required" must be an array of field names'),
    ({"type": "object", "properties": {}, "required": "a"}, '"required" must be an array of field names'),
    ({"type": "object", "properties": {}, "required": [1]}, '"required" must be an array of field names'),
    ({"type": "object", "properties": {"": {"type": "string"}}}, "property names must be non-empty strings"),
]


@pytest.mark.parametrize(("wire", "message"), TOP_REFUSALS)
def test_top_level_refusals(wire: object, message: str) -> None:
    with pytest.raises(FormSchemaError) as caught:
        FormSchema.parse(wire)
    assert message in str(caught.value)
    assert caught.value.field is None


def test_required_names_must_be_properties_and_unique() -> None:
    with pytest.raises(FormSchemaError) as caught:
        FormSchema.parse(form({"a": {"type": "string"}}, ["a", "b"]))
    assert caught.value.field == "b"
    assert 'listed in "required" but is not one of the properties' in str(caught.value)
    with pytest.raises(FormSchemaError) as caught:
        FormSchema.parse(form({"a": {"type": "string"}}, ["a", "a"]))
    assert caught.value.field == "a"
    assert 'listed twice in "required"' in str(caught.value)


def test_a_repeated_required_name_is_found_in_one_pass_over_a_long_list() -> None:
    # A server's form with 100,000 fields, the last required twice: counting each name
    # again took minutes (quadratic).
    names = [f"f{i}" for i in range(100_000)]
    schema = form({name: {"type": "string"} for name in names}, [*names, names[-1]])
    with within(60, "finding the repeated required name"), pytest.raises(FormSchemaError) as caught:
        FormSchema.parse(schema)
    assert caught.value.field == "f99999"
    assert 'listed twice in "required"' in str(caught.value)
    # Of several repeated names, the one listed first is named.
    with pytest.raises(FormSchemaError) as caught:
        FormSchema.parse(form({"a": {"type": "string"}, "b": {"type": "string"}}, ["a", "b", "b", "a"]))
    assert caught.value.field == "a"


FIELD_REFUSALS: list[tuple[object, str]] = [
    ({"type": "string", "title": None}, "title must not be null; leave it out instead"),
    ({"type": "integer", "default": None}, "default must not be null"),
    ("string", "a property schema must be an object, not a string"),
    ({}, 'it has no "type"'),
    ({"$ref": "#/$defs/x"}, "references ($ref) are not allowed"),
    # no "type", but a keyword that says what was meant: that is what the message names
    (
        {"anyOf": [{"type": "string"}, {"type": "null"}]},
        'anyOf is not part of the form subset: give the field one "type", and to make it '
        'optional leave it out of "required"',
    ),
    ({"oneOf": [{"type": "string"}, {"type": "integer"}]}, 'oneOf needs "type": "string" beside it'),
    ({"allOf": [{"type": "string"}]}, "allOf is not part of the form subset"),
    ({"properties": {"b": {"type": "string"}}}, "nested objects are not allowed"),
    ({"enum": ["a", "b"]}, 'enum needs "type": "string" beside it'),
    ({"const": "a"}, "const is only allowed inside oneOf/anyOf options"),
    ({"not": {"type": "string"}}, 'it has no "type"'),
    ({"type": ["string", "null"]}, "type must be a single name, not a list"),
    ({"type": "object", "properties": {}}, "nested objects are not allowed"),
    ({"type": "null"}, "type 'null' is not allowed"),
    ({"type": "text"}, "type 'text' is not allowed"),
    ({"type": "string", "title": 3}, "title must be a string, not a number"),
    ({"type": "string", "description": ["x"]}, "description must be a string, not an array"),
    ({"type": "string", "title": {}}, "title must be a string, not an object"),
    ({"type": "string", "pattern": "^a$"}, "pattern is not part of the form subset"),
    ({"type": "string", "format": "phone"}, "format 'phone' is not supported"),
    ({"type": "string", "format": 3}, "format must be a string"),
    ({"type": "string", "minLength": -1}, "minLength must be a whole number of 0 or more, not -1"),
    ({"type": "string", "maxLength": 1.5}, "maxLength must be a whole number of 0 or more, not 1.5"),
    ({"type": "string", "maxLength": True}, "maxLength must be a whole number of 0 or more"),
    ({"type": "string", "maxLength": 1e20}, "the maximum length must be at most 9007199254740991"),
    (
        {"type": "string", "minLength": 5, "maxLength": 2},
        "the minimum length 5 is greater than the maximum length 2",
    ),
    ({"type": "string", "default": 3}, "the default must be a string, not a number (3)"),
    (
        {"type": "string", "minLength": 5, "default": "abc"},
        "the default 'abc' is not a valid answer: it must be at least 5",
    ),
    (
        {"type": "string", "format": "email", "default": "x"},
        "the default 'x' is not a valid answer: it has no @ between a name and a domain; it must be an email",
    ),
    ({"type": "string", "nullable": True}, "nullable is not part of the form subset"),
    ({"type": "string", "const": "x"}, "const is only allowed inside oneOf/anyOf options"),
    ({"type": "string", "anyOf": []}, "anyOf is only allowed inside the items of a multi-select"),
    (
        {"type": "number", "exclusiveMinimum": 0},
        "exclusive bounds are not part of the form subset; use minimum",
    ),
    (
        {"type": "number", "exclusiveMaximum": 0},
        "exclusive bounds are not part of the form subset; use maximum",
    ),
    ({"type": "number", "multipleOf": 2}, "keyword 'multipleOf' is not part of the form subset"),
    ({"type": "number", "minimum": "1"}, "minimum must be a finite number"),
    ({"type": "number", "minimum": True}, "minimum must be a finite number"),
    ({"type": "number", "maximum": float("inf")}, "maximum must be a finite number"),
    (
        {"type": "number", "minimum": 5, "maximum": 1},
        "the minimum value 5 is greater than the maximum value 1",
    ),
    ({"type": "number", "default": "5"}, "default must be a finite number"),
    (
        {"type": "number", "maximum": 10, "default": 50},
        "the default 50 is not a valid answer: it must be at most 10",
    ),
    ({"type": "integer", "default": 1.5}, "the default must be a whole number, not 1.5"),
    ({"type": "number", "maximum": 10**400}, "the maximum value must be a finite number, and a whole one"),
    ({"type": "integer", "maximum": 10**30}, "the maximum value must be between -9007199254740991 and"),
    ({"type": "integer", "default": 2**53}, "the default must be between -9007199254740991 and"),
    ({"type": "integer", "minimum": 1.2, "maximum": 1.8}, "no whole number lies between the minimum 1.2"),
    ({"type": "integer", "enum": [1, 2]}, "enum is only allowed on string fields"),
    (
        {"type": "integer", "minLength": 1},
        "keyword 'minLength' is not part of the form subset (in a number field",
    ),
    ({"type": "boolean", "default": "true"}, "the default must be true or false"),
    ({"type": "boolean", "default": 0}, "the default must be true or false"),
    ({"type": "string", "enum": []}, "enum must be a non-empty array of strings"),
    ({"type": "string", "enum": "a"}, "enum must be a non-empty array of strings"),
    ({"type": "string", "enum": ["a", 1]}, "enum must hold strings only, not a number (1)"),
    ({"type": "string", "enum": ["a", "a"]}, "option 'a' is listed twice"),
    (
        {"type": "string", "enum": ["a"], "default": "b"},
        "the default 'b' is not a valid answer: it must be one of: a",
    ),
    ({"type": "string", "enum": ["a"], "default": 1}, "the default must be one of the option strings"),
    (
        {"type": "string", "enum": ["a"], "format": "email"},
        "keyword 'format' is not part of the form subset (in a single-select",
    ),
    ({"type": "string", "enum": ["a"], "minLength": 1}, "keyword 'minLength' is not part of the form subset"),
    ({"type": "string", "enumNames": ["A"]}, "enumNames needs an enum beside it"),
    ({"type": "string", "enum": ["a", "b"], "enumNames": ["A"]}, "enumNames has 1 titles for 2 enum values"),
    ({"type": "string", "enum": ["a"], "enumNames": [1]}, "enumNames must hold strings only"),
    ({"type": "string", "enum": ["a"], "oneOf": [{"const": "a", "title": "A"}]}, "use either oneOf or enum"),
    ({"type": "string", "oneOf": []}, "oneOf must be a non-empty array"),
    (
        {"type": "string", "oneOf": [{"const": "a"}]},
        'each oneOf entry must be exactly {"const": ..., "title": ...}',
    ),
    ({"type": "string", "oneOf": [{"const": "a", "title": "A", "x": 1}]}, "each oneOf entry must be exactly"),
    (
        {"type": "string", "oneOf": [{"const": 1, "title": "A"}]},
        "oneOf entries need a string const and a string title",
    ),
    (
        {"type": "string", "oneOf": [{"const": "a", "title": "A"}, {"const": "a", "title": "B"}]},
        "option 'a' is listed twice",
    ),
    ({"type": "array"}, "an array must be a multi-select"),
    ({"type": "array", "items": {"type": "string"}}, "an array must be a multi-select"),
    ({"type": "array", "items": {"enum": ["a", 1]}}, "items.enum must hold strings only"),
    ({"type": "array", "items": {"type": "integer", "enum": ["a"]}}, "an array must be a multi-select"),
    ({"type": "array", "items": {"type": "object"}}, "an array must be a multi-select"),
    (
        {"type": "array", "items": {"type": "string", "enum": ["a"], "minLength": 1}},
        "an array must be a multi-select",
    ),
    (
        {"type": "array", "items": {"type": "number", "anyOf": [{"const": "a", "title": "A"}]}},
        "an array must be a multi-select",
    ),
    ({"type": "array", "items": [{"type": "string"}]}, "an array must be a multi-select"),
    (
        {"type": "array", "items": {"type": "string", "enum": []}},
        "items.enum must be a non-empty array of strings",
    ),
    ({"type": "array", "items": {"anyOf": [{"const": "a"}]}}, "each anyOf entry must be exactly"),
    (
        {"type": "array", "items": {"type": "string", "enum": ["a"]}, "uniqueItems": False},
        "uniqueItems can only be true",
    ),
    (
        {"type": "array", "items": {"type": "string", "enum": ["a"]}, "minItems": -1},
        "minItems must be a whole number",
    ),
    (
        {"type": "array", "items": {"type": "string", "enum": ["a"]}, "minItems": 2},
        "asks for at least 2 choices but offers only 1",
    ),
    (
        {"type": "array", "items": {"type": "string", "enum": ["a", "b"]}, "minItems": 2, "maxItems": 1},
        "the minimum number of choices 2 is greater than the maximum number of choices 1",
    ),
    (
        {"type": "array", "items": {"type": "string", "enum": ["a"]}, "default": "a"},
        "must be an array of option strings",
    ),
    (
        {"type": "array", "items": {"type": "string", "enum": ["a"]}, "default": [1]},
        "must be an array of option strings",
    ),
    (
        {"type": "array", "items": {"type": "string", "enum": ["a"]}, "default": ["b"]},
        "contains 'b', which is not one of: a",
    ),
    (
        {"type": "array", "items": {"type": "string", "enum": ["a"]}, "default": ["a", "a"]},
        "contains 'a' more than once",
    ),
    ({"type": "array", "items": {"type": "string", "enum": ["a"]}, "contains": {}}, "keyword 'contains'"),
]


@pytest.mark.parametrize(("prop", "message"), FIELD_REFUSALS)
def test_field_refusals_name_field_and_rule(prop: object, message: str) -> None:
    with pytest.raises(FormSchemaError) as caught:
        FormSchema.parse(form({"seats": prop}))
    assert caught.value.field == "seats"
    assert str(caught.value).startswith("field 'seats': ")
    assert message in str(caught.value)
    assert not isinstance(caught.value, SensitiveFieldError)


def test_unknown_keyword_message_lists_what_is_allowed() -> None:
    with pytest.raises(FormSchemaError) as caught:
        FormSchema.parse(form({"flag": {"type": "boolean", "const": True}}))
    assert "(in a boolean field, allowed: default, description, title, type)" in str(caught.value)


_HUGE = "x" * 1_000_000


@pytest.mark.parametrize(
    ("prop", "start"),
    [
        ({"type": "boolean", "default": _HUGE}, "the default must be true or false, not 'xxxx"),
        ({"type": "string", "default": [_HUGE]}, "the default must be a string, not an array (['xxxx"),
        (
            {"type": "string", "enum": ["a"], "default": [_HUGE]},
            "the default must be one of the option strings",
        ),
        ({"type": "string", "enum": [_HUGE, _HUGE]}, "option 'xxxx"),
        ({"type": "string", "enum": ["a", [_HUGE]]}, "enum must hold strings only, not an array"),
        ({"type": "string", "oneOf": [{"const": _HUGE}]}, 'each oneOf entry must be exactly {"const"'),
        ({"type": "string", "oneOf": [{"const": 1, "title": _HUGE}]}, "oneOf entries need a string const"),
        ({"type": "string", "format": _HUGE}, "format 'xxxx"),
        ({"type": _HUGE}, "type 'xxxx"),
        ({"type": "string", _HUGE: 1}, "keyword 'xxxx"),
        ({"type": "string", "minLength": _HUGE}, "minLength must be a whole number of 0 or more, not 'xxxx"),
        ({"type": "number", "minimum": _HUGE}, "minimum must be a finite number, not 'xxxx"),
        (
            {"type": "array", "items": {"enum": ["a"]}, "default": _HUGE},
            "the default of a multi-select must be an array of option strings",
        ),
        ({"type": "string", "maxLength": 3, "default": _HUGE}, "the default 'xxxx"),
    ],
)
def test_a_huge_value_in_a_refused_schema_is_shown_cut_short(prop: dict[str, Any], start: str) -> None:
    """A server's megabyte of text in a refused form is not repeated whole in the message."""
    with pytest.raises(FormSchemaError) as caught:
        FormSchema.parse({"type": "object", "properties": {"f": prop}})
    message = str(caught.value)
    assert message.startswith(f"field 'f': {start}")
    assert len(message) < 400, message[:500]
    assert re.search(r"… \([0-9]+ characters\)", message), message


def test_a_huge_unfit_default_a_reader_drops_is_told_cut_short() -> None:
    wire = {"type": "object", "properties": {"f": {"type": "string", "maxLength": 3, "default": _HUGE}}}
    (note,) = FormSchema.parse(wire, unfit_defaults="drop").dropped_defaults
    assert note.message.startswith("the default 'xxxx")
    assert len(note.message) < 400
