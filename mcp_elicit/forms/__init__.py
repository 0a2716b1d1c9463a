"""The flat form-schema subset of MCP elicitation: build, parse, validate, guard secrets.

A :class:`FormSchema` is built from the wire (``FormSchema.parse``), from a dataclass,
TypedDict or pydantic model (``FormSchema.from_type``), or by hand (``Form(...)`` with
:class:`String`, :class:`Integer`, :class:`Number`, :class:`Boolean`, :class:`Choice`,
:class:`MultiChoice`). It refuses anything outside the subset, and fields that ask for
secrets (those belong in URL mode), when it is defined; then it validates answers,
fills defaults and builds the Python value.

Layer rule: this package imports only the standard library, ``mcp_elicit.errors`` and
(when the caller already uses it) pydantic. No I/O, no asyncio.
"""

from __future__ import annotations

from mcp_elicit.forms.fields import (
    Boolean,
    Choice,
    FieldKind,
    FieldSpec,
    Integer,
    MultiChoice,
    Number,
    Option,
    String,
    StringFormat,
)
from mcp_elicit.forms.metadata import Field
from mcp_elicit.forms.schema import Form, FormSchema, SchemaLike
from mcp_elicit.forms.secrets import SecretFinding, find_secret_fields

__all__ = [
    "Boolean",
    "Choice",
    "Field",
    "FieldKind",
    "FieldSpec",
    "Form",
    "FormSchema",
    "Integer",
    "MultiChoice",
    "Number",
    "Option",
    "SchemaLike",
    "SecretFinding",
    "String",
    "StringFormat",
    "find_secret_fields",
]
