"""A pydantic field's ``json_schema_extra`` is refused in a form, never silently dropped.

``pydantic.Field(json_schema_extra={"format": "email"})`` is how pydantic users give a
field a format. The form subset does not read it, so before this the format vanished: the
form asked for plain text and "nope" came back as the "email". It is refused instead,
naming the field and saying how to give a format.
"""

from __future__ import annotations

from typing import Annotated

import pydantic
import pydantic.dataclasses
import pytest

from mcp_elicit.errors import FormSchemaError
from mcp_elicit.forms import Field, FormSchema, String


class ModelLevel(pydantic.BaseModel):
    email: str = pydantic.Field(json_schema_extra={"format": "email"})


class InAnnotated(pydantic.BaseModel):
    site: Annotated[str, pydantic.Field(json_schema_extra={"format": "uri"})]


@pydantic.dataclasses.dataclass
class InDataclass:
    email: str = pydantic.Field(json_schema_extra={"format": "email"})


class Documented(pydantic.BaseModel):
    email: Annotated[str, Field(format="email")] = pydantic.Field(description="Where we write")


@pytest.mark.parametrize(
    ("cls", "field"), [(ModelLevel, "email"), (InAnnotated, "site"), (InDataclass, "email")]
)
def test_json_schema_extra_is_refused_naming_the_field_and_the_way(cls: type, field: str) -> None:
    with pytest.raises(FormSchemaError) as caught:
        FormSchema.from_type(cls)
    assert caught.value.field == field
    message = str(caught.value)
    assert "json_schema_extra" in message
    assert "Field(format=" in message


def test_the_way_it_names_gives_the_format() -> None:
    schema = FormSchema.from_type(Documented)
    assert schema.fields == (String(name="email", description="Where we write", format="email"),)


@pytest.mark.parametrize(
    "extra",
    [
        {},
        {"examples": ["ada@example.com"]},
        {"example": "ada@example.com"},  # pydantic 2 puts Field(example=...) here (FastAPI models)
        {"$comment": "kept in the CRM too", "deprecated": False},
    ],
)
def test_json_schema_extra_saying_nothing_a_form_asks_or_checks_is_accepted(extra: dict[str, object]) -> None:
    # the same keys the form subset accepts and drops on a wire schema's field: examples
    # document a field, they neither change what is asked nor what is checked
    class Examples(pydantic.BaseModel):
        email: str = pydantic.Field(description="Where we write", json_schema_extra=extra)

    schema = FormSchema.from_type(Examples)
    assert schema.fields == (String(name="email", description="Where we write"),)


def test_json_schema_extra_refusal_names_what_a_form_would_drop() -> None:
    class Mixed(pydantic.BaseModel):
        email: str = pydantic.Field(json_schema_extra={"examples": ["a@b.c"], "format": "email"})

    with pytest.raises(FormSchemaError) as caught:
        FormSchema.from_type(Mixed)
    assert "'format'" in str(caught.value)
    assert "'examples'" not in str(caught.value)
