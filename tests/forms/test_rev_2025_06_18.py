"""A form in MCP 2025-06-18's words (forms/rev_2025_06_18.py): what 2025-11-25 added is
said the older way or left out, and a multi-select is named as what cannot be said."""

from __future__ import annotations

import pytest

from mcp_elicit.forms import Boolean, Choice, Form, FormSchema, Integer, MultiChoice, Number, String
from mcp_elicit.forms.rev_2025_06_18 import requested_schema, unsayable


def test_titled_choices_become_enum_names_and_only_a_boolean_keeps_its_default() -> None:
    form = Form(
        size=Choice({"s": "Small", "l": "Large"}, title="Size", default="l"),
        email=String(format="email", min_length=3, default="a@example.com", description="Where"),
        weight=Number(minimum=0.5, maximum=9, default=1.5, required=False),
        count=Integer(default=2),
        gift=Boolean(default=True, title="Gift?"),
        color=Choice(["red", "blue"], default="blue"),
    )
    assert unsayable(form) is None
    assert requested_schema(form) == {
        "type": "object",
        "properties": {
            "size": {"type": "string", "title": "Size", "enum": ["s", "l"], "enumNames": ["Small", "Large"]},
            "email": {"type": "string", "description": "Where", "minLength": 3, "format": "email"},
            "weight": {"type": "number", "minimum": 0.5, "maximum": 9},
            "count": {"type": "integer"},
            "gift": {"type": "boolean", "title": "Gift?", "default": True},
            "color": {"type": "string", "enum": ["red", "blue"]},
        },
        "required": ["size", "email", "count", "gift", "color"],
    }
    # the form itself, and what 2025-11-25 is sent, are untouched
    assert form.wire["properties"]["size"]["oneOf"][0] == {"const": "s", "title": "Small"}
    assert form.wire["properties"]["count"]["default"] == 2


def test_a_form_read_from_the_wire_in_either_words_is_said_the_same_way() -> None:
    said = {"type": "string", "enum": ["a", "b"], "enumNames": ["A", "B"]}
    modern = {"type": "string", "oneOf": [{"const": "a", "title": "A"}, {"const": "b", "title": "B"}]}
    for field in (said, modern):
        form = FormSchema.parse({"type": "object", "properties": {"pick": field}})
        assert requested_schema(form) == {"type": "object", "properties": {"pick": said}}


def test_a_multi_select_cannot_be_said() -> None:
    form = Form(name=String(), toppings=MultiChoice(["ham", "olives"]), more=MultiChoice(["x"]))
    found = unsayable(form)
    assert found is not None and found.name == "toppings"
    with pytest.raises(ValueError, match="field 'toppings' is a multi-select"):
        requested_schema(form)
