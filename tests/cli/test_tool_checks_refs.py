"""A ``$ref`` inside a tool's schema that points at nothing in that schema: a client that
compiles the schema (Ajv, a model host) cannot, so ``check`` names it as an error. Only
JSON Pointers (``#/...``) are followed, from the base a nested ``$id`` sets where the
dialect says so; anchors and other documents are left alone, and a ``$ref`` where the
dialect has no schema (data, unknown keywords) is no reference."""

from __future__ import annotations

from typing import Any

import pydantic
import pytest

from mcp_elicit.cli.schema_refs import dangling_refs
from mcp_elicit.cli.tool_checks import check_tools

A = {"type": "string"}
D7 = "http://json-schema.org/draft-07/schema#"


class _Leaf(pydantic.BaseModel):
    x: int


class _Node(pydantic.BaseModel):
    name: str
    children: list[_Node] = []
    leaf: _Leaf | None = None
    leaves: dict[str, _Leaf] = {}


class _Tree(pydantic.BaseModel):
    root: _Node
    pair: tuple[_Leaf, _Node]


def _findings(key: str, schema: dict[str, Any]) -> list[tuple[str, str, str]]:
    tool: dict[str, Any] = {"name": "t", "description": "A tool.", "inputSchema": {"type": "object"}}
    tool[key] = schema
    [verdict] = check_tools([tool], "2025-11-25")
    return [(f.severity, f.code, f.message) for f in verdict.findings]


def _with(ref: str, **extra: Any) -> dict[str, Any]:
    return {"type": "object", "properties": {"a": {"$ref": ref}}, **extra}


@pytest.mark.parametrize("key", ["inputSchema", "outputSchema"])
@pytest.mark.parametrize(
    ("schema", "target"),
    [
        (_with("#/$defs/missing", **{"$defs": {"A": A}}), "#/$defs/missing"),
        (_with("#/definitions/A"), "#/definitions/A"),
        (_with("#/properties/b"), "#/properties/b"),
        (_with("#/$defs/A/items", **{"$defs": {"A": A}}), "#/$defs/A/items"),
        (_with("#/allOf/3", allOf=[A]), "#/allOf/3"),
        (_with("#/allOf/x", allOf=[A]), "#/allOf/x"),
        (
            _with("#/$defs/A/type/x", **{"$defs": {"A": {"type": "integer", "minimum": 1}}}),
            "#/$defs/A/type/x",
        ),
        (
            _with("#/$defs/A/minimum/x", **{"$defs": {"A": {"type": "integer", "minimum": 1}}}),
            "#/$defs/A/minimum/x",
        ),
        (
            {
                "type": "object",
                "properties": {"a": {"$id": "https://example.com/a", "$ref": "#/$defs/A"}},
                "$defs": {"A": A},
            },
            "#/$defs/A",
        ),
    ],
    ids=[
        "missing-def",
        "no-definitions",
        "missing-property",
        "past-a-leaf",
        "index-out-of-range",
        "name-for-an-index",
        "name-in-a-string",
        "name-in-a-number",
        "relative-to-a-nested-id",
    ],
)
def test_a_reference_to_nothing_in_the_schema_is_an_error(
    key: str, schema: dict[str, Any], target: str
) -> None:
    code = "input-schema" if key == "inputSchema" else "output-schema"
    [(severity, found, message)] = _findings(key, schema)
    assert (severity, found) == ("error", code)
    assert f"{key}.properties.a" in message and repr(target) in message and "points to nothing" in message


@pytest.mark.parametrize(
    "schema",
    [
        _with("#/$defs/A", **{"$defs": {"A": A}}),
        _with("#/definitions/A", definitions={"A": A}),
        _with("#"),
        _with("#/$defs/a~1b", **{"$defs": {"a/b": A}}),
        _with("#/$defs/a~0b", **{"$defs": {"a~b": A}}),
        _with("#/$defs/a%20b", **{"$defs": {"a b": A}}),
        _with("#/allOf/0", allOf=[A]),
        _with("https://example.com/schemas/a.json"),
        _with("#anchor", **{"$defs": {"A": {**A, "$anchor": "anchor"}}}),
        {"type": "object", "properties": {"a": {"enum": [{"$ref": "#/nowhere"}]}}},
        {"type": "object", "properties": {"a": {"const": {"$ref": "#/nowhere"}, "default": {"$ref": "#/x"}}}},
        {"type": "object", "properties": {"$ref": A}},
        {"type": "object", "properties": {"a": {**A, "example": {"$ref": "#/nowhere"}}}},
        {"type": "object", "x-openapi": {"$ref": "#/components/schemas/A"}},
        {"$schema": D7, "type": "object", "x": {"$ref": "#/nowhere"}},
        {"$schema": D7, "type": "object", "items": [A, {"$ref": "#/items/0"}]},
        {
            "$schema": D7,
            "type": "object",
            "definitions": {"A": A},
            "properties": {"a": {"$id": "b", "$ref": "#/definitions/A"}},
        },
        {
            "type": "object",
            "properties": {"a": {"$id": "https://example.com/a", "$defs": {"A": A}, "$ref": "#/$defs/A"}},
        },
        {
            "$id": "https://example.com/s",
            "$ref": "#/$defs/O",
            "$defs": {"O": {"type": "object"}},
            "type": "object",
        },
        {"type": "object", **_Node.model_json_schema()},
        _Tree.model_json_schema(),
    ],
    ids=[
        "defs",
        "definitions",
        "root",
        "escaped-slash",
        "escaped-tilde",
        "percent-encoded",
        "index",
        "remote",
        "anchor",
        "enum-value",
        "const-and-default",
        "property-named-ref",
        "openapi-example",
        "extension-keyword",
        "unknown-keyword-draft-07",
        "items-array-draft-07",
        "draft-07-ignores-id-beside-ref",
        "defs-under-nested-id",
        "ref-beside-id-at-root",
        "pydantic-recursive",
        "pydantic-nested",
    ],
)
def test_references_that_resolve_or_are_not_followed_are_fine(schema: dict[str, Any]) -> None:
    assert _findings("inputSchema", schema) == []


def test_a_schema_its_dialect_refuses_is_left_to_the_meta_schema_check() -> None:
    refused = {"type": "object", "items": [A, {"$ref": "#/nowhere"}]}  # a list: 2020-12 wants a schema
    assert dangling_refs(refused, "inputSchema") == []
    [(severity, code, message)] = _findings("inputSchema", refused)
    assert (severity, code) == ("error", "input-schema") and "not a valid JSON Schema" in message
