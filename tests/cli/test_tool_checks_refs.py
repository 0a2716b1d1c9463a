"""A ``$ref`` inside a tool's schema that points at nothing in that schema: a client that
compiles the schema (Ajv, a model host) cannot, so ``check`` names it as an error. Only
references within the schema (``#`` and ``#/...``) are followed; remote ones, and those
under a nested ``$id`` (another base), are left alone."""

from __future__ import annotations

from typing import Any

import pytest

from mcp_elicit.cli.tool_checks import check_tools

A = {"type": "string"}


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
    ],
    ids=["missing-def", "no-definitions", "missing-property", "past-a-leaf", "index-out-of-range"],
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
        {"type": "object", "properties": {"a": {"$id": "https://example.com/a", "$ref": "#/$defs/A"}}},
        {"type": "object", "properties": {"a": {"enum": [{"$ref": "#/nowhere"}]}}},
        {"type": "object", "properties": {"a": {"const": {"$ref": "#/nowhere"}, "default": {"$ref": "#/x"}}}},
        {"type": "object", "properties": {"$ref": A}},
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
        "nested-id",
        "enum-value",
        "const-and-default",
        "property-named-ref",
    ],
)
def test_references_that_resolve_or_are_not_followed_are_fine(schema: dict[str, Any]) -> None:
    assert _findings("inputSchema", schema) == []
